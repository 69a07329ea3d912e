//! In-process mutation fuzzing over real inputs: flipped bytes, cuts and splices of corpus
//! files (PNG, JSON, JSONL) and of a generated charx must give a value or an error, never a panic.
//! (The cargo-fuzz targets in `/fuzz` explore further; this runs on stable in every test run.)

use proptest::prelude::*;
use std::path::Path;
use tavo_formats::import_bytes;

fn seeds() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    let mut out: Vec<(String, Vec<u8>)> = [
        "cards/serioustavern-peer-tiny.png",
        "cards/serioustavern-peer-v2-de.json",
        "lorebooks/st-Eldoria.json",
        "presets/st-openai-Default.json",
        "regex/weyland-regex-trim.json",
        "chats/kepler-seraphina-2023-unused-names.jsonl",
    ]
    .iter()
    .map(|p| {
        // A missing corpus file fails the run: silently fuzzing fewer inputs would pass it.
        let bytes = std::fs::read(root.join(p)).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; the tests need ../shared beside the checkout",
                root.join(p).display()
            )
        });
        ((*p).to_owned(), bytes)
    })
    .collect();
    let card = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Z","first_mes":"x","character_book":{"entries":[{"keys":["a"],"content":"b"}]}}}"#;
    if let Ok(png) = tavo_formats::png::placeholder_png() {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let ok = w
            .start_file("card.json", zip::write::SimpleFileOptions::default())
            .is_ok()
            && std::io::Write::write_all(&mut w, card).is_ok()
            && w.start_file(
                "assets/icon/image/main.png",
                zip::write::SimpleFileOptions::default(),
            )
            .is_ok()
            && std::io::Write::write_all(&mut w, &png).is_ok();
        if ok && let Ok(c) = w.finish() {
            out.push(("generated.charx".into(), c.into_inner()));
        }
    }
    out
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Cut(usize),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
}

fn apply(mut bytes: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    for m in muts {
        let n = bytes.len().max(1);
        match m {
            Mutation::Flip(at, x) => {
                if let Some(b) = bytes.get_mut(at % n) {
                    *b ^= x | 1;
                }
            }
            Mutation::Cut(at) => bytes.truncate(at % n),
            Mutation::Insert(at, data) => {
                let at = (at % n).min(bytes.len());
                bytes.splice(at..at, data.iter().copied());
            }
            Mutation::Delete(at, len) => {
                let at = (at % n).min(bytes.len());
                let end = (at + len % 64).min(bytes.len());
                bytes.drain(at..end);
            }
        }
    }
    bytes
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(a, x)| Mutation::Flip(a, x)),
        1 => any::<usize>().prop_map(Mutation::Cut),
        2 => (any::<usize>(), prop_oneof![
            prop::collection::vec(any::<u8>(), 1..8),
            Just(b"\"".to_vec()), Just(b"{".to_vec()), Just(b"]".to_vec()), Just(b"\\u".to_vec()),
            Just(b"\xff\xfe".to_vec()), Just(b"\n".to_vec()),
        ]).prop_map(|(a, d)| Mutation::Insert(a, d)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, l)| Mutation::Delete(a, l)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn mutated_real_files_never_panic(which in any::<prop::sample::Index>(), muts in prop::collection::vec(mutation(), 1..6)) {
        let seeds = seeds();
        prop_assume!(!seeds.is_empty());
        let (name, bytes) = &seeds[which.index(seeds.len())];
        let input = apply(bytes.clone(), &muts);
        match import_bytes(&input, name, None) {
            Ok(_) => {}
            Err(e) => prop_assert!(e.to_string().contains(name.rsplit('/').next().unwrap_or(name)), "error does not name the file: {}", e),
        }
    }
}
