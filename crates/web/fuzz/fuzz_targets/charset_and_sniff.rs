//! Any bytes as a document of every kind, with and without a declared charset: decoding,
//! sniffing and conversion must not panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tavo_web::fuzz_support::document(data, Some("windows-1252"));
    tavo_web::fuzz_support::document(data, None);
});
