//! The store adapter end to end: load a chat's inputs, build, and record a generation —
//! timed effects and variable macros persist only when recorded.

use tavo_model::{
    Character, CharacterSummary, Chat, Lorebook, LorebookEntry, Message, Role, Summary,
};
use tavo_prompt::loader::{self, TIMED_STATE_KEY};
use tavo_prompt::lorebook::Reason;
use tavo_prompt::{PromptEngine, PromptOptions};
use tavo_store::{Store, VarScope};

fn setup() -> (tempfile::TempDir, Store, tavo_model::ChatId) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let character = Character {
        name: "Sera".into(),
        ..Character::default()
    };
    let character_id = store.create(&character).unwrap_or_else(|e| panic!("{e}"));
    let book = Lorebook {
        name: "w".into(),
        entries: vec![LorebookEntry {
            identifier: "dragon".into(),
            name: "Dragon".into(),
            content: "{{setvar::seen::yes}}{{addvar::count::1}}Dragons are old.".into(),
            keywords: vec!["dragon".into()],
            sticky: 4,
            ..LorebookEntry::default()
        }],
        ..Lorebook::default()
    };
    let book_id = store.create(&book).unwrap_or_else(|e| panic!("{e}"));
    let chat = Chat {
        name: "c".into(),
        characters: vec![CharacterSummary {
            id: character_id,
            name: "Sera".into(),
            avatar: None,
        }],
        lorebooks: vec![Summary {
            id: book_id,
            name: "w".into(),
        }],
        ..Chat::default()
    };
    let chat_id = store.chat_create(&chat).unwrap_or_else(|e| panic!("{e}"));
    store
        .message_append(chat_id, &Message::new(Role::User, "I saw a dragon"))
        .unwrap_or_else(|e| panic!("{e}"));
    (dir, store, chat_id)
}

#[test]
fn dry_runs_change_nothing_and_record_persists() {
    let (_dir, store, chat_id) = setup();
    let engine = PromptEngine::new();
    let options = PromptOptions::new(tavo_prompt::local_now());
    let loaded = loader::load(&store, chat_id).unwrap_or_else(|e| panic!("{e}"));
    let output = engine.build(&loaded.input(0), &options);
    assert_eq!(output.explain.activated_entries.len(), 1);
    assert!(
        output
            .messages
            .iter()
            .any(|m| m.content.contains("Dragons are old."))
    );
    assert_eq!(
        store
            .chat_state_get(chat_id, TIMED_STATE_KEY)
            .unwrap_or_default(),
        None
    );
    assert_eq!(
        store
            .var_get(VarScope::Chat(chat_id.0), "seen")
            .unwrap_or_default(),
        None
    );

    loader::record(&store, chat_id, &output).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        store
            .var_get(VarScope::Chat(chat_id.0), "seen")
            .unwrap_or_default(),
        Some(serde_json::json!("yes"))
    );
    let state = store
        .chat_state_get(chat_id, TIMED_STATE_KEY)
        .unwrap_or_default()
        .unwrap_or_default();
    assert_eq!(
        state["sticky"][format!(
            "{}.dragon",
            loaded.lorebooks[0].id.map(|i| i.0).unwrap_or(0)
        )]["start"],
        1
    );

    // The chat moves on without the key: sticky keeps the entry in.
    store
        .message_append(chat_id, &Message::new(Role::Assistant, "Indeed."))
        .unwrap_or_else(|e| panic!("{e}"));
    store
        .message_append(chat_id, &Message::new(Role::User, "Anything else?"))
        .unwrap_or_else(|e| panic!("{e}"));
    let loaded = loader::load(&store, chat_id).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        loaded.variables.chat.get("count"),
        Some(&serde_json::json!(1))
    );
    let output = engine.build(&loaded.input(0), &options);
    assert_eq!(
        output.explain.activated_entries.first().map(|a| &a.reason),
        Some(&Reason::Sticky)
    );
    loader::record(&store, chat_id, &output).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        store
            .var_get(VarScope::Chat(chat_id.0), "count")
            .unwrap_or_default(),
        Some(serde_json::json!(2))
    );
}

#[test]
fn missing_chat_is_reported() {
    let (_dir, store, _) = setup();
    let err = loader::load(&store, tavo_model::ChatId(999)).err();
    assert!(
        matches!(
            err,
            Some(loader::LoadError::ChatNotFound(tavo_model::ChatId(999)))
        ),
        "{err:?}"
    );
}
