//! EJS templates (tavo-prompt's parser): any field text parses or is refused with an offset
//! inside the text, never a panic; whatever parses compiles to a function body, and the text
//! outside tags survives in the segments.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tavo_prompt::ejs::{compile, has_template, parse};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse(text) {
        Ok(segments) => {
            let body = compile(&segments);
            assert!(body.ends_with("return __out;\n"));
        }
        Err(e) => {
            assert!(e.offset < text.len());
            assert!(has_template(text));
        }
    }
});
