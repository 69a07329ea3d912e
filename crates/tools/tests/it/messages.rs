//! Message writes (`tavo_tools::messages`, behind `tavo_message_append/update/delete` and
//! `tavo message …`): the chat's regex rules by timing, the speaker checks, hide and delete.

use crate::support::Lib;
use serde_json::json;
use tavo_model::{
    Character, CharacterSummary, Chat, ChatId, MessageId, RegexEntry, RegexGroup, RegexPlacement,
    RegexTiming, Role, Summary,
};
use tavo_tools::messages::{
    MessageChange, MessageDraft, append_message, delete_message, edit_message, set_message_hidden,
};

fn rule(id: &str, timing: RegexTiming, find: &str, replace: &str) -> RegexEntry {
    RegexEntry {
        identifier: id.into(),
        name: id.into(),
        find_regex: find.into(),
        replace_string: replace.into(),
        placements: vec![RegexPlacement::User, RegexPlacement::Char],
        timing,
        enabled: true,
        ..RegexEntry::default()
    }
}

/// A one-character chat bound to a group with a `receive` rule (cat → CAT), an
/// `editAndReceive` rule (dog → DOG) and a `display` rule (fox → FOX, never stored).
fn chat_with_rules(lib: &Lib) -> ChatId {
    let character = lib
        .store
        .create(&Character {
            name: "Bot".into(),
            first_mes: "Hi".into(),
            ..Character::default()
        })
        .expect("character");
    let group = lib
        .store
        .create(&RegexGroup {
            name: "rules".into(),
            entries: vec![
                rule("r", RegexTiming::Receive, "/cat/g", "CAT"),
                rule("e", RegexTiming::EditAndReceive, "/dog/g", "DOG"),
                rule("d", RegexTiming::Display, "/fox/g", "FOX"),
                rule(
                    "n",
                    RegexTiming::Receive,
                    "/\\{\\{me\\}\\}/",
                    "{{user}}→{{char}}",
                ),
            ],
            ..RegexGroup::default()
        })
        .expect("regex");
    let chat = Chat {
        name: "c".into(),
        characters: vec![CharacterSummary {
            id: character,
            name: "Bot".into(),
            avatar: None,
        }],
        regexes: vec![Summary {
            id: group,
            name: "rules".into(),
        }],
        ..Chat::default()
    };
    lib.store.chat_create(&chat).expect("chat")
}

fn stored(lib: &Lib, id: i64) -> tavo_model::Message {
    lib.store
        .message_get(MessageId(id))
        .expect("read")
        .expect("message exists")
}

#[tokio::test]
async fn the_append_tool_stores_the_receive_rewrite_and_update_the_edit_rewrite() {
    let lib = Lib::new();
    let chat = chat_with_rules(&lib);
    let out = lib
        .ok(
            Some(chat),
            "tavo_message_append",
            json!({"message": {"content": "a cat, a dog, a fox {{me}}"}}),
        )
        .await;
    let id = out["id"].as_i64().expect("id");
    let m = stored(&lib, id);
    assert_eq!(m.content, "a CAT, a DOG, a fox User→Bot");
    assert_eq!(m.name.as_deref(), Some("Bot"));

    let out = lib
        .ok(
            Some(chat),
            "tavo_message_update",
            json!({"message": {"id": id, "content": "cat and dog again"}}),
        )
        .await;
    assert_eq!(out["id"], json!(id));
    // Edit timing: only editAndReceive rules run (SillyTavern's runOnEdit).
    assert_eq!(stored(&lib, id).content, "cat and DOG again");
}

#[test]
fn append_checks_the_speaker_and_a_chat_without_rules_stores_the_text_as_given() {
    let lib = Lib::new();
    let chat = chat_with_rules(&lib);
    let outsider = lib
        .store
        .create(&Character {
            name: "Outsider".into(),
            first_mes: "Hi".into(),
            ..Character::default()
        })
        .expect("character");
    let speaking = |id: i64| MessageDraft {
        character_id: Some(tavo_model::CharacterId(id)),
        ..MessageDraft::new(Role::Assistant, "x")
    };
    let err = append_message(&lib.store, chat, speaking(outsider.0)).expect_err("not a member");
    assert_eq!(err.code.as_str(), "invalid_arguments", "{}", err.message);
    assert!(
        err.message.contains("message.characterId"),
        "{}",
        err.message
    );
    // A character that does not exist (deleted) is not found.
    let err = append_message(&lib.store, chat, speaking(999)).expect_err("no such character");
    assert_eq!(err.code.as_str(), "resource_not_found", "{}", err.message);

    let plain = lib.chat("plain");
    let w =
        append_message(&lib.store, plain, MessageDraft::new(Role::User, "a cat")).expect("append");
    assert_eq!(w.message.content, "a cat");
    assert_eq!(w.message.floor, Some(0));
    assert!(w.message.send_date.is_some());
}

#[test]
fn edit_rewrites_only_the_fields_given_and_hide_and_delete_touch_no_text() {
    let lib = Lib::new();
    let chat = chat_with_rules(&lib);
    let mut draft = MessageDraft::new(Role::Assistant, "dog");
    draft.reasoning = Some("a dog thought".into());
    let w = append_message(&lib.store, chat, draft).expect("append");
    let id = w.message.id.expect("id");
    assert_eq!(w.message.content, "DOG");
    assert_eq!(w.message.reasoning.as_deref(), Some("a dog thought"));

    // A reasoning-only change leaves the content alone. (Reasoning placement is not among
    // the rules' placements, so it is stored as given.)
    let w = edit_message(
        &lib.store,
        chat,
        id,
        MessageChange {
            reasoning: Some("new dog".into()),
            ..MessageChange::default()
        },
    )
    .expect("edit");
    assert_eq!(w.message.content, "DOG");
    assert_eq!(w.message.reasoning.as_deref(), Some("new dog"));

    set_message_hidden(&lib.store, chat, id, true).expect("hide");
    let m = stored(&lib, id.0);
    assert!(m.hidden);
    assert_eq!(m.content, "DOG");
    set_message_hidden(&lib.store, chat, id, false).expect("show");
    assert!(!stored(&lib, id.0).hidden);

    let other = lib.chat("other");
    let err = delete_message(&lib.store, other, id).expect_err("another chat's message");
    assert_eq!(err.code.as_str(), "resource_not_found");
    delete_message(&lib.store, chat, id).expect("delete");
    assert!(lib.store.message_get(id).expect("read").is_none());
}

#[test]
fn replacement_macros_write_the_chats_variables_with_the_message() {
    let lib = Lib::new();
    let group = lib
        .store
        .create(&RegexGroup {
            name: "gold".into(),
            entries: vec![rule(
                "g",
                RegexTiming::Receive,
                "/\\[gold (\\d+)\\]/",
                "{{setvar::gold::$1}}",
            )],
            ..RegexGroup::default()
        })
        .expect("regex");
    let chat = lib
        .store
        .chat_create(&Chat {
            name: "c".into(),
            regexes: vec![Summary {
                id: group,
                name: "gold".into(),
            }],
            ..Chat::default()
        })
        .expect("chat");
    let w = append_message(
        &lib.store,
        chat,
        MessageDraft::new(Role::User, "pay [gold 7]"),
    )
    .expect("append");
    assert_eq!(w.message.content, "pay ");
    let gold = lib
        .store
        .var_get(tavo_store::VarScope::Chat(chat.0), "gold")
        .expect("read");
    assert_eq!(gold, Some(json!(7)));
}
