//! SillyTavern personas (`settings.json`) and group chats (a group definition with its chat
//! files) through `import_file_all`, the import every door shares; fixtures are the formats
//! crate's `tests/data/st/`.

use std::path::{Path, PathBuf};

use tavo_model::{AssetKind, Character, CharacterId, Chat, ChatId, Persona, ReplyMode};
use tavo_store::Store;
use tavo_tools::library::{import_file, import_file_all};

fn data(name: &str) -> (String, Vec<u8>) {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../formats/tests/data/st")
        .join(name);
    (name.to_owned(), std::fs::read(&p).expect("fixture"))
}

fn library() -> (tempfile::TempDir, Store, CharacterId, CharacterId) {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open(dir.path()).expect("store");
    let mk = |name: &str| {
        store
            .create(&Character {
                name: name.into(),
                first_mes: "hi".into(),
                ..Default::default()
            })
            .expect("character")
    };
    let (ann, bo) = (mk("Ann"), mk("Bo"));
    (dir, store, ann, bo)
}

#[test]
fn settings_json_gives_one_persona_each() {
    let (_d, store, ..) = library();
    let (name, bytes) = data("settings.json");
    let results = import_file_all(&store, &bytes, &name, None, &[]).expect("import");
    assert_eq!(results.len(), 3);
    assert!(results.iter().all(|r| r.kind == AssetKind::Persona));
    let codes: Vec<&str> = results[0]
        .warnings
        .iter()
        .map(|w| w.code.as_str())
        .collect();
    assert_eq!(codes, ["persona.name", "persona.avatar"]);
    let wren: Persona = store
        .require(tavo_model::PersonaId(results[0].main_id().expect("id")))
        .expect("persona");
    assert_eq!(wren.name, "Wren");
    assert!(wren.active);
    assert_eq!(wren.extra["sillyTavernPersona"]["lorebook"], "Wren's notes");
    assert_eq!(store.list::<Persona>().expect("list").len(), 3);
    // The one-result door names the others instead of dropping them.
    let one = import_file(&store, &bytes, &name, Some(AssetKind::Persona)).expect("import");
    assert!(
        one.warnings.iter().any(|w| w.code == "import.several"),
        "{:?}",
        one.warnings
    );
}

#[test]
fn a_group_with_its_chat_file_is_a_group_chat() {
    let (_d, store, ann, bo) = library();
    let (name, bytes) = data("group.json");
    let chat_file = data("2024-7-19@22h51m00s.jsonl");
    let results = import_file_all(&store, &bytes, &name, None, &[chat_file]).expect("import");
    assert_eq!(results.len(), 1);
    let r = &results[0];
    assert_eq!(
        (r.kind, r.name.as_str()),
        (AssetKind::Chat, "2024-7-19@22h51m00s")
    );
    let unmatched: Vec<&str> = r
        .warnings
        .iter()
        .filter(|w| w.code == "chat.character-unmatched")
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(unmatched.len(), 1, "{:?}", r.warnings);
    assert!(unmatched[0].contains("Nobody Here"), "{unmatched:?}");
    let id = ChatId(r.main_id().expect("id"));
    let chat: Chat = store.require(id).expect("chat");
    assert_eq!(
        chat.characters.iter().map(|c| c.id).collect::<Vec<_>>(),
        [ann, bo]
    );
    assert_eq!(chat.reply_mode, ReplyMode::All);
    assert_eq!(chat.muted(), [bo]);
    assert!(chat.extra.contains_key("sillyTavernGroup"));
    let messages = store.read(|tx| tx.messages_all(id)).expect("messages");
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[0].character_id, Some(ann));
    assert_eq!(messages[2].character_id, Some(bo));
}

#[test]
fn a_group_alone_is_an_empty_group_chat_with_a_warning() {
    let (_d, store, ann, bo) = library();
    let (name, bytes) = data("group.json");
    let results = import_file_all(&store, &bytes, &name, None, &[]).expect("import");
    assert_eq!(results.len(), 1);
    let r = &results[0];
    assert!(
        r.warnings.iter().any(|w| w.code == "group.chats-missing"
            && w.message.contains("group chats/2024-7-19@22h51m00s.jsonl")),
        "{:?}",
        r.warnings
    );
    let chat: Chat = store
        .require(ChatId(r.main_id().expect("id")))
        .expect("chat");
    assert_eq!(chat.name, "Villains at the pub");
    assert_eq!(chat.characters.len(), 2);
    assert_eq!(chat.muted(), [bo]);
    assert!(!chat.is_muted(ann));
    let (name, bytes) = data("group-pooled.json");
    let r = import_file(&store, &bytes, &name, None).expect("import");
    assert!(r.warnings.iter().any(|w| w.code == "group.pooled"));
}
