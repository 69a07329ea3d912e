//! PNG reader: any bytes (after the PNG signature) must give a card or an error, never a panic,
//! and a card that reads must export to PNG and read back.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tavo_formats::{ExportFormat, Imported, export_character, import_bytes, png};

fuzz_target!(|data: &[u8]| {
    // Whole PNG files (the seed corpus) are taken as they are; other inputs get the
    // signature, so that mutations spend their time past it.
    let input = if data.starts_with(&png::SIGNATURE) {
        data.to_vec()
    } else {
        let mut input = png::SIGNATURE.to_vec();
        input.extend_from_slice(data);
        input
    };
    if let Ok(out) = import_bytes(&input, "fuzz.png", None)
        && let Imported::Character {
            character,
            avatar,
            lorebook,
            regex,
            ..
        } = out.imported
        && let Ok(bytes) = export_character(
            &character,
            lorebook.as_ref(),
            regex.as_ref(),
            avatar.as_deref(),
            ExportFormat::Png,
        )
    {
        assert!(import_bytes(&bytes, "again.png", None).is_ok());
    }
});
