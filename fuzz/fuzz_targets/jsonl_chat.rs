//! SillyTavern chat reader: never panics; what imports exports as JSONL and imports again.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tavo_formats::{ExportFormat, ImportKind, Imported, export_chat, import_bytes};

fuzz_target!(|data: &[u8]| {
    if let Ok(out) = import_bytes(data, "fuzz.jsonl", Some(ImportKind::Chat))
        && let Imported::Chat(c) = out.imported
        && let Ok(bytes) = export_chat(&c.chat, &c.messages, ExportFormat::Jsonl)
    {
        assert!(import_bytes(&bytes, "again.jsonl", Some(ImportKind::Chat)).is_ok());
    }
});
