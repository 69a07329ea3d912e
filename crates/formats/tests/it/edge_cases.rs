//! Hand-written fixtures for each tolerated oddity and each refusal (`tests/data/`), plus PNG
//! and charx edge cases built in code.

use base64::Engine as _;
use serde_json::{Value, json};
use std::path::Path;
use tavo_formats::{
    ExportFormat, Imported, export_character, export_chat, export_lorebook, export_preset,
    export_regex, import_bytes,
};
use tavo_model::{
    AssetKind, LorebookPosition, RegexPlacement, RegexTiming, Role, SecondaryKeywordStrategy,
    Substitution,
};

fn data(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .expect("fixture")
}

fn codes(out: &tavo_formats::ImportOutcome) -> Vec<String> {
    out.warnings.iter().map(|w| w.code.clone()).collect()
}

/// Each fixture: the kind it must import as, and warning codes that must be reported.
const FIXTURES: &[(&str, AssetKind, &[&str])] = &[
    (
        "card-bom-v2.json",
        AssetKind::Character,
        &["encoding.bom", "value.coerced"],
    ),
    ("card-v1.json", AssetKind::Character, &["card.v1"]),
    (
        "card-numbers-as-strings.json",
        AssetKind::Character,
        &["value.coerced"],
    ),
    (
        "worldinfo-original-data.json",
        AssetKind::Lorebook,
        &["lorebook.position"],
    ),
    ("chat-crlf.jsonl", AssetKind::Chat, &[]),
    ("chat-header-only.jsonl", AssetKind::Chat, &[]),
    ("chat-empty.jsonl", AssetKind::Chat, &["chat.empty"]),
    ("regex-array.json", AssetKind::Regex, &[]),
    ("regex-tavojs-import.json", AssetKind::Regex, &[]),
    ("preset-no-order.json", AssetKind::Preset, &[]),
];

fn export_main(imp: &Imported, f: ExportFormat) -> Vec<u8> {
    match imp {
        Imported::Character {
            character,
            avatar,
            lorebook,
            regex,
            ..
        } => {
            let cf = if f == ExportFormat::Tavo {
                f
            } else {
                ExportFormat::Ccv3Json
            };
            export_character(
                character,
                lorebook.as_ref(),
                regex.as_ref(),
                avatar.as_deref(),
                cf,
            )
            .expect("export")
        }
        Imported::Lorebook(b) => export_lorebook(b, f).expect("export"),
        Imported::Preset { preset, regex } => {
            export_preset(preset, regex.as_ref(), f).expect("export")
        }
        Imported::Regex(r) => export_regex(r, f).expect("export"),
        Imported::Chat(c) => export_chat(
            &c.chat,
            &c.messages,
            if f == ExportFormat::Tavo {
                f
            } else {
                ExportFormat::Jsonl
            },
        )
        .expect("export"),
        Imported::Persona(p) => {
            tavo_formats::export_persona(p, ExportFormat::Tavo).expect("export")
        }
        Imported::Personas(_) | Imported::Group(_) => {
            panic!("SillyTavern settings and groups have no export")
        }
    }
}

#[test]
fn fixtures_import_with_expected_warnings_and_round_trip() {
    for (file, kind, want) in FIXTURES {
        let out = import_bytes(&data(file), file, None).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(out.imported.kind(), *kind, "{file}");
        let got = codes(&out);
        for w in *want {
            assert!(
                got.iter().any(|g| g == w),
                "{file}: missing warning {w}, got {got:?}"
            );
        }
        for f in [ExportFormat::St, ExportFormat::Tavo] {
            let first = export_main(&out.imported, f);
            let again = import_bytes(
                &first,
                if *kind == AssetKind::Chat && f != ExportFormat::Tavo {
                    "x.jsonl"
                } else {
                    "x.json"
                },
                None,
            )
            .unwrap_or_else(|e| panic!("{file} ({f}): {e}"));
            assert_eq!(again.imported.kind(), *kind);
            assert_eq!(
                export_main(&again.imported, f),
                first,
                "{file}: {f} export is not a fixpoint"
            );
        }
    }
}

#[test]
fn bad_entry_is_refused_naming_file_and_path() {
    let e = import_bytes(
        &data("card-bad-book-entry.json"),
        "card-bad-book-entry.json",
        None,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "card-bad-book-entry.json: data.character_book.entries[1].secondary_keys: expected an array of strings, found an object"
    );
}

#[test]
fn numbers_as_strings_are_read() {
    let out = import_bytes(&data("card-numbers-as-strings.json"), "n.json", None).expect("import");
    let Imported::Character {
        character,
        lorebook,
        ..
    } = out.imported
    else {
        panic!()
    };
    assert_eq!(character.alternate_greetings, vec!["a", "2"]);
    assert!(character.creation_date.is_some());
    let e = &lorebook.expect("book").entries[0];
    assert_eq!((e.order, e.injection_depth, e.probability), (5, 2, 50));
    assert_eq!(e.injection_position, LorebookPosition::AtDepth);
    assert_eq!(e.injection_role, Role::User);
    assert_eq!(e.keywords, vec!["k", "1"]);
}

#[test]
fn world_info_mapping_and_lossy_positions() {
    let out =
        import_bytes(&data("worldinfo-original-data.json"), "Dragons.json", None).expect("import");
    let Imported::Lorebook(b) = out.imported else {
        panic!()
    };
    assert_eq!(b.name, "Dragons");
    assert!(b.extra.contains_key("originalData"));
    let d = &b.entries[0];
    assert_eq!(
        d.secondary_keyword_strategy,
        SecondaryKeywordStrategy::AndAll
    );
    assert_eq!(
        (d.scan_depth, d.probability, d.match_whole_word),
        (2, 100, true)
    );
    assert_eq!(d.order, 50);
    let inn = &b.entries[1];
    assert_eq!(
        inn.secondary_keyword_strategy,
        SecondaryKeywordStrategy::None
    );
    let st: Value =
        serde_json::from_slice(&export_lorebook(&b, ExportFormat::St).expect("st")).expect("json");
    assert_eq!(st["entries"]["7"]["position"], json!(2));
    assert_eq!(st["entries"]["7"]["group"], json!("beasts"));
    assert_eq!(st["entries"]["9"]["position"], json!(7));
    assert_eq!(st["entries"]["9"]["selectiveLogic"], json!(2));
    assert_eq!(st["entries"]["9"]["outletName"], json!("places"));
}

#[test]
fn regex_group_shapes() {
    let out = import_bytes(&data("regex-array.json"), "regex-pack.json", None).expect("import");
    let Imported::Regex(g) = out.imported else {
        panic!()
    };
    assert_eq!(g.name, "regex-pack");
    assert_eq!(g.entries[0].timing, RegexTiming::Display);
    assert_eq!(g.entries[0].substitution, Substitution::Raw);
    assert_eq!(g.entries[1].placements, vec![RegexPlacement::Lorebook]);
    assert!(!g.entries[1].enabled);
    let out = import_bytes(&data("regex-tavojs-import.json"), "r.json", None).expect("import");
    let Imported::Regex(g) = out.imported else {
        panic!()
    };
    assert_eq!(g.name, "高亮处理");
    assert_eq!(g.entries[0].name, "高亮");
}

#[test]
fn preset_without_order_and_embedded_regex() {
    let out = import_bytes(&data("preset-no-order.json"), "p.json", None).expect("import");
    let Imported::Preset { preset, regex } = out.imported else {
        panic!()
    };
    assert_eq!(preset.name, "Bare");
    assert_eq!(preset.basic_prompts.continue_nudge, "[go on]");
    assert_eq!(preset.basic_prompts.chat_start, "[Start a new Chat]");
    assert!(!preset.entries[0].enabled);
    assert_eq!(regex.map(|r| r.entries[0].timing), Some(RegexTiming::Send));
}

#[test]
fn chats_crlf_header_only_and_empty() {
    let out = import_bytes(&data("chat-crlf.jsonl"), "c.jsonl", None).expect("import");
    let Imported::Chat(c) = out.imported else {
        panic!()
    };
    assert_eq!(c.user_name.as_deref(), Some("Ann"));
    assert_eq!(c.character_names, vec!["Bob"]);
    assert_eq!(c.messages[0].content, "hi\r\nthere");
    assert_eq!(c.messages[1].reasoning.as_deref(), Some("hmm"));
    assert!(c.messages[1].extra.contains_key("swipes_info"));
    let out = import_bytes(&data("chat-header-only.jsonl"), "h.jsonl", None).expect("import");
    let Imported::Chat(c) = out.imported else {
        panic!()
    };
    assert!(c.messages.is_empty());
    assert_eq!(c.user_name, None);
    // A header-only file is also recognised without the .jsonl extension.
    assert_eq!(
        import_bytes(&data("chat-header-only.jsonl"), "h.out", None)
            .expect("import")
            .imported
            .kind(),
        AssetKind::Chat
    );
}

// ---------------------------------------------------------------- PNG

fn b64(v: &Value) -> String {
    base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(v).expect("json"))
}

fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut h = crc32fast::Hasher::new();
    h.update(kind);
    h.update(data);
    out.extend_from_slice(&h.finalize().to_be_bytes());
    out
}

/// The placeholder image with extra chunks spliced before IEND.
fn png_with(extra: &[Vec<u8>]) -> Vec<u8> {
    let img = tavo_formats::png::placeholder_png().expect("png");
    let iend = img.len() - 12;
    let mut out = img[..iend].to_vec();
    for c in extra {
        out.extend_from_slice(c);
    }
    out.extend_from_slice(&img[iend..]);
    out
}

fn text_chunk(keyword: &str, text: &str) -> Vec<u8> {
    chunk(
        b"tEXt",
        &[keyword.as_bytes(), b"\0", text.as_bytes()].concat(),
    )
}

fn name_of(bytes: &[u8]) -> String {
    match import_bytes(bytes, "card.png", None)
        .expect("import")
        .imported
    {
        Imported::Character { character, .. } => character.name,
        other => panic!("not a character: {:?}", other.kind()),
    }
}

#[test]
fn png_ccv3_wins_over_chara_and_v1_chara_is_read() {
    let v2 =
        json!({"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Two","first_mes":"x"}});
    let v3 = json!({"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Three","first_mes":"x"}});
    assert_eq!(
        name_of(&png_with(&[
            text_chunk("chara", &b64(&v2)),
            text_chunk("ccv3", &b64(&v3))
        ])),
        "Three"
    );
    assert_eq!(
        name_of(&png_with(&[
            text_chunk("ccv3", &b64(&v3)),
            text_chunk("chara", &b64(&v2))
        ])),
        "Three"
    );
    let v1 = json!({"name":"One","description":"d","first_mes":"x"});
    assert_eq!(name_of(&png_with(&[text_chunk("Chara", &b64(&v1))])), "One");
    // Raw JSON instead of base64 is tolerated.
    assert_eq!(
        name_of(&png_with(&[text_chunk("chara", &v2.to_string())])),
        "Two"
    );
    // A broken ccv3 falls back to chara with a warning.
    let out = import_bytes(
        &png_with(&[text_chunk("ccv3", "!!!"), text_chunk("chara", &b64(&v2))]),
        "c.png",
        None,
    )
    .expect("import");
    assert!(codes(&out).contains(&"png.ccv3-unreadable".to_owned()));
}

#[test]
fn png_ztxt_and_itxt_cards() {
    use std::io::Write;
    let v3 =
        json!({"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Zed","first_mes":"x"}});
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(b64(&v3).as_bytes()).expect("zlib");
    let ztxt = chunk(
        b"zTXt",
        &[b"ccv3\0\0".as_slice(), &z.finish().expect("zlib")].concat(),
    );
    assert_eq!(name_of(&png_with(&[ztxt])), "Zed");
    let itxt = chunk(
        b"iTXt",
        &[b"chara\0\0\0\0\0".as_slice(), b64(&v3).as_bytes()].concat(),
    );
    assert_eq!(name_of(&png_with(&[itxt])), "Zed");
}

#[test]
fn png_refusals_name_the_file() {
    let e = import_bytes(&png_with(&[]), "plain.png", None).unwrap_err();
    assert!(
        e.to_string().starts_with("plain.png: ") && e.message.contains("no character card"),
        "{e}"
    );
    let mut cut = png_with(&[text_chunk("chara", "abc")]);
    cut.truncate(cut.len() - 20);
    let e = import_bytes(&cut, "cut.png", None).unwrap_err();
    assert!(
        e.to_string().starts_with("cut.png: ") && e.message.contains("truncated"),
        "{e}"
    );
    let e = import_bytes(&png_with(&[text_chunk("chara", "%%%")]), "junk.png", None).unwrap_err();
    assert!(
        e.to_string().contains("junk.png") && e.to_string().contains("base64"),
        "{e}"
    );
    let e = import_bytes(&png_with(&[]), "p.png", Some(AssetKind::Lorebook)).unwrap_err();
    assert!(e.message.contains("character"), "{e}");
}

#[test]
fn png_export_embeds_both_chunks_into_the_own_image() {
    let v3 =
        json!({"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Img","first_mes":"x"}});
    let src = png_with(&[text_chunk("ccv3", &b64(&v3))]);
    let Imported::Character {
        character, avatar, ..
    } = import_bytes(&src, "i.png", None).expect("import").imported
    else {
        panic!()
    };
    let out = export_character(&character, None, None, avatar.as_deref(), ExportFormat::Png)
        .expect("png");
    let mut w = Vec::new();
    let texts = tavo_formats::png::text_chunks(&out, &mut w).expect("chunks");
    let kws: Vec<&str> = texts.iter().map(|t| t.keyword.as_str()).collect();
    assert_eq!(kws, ["chara", "ccv3"]);
    // Without an avatar a placeholder image is generated.
    let out = export_character(&character, None, None, None, ExportFormat::Png).expect("png");
    assert_eq!(name_of(&out), "Img");
}

// ---------------------------------------------------------------- charx

fn zip_of(members: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in members {
        w.start_file(*name, zip::write::SimpleFileOptions::default())
            .expect("zip");
        w.write_all(bytes).expect("zip");
    }
    w.finish().expect("zip").into_inner()
}

/// RisuAI writes WebP icons, other tools JPEG: the avatar is kept as it is, and a charx export
/// writes it back under its own extension; bytes that are no image are still refused.
#[test]
fn charx_keeps_webp_and_jpeg_avatars_and_writes_them_back() {
    let webp = b"RIFF\x1a\0\0\0WEBPVP8 \x0e\0\0\0not-really-pixels".to_vec();
    let jpeg = b"\xFF\xD8\xFF\xE0\0\x10JFIF\0pixels".to_vec();
    for (image, ext) in [(&webp, "webp"), (&jpeg, "jpg")] {
        let path = format!("assets/icon/image/main.{ext}");
        let card = json!({"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Risu","first_mes":"x",
            "assets":[{"type":"icon","uri":format!("embeded://{path}"),"name":"main","ext":ext}]}});
        let z = zip_of(&[
            ("card.json", card.to_string().as_bytes()),
            (path.as_str(), image),
        ]);
        let out = import_bytes(&z, "risu.charx", None).expect("import");
        assert!(codes(&out).is_empty(), "{ext}: {:?}", codes(&out));
        let Imported::Character {
            character, avatar, ..
        } = out.imported
        else {
            panic!()
        };
        assert_eq!(avatar.as_deref(), Some(image.as_slice()), "{ext}");
        let again = export_character(
            &character,
            None,
            None,
            avatar.as_deref(),
            ExportFormat::Charx,
        )
        .expect("charx");
        let back = import_bytes(&again, "again.charx", None).expect("re-import");
        assert!(codes(&back).is_empty(), "{ext}: {:?}", codes(&back));
        let Imported::Character {
            character: back_character,
            avatar: back_avatar,
            ..
        } = back.imported
        else {
            panic!()
        };
        assert_eq!(back_avatar.as_deref(), Some(image.as_slice()), "{ext}");
        assert_eq!(
            back_character.extra.get("assets"),
            character.extra.get("assets"),
            "{ext}: the assets list is not grown"
        );
        let mut names = Vec::new();
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(&again)).expect("zip");
        for i in 0..archive.len() {
            names.push(
                archive
                    .by_index(i)
                    .expect("member")
                    .name()
                    .map(|n| n.into_owned())
                    .unwrap_or_default(),
            );
        }
        assert_eq!(names, ["card.json".to_owned(), path.clone()], "{ext}");
        // A PNG export cannot embed the card into a WebP: it uses the placeholder image.
        let png = export_character(&character, None, None, avatar.as_deref(), ExportFormat::Png)
            .expect("png");
        assert!(tavo_formats::png::is_png(&png), "{ext}");
    }
    let card = json!({"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Risu","first_mes":"x",
        "assets":[{"type":"icon","uri":"embeded://assets/icon/image/main.txt","name":"main","ext":"txt"}]}});
    let z = zip_of(&[
        ("card.json", card.to_string().as_bytes()),
        ("assets/icon/image/main.txt", b"hello"),
    ]);
    let out = import_bytes(&z, "risu.charx", None).expect("import");
    assert!(codes(&out).contains(&"charx.avatar".to_owned()));
    assert!(matches!(
        out.imported,
        Imported::Character { avatar: None, .. }
    ));
}

#[test]
fn charx_reads_card_and_avatar_and_ignores_unsafe_paths() {
    let png = tavo_formats::png::placeholder_png().expect("png");
    let card = json!({"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Risu","first_mes":"x",
        "assets":[{"type":"icon","uri":"embeded://assets/icon/image/1.png","name":"main","ext":"png"},
                  {"type":"emotion","uri":"embeded://assets/other/happy.png","name":"happy","ext":"png"}]}});
    let z = zip_of(&[
        ("card.json", card.to_string().as_bytes()),
        ("assets/icon/image/1.png", &png),
        ("assets/other/happy.png", &png),
        ("../evil.txt", b"x"),
    ]);
    let out = import_bytes(&z, "risu.charx", None).expect("import");
    let got = codes(&out);
    assert!(got.contains(&"charx.unsafe-path".to_owned()), "{got:?}");
    let Imported::Character {
        character,
        avatar,
        assets,
        ..
    } = out.imported
    else {
        panic!()
    };
    // The other members are kept (not the avatar, not the unsafe one).
    assert_eq!(
        assets.iter().map(|a| a.path.as_str()).collect::<Vec<_>>(),
        ["assets/other/happy.png"]
    );
    assert_eq!(character.name, "Risu");
    assert_eq!(avatar.as_deref(), Some(png.as_slice()));
    assert!(character.extra.contains_key("assets"));
    let e = import_bytes(&zip_of(&[("x.json", b"{}")]), "no-card.charx", None).unwrap_err();
    assert!(
        e.to_string().starts_with("no-card.charx: ") && e.message.contains("card.json"),
        "{e}"
    );
}
