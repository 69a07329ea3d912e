//! JSON readers (cards, world info, presets, regex, Tavo native): never panic; whatever imports
//! exports in its own format and imports again.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tavo_formats::{
    ExportFormat, Imported, export_character, export_lorebook, export_preset, export_regex,
    import_bytes,
};

fuzz_target!(|data: &[u8]| {
    let Ok(out) = import_bytes(data, "fuzz.json", None) else {
        return;
    };
    let bytes = match &out.imported {
        Imported::Character {
            character,
            lorebook,
            regex,
            ..
        } => export_character(
            character,
            lorebook.as_ref(),
            regex.as_ref(),
            None,
            ExportFormat::Ccv3Json,
        ),
        Imported::Lorebook(b) => export_lorebook(b, ExportFormat::St),
        Imported::Preset { preset, regex } => {
            export_preset(preset, regex.as_ref(), ExportFormat::St)
        }
        Imported::Regex(r) => export_regex(r, ExportFormat::St),
        _ => return,
    };
    if let Ok(bytes) = bytes {
        assert!(import_bytes(&bytes, "again.json", None).is_ok());
    }
});
