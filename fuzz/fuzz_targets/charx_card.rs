//! charx reader: arbitrary zip bytes must never panic or inflate without bound.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tavo_formats::import_bytes;

fuzz_target!(|data: &[u8]| {
    let mut input = b"PK\x03\x04".to_vec();
    input.extend_from_slice(data);
    let _ = import_bytes(&input, "fuzz.charx", None);
    let _ = import_bytes(data, "fuzz.charx", None);
});
