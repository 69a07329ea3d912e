//! Messages as rows: dense floors, index ranges, edits, hiding, deletion and insertion, chat
//! state, memory and cloning.

use crate::support::on_both;
use serde_json::json;
use tavo_model::{Chat, ChatId, Message, Role};
use tavo_store::{FileScope, MessageFilter, Store, StoreError, VarScope};

/// A stored character (a message may only name a speaker that exists).
fn character(store: &Store) -> tavo_model::CharacterId {
    store
        .create(&tavo_model::Character {
            name: "Speaker".into(),
            ..Default::default()
        })
        .unwrap()
}

on_both! {
    fn a_message_naming_a_character_that_does_not_exist_is_refused(store) {
        let chat = setup(store, 1);
        let mut m = Message::new(Role::Assistant, "ghost");
        m.character_id = Some(99.into());
        assert!(matches!(
            store.message_append(chat, &m),
            Err(StoreError::NotFound {
                kind: "character",
                ..
            })
        ));
        assert!(store.message_insert(chat, 0, &m).is_err());
        assert_eq!(store.message_count(chat).unwrap(), 1, "nothing was written");
    }
}

fn setup(store: &Store, n: usize) -> ChatId {
    let chat = store
        .chat_create(&Chat {
            name: "c".into(),
            ..Default::default()
        })
        .unwrap();
    let messages: Vec<_> = (0..n)
        .map(|i| {
            Message::new(
                if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                },
                format!("m{i}"),
            )
        })
        .collect();
    store.messages_append(chat, &messages).unwrap();
    chat
}

fn contents(messages: &[Message]) -> Vec<String> {
    messages.iter().map(|m| m.content.clone()).collect()
}

fn floors(store: &Store, chat: ChatId) -> Vec<u64> {
    store
        .messages_all(chat)
        .unwrap()
        .iter()
        .map(|m| m.floor.unwrap())
        .collect()
}

on_both! {
    fn index_ranges_are_inclusive_and_clipped(store) {
        let chat = setup(store, 10);
        assert_eq!(store.message_count(chat).unwrap(), 10);
        let cases: &[(u64, Option<u64>, &[&str])] = &[
            (2, Some(4), &["m2", "m3", "m4"]),
            (8, None, &["m8", "m9"]),
            (0, Some(0), &["m0"]),
            (3, Some(100), &["m3", "m4", "m5", "m6", "m7", "m8", "m9"]),
            (20, None, &[]),
            (5, Some(4), &[]),
        ];
        for (start, end, expected) in cases {
            assert_eq!(
                contents(&store.messages_range(chat, *start, *end).unwrap()),
                *expected,
                "[{start}, {end:?}]"
            );
        }
        assert_eq!(
            contents(&store.messages_last(chat, 3).unwrap()),
            ["m7", "m8", "m9"]
        );
        assert_eq!(contents(&store.messages_last(chat, 50).unwrap()).len(), 10);
        assert!(store.messages_last(chat, 0).unwrap().is_empty());
    }
}

#[test]
fn range_queries_use_the_index() {
    let library = crate::support::library(false).unwrap();
    let store = &library.store;
    setup(store, 1);
    let plan: Vec<String> = store
        .read(|tx| tx.explain("SELECT id, position, data FROM messages WHERE chat_id = 1 AND position BETWEEN 3 AND 9 ORDER BY position"))
        .unwrap();
    assert!(
        plan.iter().any(|l| l.contains("messages_chat_position")),
        "{plan:?}"
    );
    assert!(
        !plan.iter().any(|l| l.contains("SCAN messages")),
        "{plan:?}"
    );
}

on_both! {
    fn messages_keep_their_fields_and_ids_are_stable(store) {
        let chat = setup(store, 0);
        let speaker = character(store);
        let mut m = Message::new(Role::Assistant, "hello");
        m.character_id = Some(speaker);
        m.reasoning = Some("think".into());
        m.swipes = vec!["hello".into(), "hey".into()];
        m.extra.insert("gen_started".into(), json!("2024-01-01"));
        let id = store.message_append(chat, &m).unwrap();
        let back = store.message_get(id).unwrap().unwrap();
        assert_eq!(back.id, Some(id));
        assert_eq!(back.floor, Some(0));
        assert_eq!(back.character_id, Some(speaker));
        assert_eq!(back.reasoning.as_deref(), Some("think"));
        assert_eq!(back.swipes, m.swipes);
        assert_eq!(back.extra.get("gen_started"), Some(&json!("2024-01-01")));
        assert_eq!(store.message_chat(id).unwrap(), Some(chat));
    }
}

on_both! {
    fn edit_and_hide_bump_revisions_and_detect_conflicts(store) {
        let chat = setup(store, 2);
        let mut m = store.messages_last(chat, 1).unwrap().remove(0);
        let id = m.id.unwrap();
        m.content = "edited".into();
        assert_eq!(store.message_update(&m, Some(1)).unwrap(), 2);
        assert!(matches!(
            store.message_update(&m, Some(1)),
            Err(StoreError::Conflict { .. })
        ));
        store.message_set_hidden(id, true).unwrap();
        let back = store.message_get(id).unwrap().unwrap();
        assert!(back.hidden);
        assert_eq!(back.content, "edited");
        assert_eq!(back.floor, Some(1));
        assert_eq!(store.message_revision(id).unwrap(), Some(3));
    }
}

on_both! {
    fn deleting_and_inserting_keep_floors_dense(store) {
        let chat = setup(store, 5);
        let third = store
            .messages_range(chat, 2, Some(2))
            .unwrap()
            .remove(0)
            .id
            .unwrap();
        assert!(store.message_delete(third).unwrap());
        assert!(!store.message_delete(third).unwrap());
        assert_eq!(
            contents(&store.messages_all(chat).unwrap()),
            ["m0", "m1", "m3", "m4"]
        );
        assert_eq!(floors(store, chat), [0, 1, 2, 3]);
        store
            .message_insert(chat, 1, &Message::new(Role::System, "new"))
            .unwrap();
        assert_eq!(
            contents(&store.messages_all(chat).unwrap()),
            ["m0", "new", "m1", "m3", "m4"]
        );
        assert_eq!(floors(store, chat), [0, 1, 2, 3, 4]);
        store
            .message_insert(chat, 99, &Message::new(Role::System, "end"))
            .unwrap();
        assert_eq!(contents(&store.messages_last(chat, 1).unwrap()), ["end"]);
        let first = store
            .messages_range(chat, 0, Some(0))
            .unwrap()
            .remove(0)
            .id
            .unwrap();
        store.message_delete(first).unwrap();
        assert_eq!(floors(store, chat), [0, 1, 2, 3, 4]);
    }
}

on_both! {
    fn appending_to_a_missing_chat_is_not_found(store) {
        let _chat = setup(store, 0);
        let err = store
            .message_append(999.into(), &Message::new(Role::User, "x"))
            .unwrap_err();
        assert!(matches!(err, StoreError::NotFound { kind: "chat", .. }));
        assert_eq!(err.code(), "resource_not_found");
    }
}

on_both! {
    fn chat_state_and_memory(store) {
        let chat = setup(store, 0);
        assert_eq!(store.chat_state_get(chat, "lorebook.timed").unwrap(), None);
        store
            .chat_state_set(chat, "lorebook.timed", &json!({"sticky": {"e1": 3}}))
            .unwrap();
        assert_eq!(
            store.chat_state_get(chat, "lorebook.timed").unwrap(),
            Some(json!({"sticky": {"e1": 3}}))
        );
        assert!(matches!(
            store.chat_state_set(999.into(), "k", &json!(1)),
            Err(StoreError::NotFound { .. })
        ));

        let memory = store.memory_get(chat).unwrap();
        assert!(!memory.enabled && memory.memories.is_empty() && memory.id.is_some());
        let memory = store
            .memory_update(chat, Some(true), Some(&["a".to_owned()]))
            .unwrap();
        assert!(memory.enabled);
        let memory = store
            .memory_append(chat, &["b".to_owned(), "c".to_owned()])
            .unwrap();
        assert_eq!(memory.memories, ["a", "b", "c"]);
        let memory = store.memory_update(chat, Some(false), None).unwrap();
        assert_eq!(memory.memories, ["a", "b", "c"]);
        assert_eq!(store.memory_get(chat).unwrap(), memory);
    }
}

on_both! {
    fn deleting_a_chat_removes_everything_it_owns(store) {
        let chat = setup(store, 3);
        store.chat_state_set(chat, "k", &json!(1)).unwrap();
        store
            .var_set(VarScope::Chat(chat.0), "v", &json!(1))
            .unwrap();
        store
            .files()
            .save(FileScope::Chat(chat.0), "a.txt", b"x")
            .unwrap();
        assert!(store.chat_delete(chat).unwrap());
        assert_eq!(store.message_count(chat).unwrap(), 0);
        assert!(
            !store
                .files()
                .exists(FileScope::Chat(chat.0), "a.txt")
                .unwrap()
        );
        assert!(store.var_all(VarScope::Chat(chat.0)).unwrap().is_empty());
    }
}

on_both! {
    fn cloning_copies_messages_variables_state_memory_and_files(store) {
        let chat = setup(store, 3);
        let last = store.messages_last(chat, 1).unwrap().remove(0).id.unwrap();
        store
            .var_set(VarScope::Message(last.0), "mood", &json!("happy"))
            .unwrap();
        store
            .var_set(VarScope::Chat(chat.0), "hp", &json!(7))
            .unwrap();
        store.chat_state_set(chat, "k", &json!([1])).unwrap();
        store.memory_append(chat, &["remember".to_owned()]).unwrap();
        store
            .files()
            .save(FileScope::Chat(chat.0), "bg.png", b"png")
            .unwrap();

        let copy = store.chat_clone(chat, "copy").unwrap();
        assert_eq!(store.chat_get(copy).unwrap().unwrap().name, "copy");
        assert_eq!(
            contents(&store.messages_all(copy).unwrap()),
            ["m0", "m1", "m2"]
        );
        let copy_last = store.messages_last(copy, 1).unwrap().remove(0).id.unwrap();
        assert_ne!(copy_last, last);
        assert_eq!(
            store
                .var_get(VarScope::Message(copy_last.0), "mood")
                .unwrap(),
            Some(json!("happy"))
        );
        assert_eq!(
            store.var_get(VarScope::Chat(copy.0), "hp").unwrap(),
            Some(json!(7))
        );
        assert_eq!(store.chat_state_get(copy, "k").unwrap(), Some(json!([1])));
        assert_eq!(store.memory_get(copy).unwrap().memories, ["remember"]);
        assert_eq!(
            store
                .files()
                .load(FileScope::Chat(copy.0), "bg.png")
                .unwrap()
                .as_deref(),
            Some(&b"png"[..])
        );
    }
}

on_both! {
    fn filters_select_by_role_hidden_and_speaker(store) {
        let chat = setup(store, 6);
        let speaker = character(store);
        let mut spoken = Message::new(Role::Assistant, "by 34");
        spoken.character_id = Some(speaker);
        let id = store.message_append(chat, &spoken).unwrap();
        store.message_set_hidden(id, true).unwrap();
        let by = |filter: MessageFilter| contents(&store.messages_filtered(chat, &filter).unwrap());
        assert_eq!(by(MessageFilter::default()).len(), 7);
        assert_eq!(
            by(MessageFilter {
                role: Some(Role::User),
                ..Default::default()
            }),
            ["m0", "m2", "m4"]
        );
        assert_eq!(
            by(MessageFilter {
                hidden: Some(true),
                ..Default::default()
            }),
            ["by 34"]
        );
        assert_eq!(
            by(MessageFilter {
                hidden: Some(false),
                ..Default::default()
            })
            .len(),
            6
        );
        assert_eq!(
            by(MessageFilter {
                characters: Some(vec![speaker, 35.into()]),
                ..Default::default()
            }),
            ["by 34"]
        );
        assert!(
            by(MessageFilter {
                characters: Some(vec![]),
                ..Default::default()
            })
            .is_empty()
        );
    }
}
