use super::*;

#[test]
fn every_kind_defaults_to_a_format_it_supports() {
    for kind in AssetKind::ALL {
        let f = default_export_format(kind);
        assert!(export_formats(kind).contains(&f), "{kind}");
        assert_eq!(export_format_for(kind, None), Ok(f));
        assert_eq!(export_format_for(kind, Some("  ")), Ok(f));
    }
    assert_eq!(
        default_export_format(AssetKind::Character),
        ExportFormat::Png
    );
    assert_eq!(default_export_format(AssetKind::Chat), ExportFormat::Jsonl);
    let e = export_format_for(AssetKind::Character, Some("jsonl")).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArguments);
    assert!(e.message.contains("png | ccv3-json"), "{}", e.message);
    let e = export_format_for(AssetKind::Lorebook, Some("nope")).unwrap_err();
    assert_eq!(
        e.details.as_ref().map(|d| &d["path"]),
        Some(&json!("format"))
    );
}

#[test]
fn unreadable_files_name_the_file_and_path_in_the_envelope() {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open(dir.path()).expect("store");
    let bad = br#"{"spec":"chara_card_v3","data":{"name":"X","first_mes":"hi","character_book":{"entries":[{"keys":5}]}}}"#;
    let e = import_file(&store, bad, "w.json", None).unwrap_err();
    let t = e.into_tool_error();
    assert_eq!(t.code, ErrorCode::InvalidArguments);
    assert!(
        t.message.starts_with("w.json: data.character_book"),
        "{}",
        t.message
    );
    let d = t.details.expect("details");
    assert_eq!(d["file"], "w.json");
    assert_eq!(d["path"], "data.character_book.entries[0].keys");
    let e = import_value(
        &store,
        "card",
        &serde_json::from_slice(bad).expect("json"),
        AssetKind::Character,
    )
    .unwrap_err();
    assert_eq!(
        e.details.expect("details")["path"],
        "card.data.character_book.entries[0].keys"
    );
    assert!(
        store
            .list::<tavo_model::Character>()
            .expect("list")
            .is_empty()
    );
}

#[test]
fn a_webp_charx_avatar_is_stored_with_its_type_and_exported_back() {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open(dir.path()).expect("store");
    let webp = b"RIFF\x1a\0\0\0WEBPVP8 \x0e\0\0\0not-really-pixels".to_vec();
    let character = tavo_model::Character {
        name: "Risu".into(),
        first_mes: "x".into(),
        ..Default::default()
    };
    let charx =
        tavo_formats::export_character(&character, None, None, Some(&webp), ExportFormat::Charx)
            .expect("charx");
    let imported = import_file(&store, &charx, "risu.charx", None).expect("import");
    assert!(imported.warnings.is_empty(), "{:?}", imported.warnings);
    let id = imported.main_id().expect("id");
    let avatar = store
        .character_avatar_get(tavo_model::CharacterId(id))
        .expect("read")
        .expect("an avatar");
    assert_eq!(
        (avatar.mime_type.as_str(), avatar.bytes.as_slice()),
        ("image/webp", webp.as_slice())
    );
    let exported =
        export_asset(&store, AssetKind::Character, id, Some(ExportFormat::Charx)).expect("export");
    let back = tavo_formats::import_bytes(&exported.bytes, "back.charx", None).expect("read");
    let Imported::Character { avatar, .. } = back.imported else {
        panic!("a character");
    };
    assert_eq!(avatar, Some(webp));
}

#[test]
fn charx_assets_are_kept_as_card_files_and_written_back() {
    use std::io::{Read as _, Write as _};
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open(dir.path()).expect("store");
    let card = br#"{"spec":"chara_card_v3","data":{"name":"Risu","first_mes":"x","assets":[{"type":"emotion","uri":"embeded://assets/other/image/smile.png","name":"smile","ext":"png"}]}}"#;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for (name, bytes) in [
        ("card.json", card.as_slice()),
        ("assets/other/image/smile.png", b"smile".as_slice()),
        ("x_meta/smile.json", b"{}".as_slice()),
    ] {
        w.start_file(name, opts).expect("start");
        w.write_all(bytes).expect("write");
    }
    let charx = w.finish().expect("zip").into_inner();
    let imported = import_file(&store, &charx, "risu.charx", None).expect("import");
    let id = imported.main_id().expect("id");
    let on_disk = dir
        .path()
        .join(format!("files/character/{id}/assets/other/image/smile.png"));
    assert_eq!(std::fs::read(&on_disk).expect("stored"), b"smile");
    let exported =
        export_asset(&store, AssetKind::Character, id, Some(ExportFormat::Charx)).expect("export");
    let mut a = zip::ZipArchive::new(std::io::Cursor::new(exported.bytes)).expect("zip");
    let mut smile = Vec::new();
    a.by_name("assets/other/image/smile.png")
        .expect("member")
        .read_to_end(&mut smile)
        .expect("read");
    assert_eq!(smile, b"smile");
    assert!(a.by_name("x_meta/smile.json").is_ok());
    assert!(
        store
            .asset_delete(AssetKind::Character, id)
            .expect("delete")
    );
    assert!(!on_disk.exists(), "deleted with the character");
}
