//! A charx card's assets survive import → export: the same archive members with the same bytes,
//! and the same card `assets` list (`embeded://` URIs into the archive).

use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{Cursor, Read, Write};
use tavo_formats::charx::CharxAsset;
use tavo_formats::{ExportFormat, Imported, export_character_with_assets, import_bytes};

fn zip_of(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for (name, bytes) in members {
        w.start_file(*name, opts).expect("start");
        w.write_all(bytes).expect("write");
    }
    w.finish().expect("finish").into_inner()
}

fn members_of(zip_bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut a = zip::ZipArchive::new(Cursor::new(zip_bytes)).expect("zip");
    let mut out = BTreeMap::new();
    for i in 0..a.len() {
        let mut f = a.by_index(i).expect("member");
        let mut b = Vec::new();
        f.read_to_end(&mut b).expect("read");
        out.insert(f.name().map(|n| n.into_owned()).expect("name"), b);
    }
    out
}

fn card_assets(card_json: &[u8]) -> Value {
    let v: Value = serde_json::from_slice(card_json).expect("card.json");
    v["data"]["assets"].clone()
}

/// Import, then export as charx with what the import returned.
fn round_trip(charx: &[u8]) -> (Vec<u8>, Vec<CharxAsset>) {
    let out = import_bytes(charx, "in.charx", None).expect("import");
    let Imported::Character {
        character,
        avatar,
        lorebook,
        regex,
        assets,
    } = out.imported
    else {
        panic!("a character");
    };
    let bytes = export_character_with_assets(
        &character,
        lorebook.as_ref(),
        regex.as_ref(),
        avatar.as_deref(),
        &assets,
        ExportFormat::Charx,
    )
    .expect("export");
    (bytes, assets)
}

const WEBP: &[u8] = b"RIFF\x1a\0\0\0WEBPVP8 \x0e\0\0\0not-really-pixels";

#[test]
fn risu_layout_round_trips_member_for_member() {
    let assets = json!([
        {"type": "icon", "uri": "embeded://assets/icon/image/1.webp", "name": "main", "ext": "webp"},
        {"type": "emotion", "uri": "embeded://assets/other/image/smile.webp", "name": "smile", "ext": "webp"},
        {"type": "background", "uri": "embedded://assets/background/image/room.webp", "name": "room", "ext": "webp"},
        {"type": "other", "uri": "__asset:assets/other/misc/theme.css", "name": "theme", "ext": "css"},
        {"type": "icon", "uri": "ccdefault:", "name": "fallback", "ext": "png"}
    ]);
    let card = serde_json::to_vec(&json!({
        "spec": "chara_card_v3", "spec_version": "3.0",
        "data": {"name": "Risu", "first_mes": "hi", "assets": assets}
    }))
    .expect("card");
    let members: Vec<(&str, &[u8])> = vec![
        ("card.json", &card),
        ("assets/icon/image/1.webp", WEBP),
        ("assets/other/image/smile.webp", b"smile-bytes"),
        ("assets/background/image/room.webp", b"room-bytes"),
        ("assets/other/misc/theme.css", b"body{}"),
        ("x_meta/1.json", br#"{"type":"WEBP"}"#),
        ("x_meta/smile.json", br#"{"type":"WEBP"}"#),
        ("module.risum", b"\x00\x01binary module"),
    ];
    let charx = zip_of(&members);
    let out = import_bytes(&charx, "risu.charx", None).expect("import");
    assert!(
        out.warnings.iter().all(|w| w.code != "charx.assets"),
        "{:?}",
        out.warnings
    );
    let (exported, assets_read) = round_trip(&charx);
    assert_eq!(
        assets_read.len(),
        6,
        "every member but card.json and the avatar"
    );
    let before = members_of(&charx);
    let after = members_of(&exported);
    let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&before), names(&after));
    for (name, bytes) in &before {
        if name != "card.json" {
            assert_eq!(&after[name], bytes, "{name}");
        }
    }
    assert_eq!(card_assets(&after["card.json"]), assets);
    // And once more: export of the export is the same archive content.
    let (again, _) = round_trip(&exported);
    assert_eq!(members_of(&again), after);
}

#[test]
fn an_avatar_of_another_type_than_its_path_goes_to_the_default_place() {
    // The card names a PNG main icon, but the bytes there are WebP: the avatar is written at
    // `assets/icon/image/main.webp` and listed in front; the rest stays where it was.
    let card = serde_json::to_vec(&json!({
        "spec": "chara_card_v3", "spec_version": "3.0",
        "data": {"name": "X", "first_mes": "hi", "assets": [
            {"type": "icon", "uri": "embeded://assets/icon/image/1.png", "name": "main", "ext": "png"}
        ]}
    }))
    .expect("card");
    let charx = zip_of(&[
        ("card.json", &card),
        ("assets/icon/image/1.png", WEBP),
        ("x_meta/1.json", b"{}"),
    ]);
    let (exported, _) = round_trip(&charx);
    let after = members_of(&exported);
    assert_eq!(after["assets/icon/image/main.webp"], WEBP);
    assert_eq!(after["x_meta/1.json"], b"{}");
    let list = card_assets(&after["card.json"]);
    assert_eq!(list[0]["uri"], "embeded://assets/icon/image/main.webp");
}

#[test]
fn unsafe_member_paths_are_warned_and_never_kept() {
    let card = br#"{"spec":"chara_card_v3","data":{"name":"X","first_mes":"hi"}}"#;
    let charx = zip_of(&[
        ("card.json", card),
        ("../evil.png", b"x"),
        ("assets/a:b.png", b"x"),
        ("ok/a.png", b"x"),
    ]);
    let out = import_bytes(&charx, "x.charx", None).expect("import");
    let Imported::Character { assets, .. } = out.imported else {
        panic!()
    };
    assert_eq!(
        assets.iter().map(|a| a.path.as_str()).collect::<Vec<_>>(),
        vec!["ok/a.png"]
    );
    assert_eq!(
        out.warnings
            .iter()
            .filter(|w| w.code == "charx.unsafe-path")
            .count(),
        2,
        "{:?}",
        out.warnings
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn any_asset_set_round_trips(
        files in proptest::collection::btree_map(
            "(assets/(other|background)/image|x_meta|modules)/[a-z0-9가-힣_.-]{1,12}",
            proptest::collection::vec(any::<u8>(), 0..64),
            0..8,
        )
    ) {
        let files: BTreeMap<String, Vec<u8>> = files
            .into_iter()
            .filter(|(p, _)| tavo_formats::charx::is_safe_asset_path(p))
            .collect();
        let list: Vec<Value> = files.keys().map(|p| json!({"type": "other", "uri": format!("embeded://{p}"), "name": p, "ext": "bin"})).collect();
        let card = serde_json::to_vec(&json!({
            "spec": "chara_card_v3", "spec_version": "3.0",
            "data": {"name": "P", "first_mes": "hi", "assets": list}
        })).expect("card");
        let mut members: Vec<(&str, &[u8])> = vec![("card.json", &card)];
        members.extend(files.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
        let charx = zip_of(&members);
        let (exported, _) = round_trip(&charx);
        let mut after = members_of(&exported);
        let card_after = after.remove("card.json").expect("card.json");
        prop_assert_eq!(after, files);
        prop_assert_eq!(card_assets(&card_after), Value::Array(list));
    }
}
