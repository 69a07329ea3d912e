//! Chat creation and asset writes through the model's tools: bindings in one transaction, the
//! greeting with its swipes, the card's own lorebook and regex group, CCv3 names, required
//! fields, preset defaults (and the prompt they give), entry identifiers, reads, deletes.

use crate::support::Lib;
use serde_json::{Value, json};
use tavo_model::{ChatId, Message, Role};

/// A CCv3 card with a lorebook, a regex script and two alternate greetings.
fn card() -> Value {
    json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "Bob", "first_mes": "Yo, {{user}}.", "alternate_greetings": ["Hey.", "Hi!"],
        "description": "", "personality": "", "scenario": "", "mes_example": "",
        "character_book": {"name": "Bob's world", "entries": [{"keys": ["city"], "content": "A harbour city.", "enabled": true, "insertion_order": 0}]},
        "extensions": {"regex_scripts": [{"scriptName": "tidy", "findRegex": "/x/g", "replaceString": "y", "placement": [2]}]}
    }})
}

async fn import_bob(lib: &Lib) -> (i64, i64, i64) {
    let r = lib
        .ok(None, "tavo_character_import", json!({"card": card()}))
        .await;
    let id = |k: &str| r[k].as_i64().unwrap_or_else(|| panic!("{k} in {r}"));
    (id("characterId"), id("lorebookId"), id("regexId"))
}

fn ids(list: &Value) -> Vec<i64> {
    list.as_array()
        .map(|a| a.iter().filter_map(|v| v["id"].as_i64()).collect())
        .unwrap_or_default()
}

fn chat_count(lib: &Lib) -> usize {
    lib.store
        .asset_summaries(tavo_model::AssetKind::Chat)
        .map(|l| l.len())
        .unwrap_or(usize::MAX)
}

#[tokio::test]
async fn a_new_chat_binds_the_cards_own_lore_and_starts_with_the_greeting_and_its_swipes() {
    let lib = Lib::new();
    let (bob, book, regex) = import_bob(&lib).await;
    let other = lib
        .ok(
            None,
            "tavo_lorebook_create",
            json!({"lorebook": {"name": "Extra"}}),
        )
        .await["id"]
        .as_i64()
        .unwrap_or_default();
    let chat = lib
        .ok(
            None,
            "tavo_chat_create",
            json!({"chat": {"characters": [bob], "lorebooks": [other, book]}}),
        )
        .await;
    assert_eq!(chat["name"], "Bob");
    assert_eq!(ids(&chat["characters"]), [bob]);
    assert_eq!(
        ids(&chat["lorebooks"]),
        [book, other],
        "card's own first, no duplicate"
    );
    assert_eq!(ids(&chat["regexes"]), [regex]);
    assert!(chat["creationDate"].is_string(), "{chat}");
    let id = chat["id"].as_i64().unwrap_or_default();
    let messages = lib.store.messages_all(ChatId(id)).unwrap_or_default();
    assert_eq!(messages.len(), 1);
    let greeting = &messages[0];
    assert_eq!(greeting.content, "Yo, User.");
    assert_eq!(greeting.swipes, ["Yo, User.", "Hey.", "Hi!"]);
    assert_eq!(greeting.swipe_id, Some(0));
    assert_eq!(greeting.character_id.map(|c| c.0), Some(bob));
    assert_eq!(chat["greetingMessageId"].as_i64(), greeting.id.map(|m| m.0));

    // Opting out binds only what was named, and no greeting.
    let bare = lib
        .ok(
            None,
            "tavo_chat_create",
            json!({"chat": {"characters": [bob], "cardBindings": false, "greeting": false, "name": "Quiet"}}),
        )
        .await;
    assert_eq!(ids(&bare["lorebooks"]), Vec::<i64>::new());
    assert_eq!(ids(&bare["regexes"]), Vec::<i64>::new());
    let bare_id = ChatId(bare["id"].as_i64().unwrap_or_default());
    assert_eq!(lib.store.message_count(bare_id).unwrap_or(9), 0);
}

#[tokio::test]
async fn a_refused_binding_names_its_path_and_creates_nothing() {
    let lib = Lib::new();
    let (bob, _, _) = import_bob(&lib).await;
    let before = chat_count(&lib);
    for (args, code, path) in [
        (
            json!({"characters": []}),
            "invalid_arguments",
            "chat.characters",
        ),
        (
            json!({"characters": [bob, 999]}),
            "resource_not_found",
            "chat.characters[1]",
        ),
        (
            json!({"characters": [bob], "lorebooks": [1, 77]}),
            "resource_not_found",
            "chat.lorebooks[1]",
        ),
        (
            json!({"characters": [bob], "preset": 5}),
            "resource_not_found",
            "chat.preset",
        ),
        (
            json!({"characters": [bob], "persona": 5}),
            "resource_not_found",
            "chat.persona",
        ),
        (
            json!({"characters": [bob], "regexes": [0]}),
            "invalid_arguments",
            "chat.regexes[0]",
        ),
        (
            json!({"characters": [bob], "background": {"color": "red"}}),
            "invalid_arguments",
            "chat.background.color",
        ),
    ] {
        let e = lib
            .err(None, "tavo_chat_create", json!({"chat": args.clone()}))
            .await;
        assert_eq!(e["code"], code, "{args} -> {e}");
        assert_eq!(e["details"]["path"], path, "{args} -> {e}");
    }
    assert_eq!(chat_count(&lib), before, "nothing was written");
}

#[tokio::test]
async fn chat_update_binds_preset_lorebooks_and_regexes_in_one_transaction() {
    let lib = Lib::new();
    let (bob, book, regex) = import_bob(&lib).await;
    let chat = lib
        .ok(
            None,
            "tavo_chat_create",
            json!({"chat": {"characters": [bob]}}),
        )
        .await["id"]
        .as_i64()
        .unwrap_or_default();
    let preset = lib
        .ok(None, "tavo_preset_create", json!({"preset": {"name": "P"}}))
        .await["id"]
        .as_i64()
        .unwrap_or_default();
    let updated = lib
        .ok(
            Some(ChatId(chat)),
            "tavo_chat_update",
            json!({"chat": {"preset": preset, "lorebooks": [], "regexes": [regex]}}),
        )
        .await;
    assert_eq!(updated["preset"]["id"], preset);
    assert_eq!(updated["preset"]["name"], "P");
    assert_eq!(ids(&updated["lorebooks"]), Vec::<i64>::new(), "unbound");
    assert_eq!(ids(&updated["regexes"]), [regex]);
    // One unknown id among good ones changes nothing at all.
    let e = lib
        .err(
            Some(ChatId(chat)),
            "tavo_chat_update",
            json!({"chat": {"name": "Renamed", "preset": null, "lorebooks": [book, 404]}}),
        )
        .await;
    assert_eq!(e["code"], "resource_not_found");
    assert_eq!(e["details"]["path"], "chat.lorebooks[1]");
    let now = lib
        .ok(Some(ChatId(chat)), "tavo_chat_current", json!({}))
        .await;
    assert_eq!(now["name"], "Bob");
    assert_eq!(now["preset"]["id"], preset);
    assert_eq!(now["revision"], updated["revision"]);
    let cleared = lib
        .ok(
            Some(ChatId(chat)),
            "tavo_chat_update",
            json!({"chat": {"preset": null, "lorebooks": [book]}}),
        )
        .await;
    assert!(cleared["preset"].is_null());
    assert_eq!(ids(&cleared["lorebooks"]), [book]);
}

#[tokio::test]
async fn characters_accept_ccv3_names_and_require_the_greeting() {
    let lib = Lib::new();
    let id = lib
        .ok(
            None,
            "tavo_character_create",
            json!({"character": {"name": "Zed", "first_mes": "Yo", "mes_example": "<START>", "creation_date": 1_700_000_000}}),
        )
        .await["id"]
        .as_i64()
        .unwrap_or_default();
    let c = lib.ok(None, "tavo_character_get", json!({"id": id})).await;
    assert_eq!(c["firstMes"], "Yo");
    assert_eq!(c["mesExample"], "<START>");
    assert_eq!(c["creationDate"], "2023-11-14T22:13:20Z");
    assert!(c.get("first_mes").is_none(), "{c}");
    // Reads always carry avatar (null without an image) and both dates.
    assert!(
        c["avatar"].is_null() && c["modificationDate"].is_string(),
        "{c}"
    );

    // Update with a CCv3 name; both names disagreeing are refused and change nothing.
    lib.ok(
        None,
        "tavo_character_update",
        json!({"character": {"id": id, "post_history_instructions": "Stay terse."}}),
    )
    .await;
    let e = lib
        .err(
            None,
            "tavo_character_update",
            json!({"character": {"id": id, "firstMes": "A", "first_mes": "B"}}),
        )
        .await;
    assert_eq!(e["code"], "invalid_arguments");
    assert_eq!(e["details"]["path"], "character.first_mes");
    let c = lib.ok(None, "tavo_character_get", json!({"id": id})).await;
    assert_eq!(c["postHistoryInstructions"], "Stay terse.");
    assert_eq!(c["firstMes"], "Yo");
    assert!(c["modificationDate"] != c["creationDate"]);

    let e = lib
        .err(
            None,
            "tavo_character_create",
            json!({"character": {"name": "OnlyName"}}),
        )
        .await;
    assert_eq!(e["details"]["path"], "character.firstMes");
    let e = lib
        .err(
            None,
            "tavo_persona_create",
            json!({"persona": {"name": "P"}}),
        )
        .await;
    assert_eq!(e["details"]["path"], "persona.description");
}

#[tokio::test]
async fn imported_avatars_show_in_reads_and_in_chat_members() {
    let lib = Lib::new();
    let png = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus/cards/st-default_Seraphina.png"
    ))
    .expect("the shared corpus (../shared/corpus) must be present for this test");
    let imported = tavo_formats::import_bytes(&png, "Seraphina.png", None).expect("import");
    let tavo_formats::Imported::Character {
        character, avatar, ..
    } = imported.imported
    else {
        panic!("not a character");
    };
    let r = lib
        .store
        .import_character(&character, avatar.as_deref(), None, None)
        .expect("store");
    let id = r.character_id.0;
    let url = format!("/api/characters/{id}/avatar");
    let c = lib.ok(None, "tavo_character_get", json!({"id": id})).await;
    assert_eq!(c["avatar"], url);
    let all = lib.ok(None, "tavo_character_all", json!({})).await;
    assert_eq!(all[0]["avatar"], url);
    let chat = lib
        .ok(
            None,
            "tavo_chat_create",
            json!({"chat": {"characters": [id]}}),
        )
        .await;
    assert_eq!(chat["characters"][0]["avatar"], url);
    // Writing the read object back does not store the derived URL.
    lib.ok(
        None,
        "tavo_character_update",
        json!({"character": {"id": id, "avatar": url}}),
    )
    .await;
    let stored: Option<tavo_model::Character> =
        lib.store.get(tavo_model::CharacterId(id)).expect("get");
    assert_eq!(stored.and_then(|c| c.avatar), None);
}

#[tokio::test]
async fn a_preset_with_only_its_own_entry_still_sends_the_chat_history() {
    let lib = Lib::new();
    // Seed 002's own example of tavo.preset.create.
    let preset = lib
        .ok(
            None,
            "tavo_preset_create",
            json!({"preset": {"name": "Mini", "basicPrompts": {"continueNudge": "[继续你的上一条消息，不要重复原有内容。]"},
                "entries": [{"identifier": "abc123", "name": "🌸 文风控制", "content": "采用精致优雅的叙事风格。"}]}}),
        )
        .await["id"]
        .as_i64()
        .unwrap_or_default();
    let stored = lib.ok(None, "tavo_preset_get", json!({"id": preset})).await;
    let entries: Vec<&str> = stored["entries"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["identifier"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(entries.len(), 13, "{entries:?}");
    assert_eq!(entries.last(), Some(&"abc123"));
    assert!(entries.contains(&"chatHistory"));

    let zed = lib
        .ok(
            None,
            "tavo_character_create",
            json!({"character": {"name": "Zed", "firstMes": "Welcome aboard."}}),
        )
        .await["id"]
        .as_i64()
        .unwrap_or_default();
    let chat = lib
        .ok(
            None,
            "tavo_chat_create",
            json!({"chat": {"characters": [zed], "preset": preset}}),
        )
        .await["id"]
        .as_i64()
        .unwrap_or_default();
    lib.store
        .message_append(
            ChatId(chat),
            &Message::new(Role::User, "Where is the lighthouse?"),
        )
        .expect("append");
    let loaded = tavo_prompt::loader::load(&lib.store, ChatId(chat)).expect("load");
    let options = tavo_prompt::PromptOptions::new(tavo_prompt::local_now());
    let out = tavo_prompt::build(&loaded.input(0), &options);
    let all: Vec<&str> = out.messages.iter().map(|m| m.content.as_str()).collect();
    assert!(all.iter().any(|m| m.contains("Welcome aboard.")), "{all:?}");
    assert!(
        all.iter().any(|m| m.contains("Where is the lighthouse?")),
        "{all:?}"
    );
    assert!(
        all.iter().any(|m| m.contains("采用精致优雅的叙事风格。")),
        "the preset's own entry is sent: {all:?}"
    );
}

#[tokio::test]
async fn regex_and_lorebook_entries_get_identifiers() {
    let lib = Lib::new();
    let id = lib
        .ok(
            None,
            "tavo_regex_create",
            json!({"regex": {"name": "R", "entries": [{"name": "a", "findRegex": "x"}, {"name": "b", "findRegex": "y"}]}}),
        )
        .await["id"]
        .as_i64()
        .unwrap_or_default();
    let g = lib.ok(None, "tavo_regex_get", json!({"id": id})).await;
    let a = g["entries"][0]["identifier"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let b = g["entries"][1]["identifier"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!a.is_empty() && !b.is_empty() && a != b, "{g}");
    let book = lib
        .ok(
            None,
            "tavo_lorebook_create",
            json!({"lorebook": {"name": "L", "entries": [{"content": "x", "keywords": ["k"]}]}}),
        )
        .await["id"]
        .as_i64()
        .unwrap_or_default();
    // An entry added by update gets one too; the existing one keeps its own.
    let l = lib.ok(None, "tavo_lorebook_get", json!({"id": book})).await;
    let first = l["entries"][0].clone();
    assert!(first["identifier"].as_str().is_some_and(|s| !s.is_empty()));
    lib.ok(
        None,
        "tavo_lorebook_update",
        json!({"lorebook": {"id": book, "entries": [first.clone(), {"content": "y"}]}}),
    )
    .await;
    let l = lib.ok(None, "tavo_lorebook_get", json!({"id": book})).await;
    assert_eq!(l["entries"][0]["identifier"], first["identifier"]);
    assert!(
        l["entries"][1]["identifier"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
}

#[tokio::test]
async fn deleting_a_character_removes_it_from_chats_and_refuses_its_messages() {
    let lib = Lib::new();
    let (bob, _, _) = import_bob(&lib).await;
    let zed = lib
        .ok(
            None,
            "tavo_character_create",
            json!({"character": {"name": "Zed", "firstMes": "Hi"}}),
        )
        .await["id"]
        .as_i64()
        .unwrap_or_default();
    let group = lib
        .ok(
            None,
            "tavo_chat_create",
            json!({"chat": {"characters": [bob, zed]}}),
        )
        .await["id"]
        .as_i64()
        .unwrap_or_default();
    lib.ok(None, "tavo_character_delete", json!({"id": zed}))
        .await;
    let chat = lib
        .ok(Some(ChatId(group)), "tavo_chat_current", json!({}))
        .await;
    assert_eq!(ids(&chat["characters"]), [bob]);
    let mut m = Message::new(Role::Assistant, "ghost");
    m.character_id = Some(tavo_model::CharacterId(zed));
    let e = lib.store.message_append(ChatId(group), &m);
    assert!(
        matches!(
            e,
            Err(tavo_store::StoreError::NotFound {
                kind: "character",
                ..
            })
        ),
        "{e:?}"
    );
    let e = lib
        .err(
            Some(ChatId(group)),
            "tavo_message_append",
            json!({"message": {"content": "ghost", "role": "assistant", "characterId": zed}}),
        )
        .await;
    assert_eq!(e["code"], "resource_not_found", "{e}");
    assert_eq!(
        lib.store.message_count(ChatId(group)).unwrap_or(0),
        2,
        "only the greetings (each member greets a new group chat; the deleted member's stays)"
    );
}

#[tokio::test]
async fn theme_ids_that_do_not_exist_are_not_found() {
    let lib = Lib::new();
    for id in [3, 50, 100, 5000] {
        let e = lib
            .err(
                None,
                "tavo_theme_update",
                json!({"theme": {"id": id, "name": "X"}}),
            )
            .await;
        assert_eq!(e["code"], "resource_not_found", "update {id}: {e}");
        let e = lib.err(None, "tavo_theme_delete", json!({"id": id})).await;
        assert_eq!(e["code"], "resource_not_found", "delete {id}: {e}");
        let e = lib.err(None, "tavo_theme_get", json!({"id": id})).await;
        assert_eq!(e["code"], "resource_not_found", "get {id}: {e}");
    }
    // An official theme that exists is read-only.
    let e = lib.err(None, "tavo_theme_delete", json!({"id": 1})).await;
    assert_eq!(e["code"], "permission_denied");
}

#[tokio::test]
async fn chats_clone_with_their_messages() {
    let lib = Lib::new();
    let (bob, _, _) = import_bob(&lib).await;
    let chat = lib
        .ok(
            None,
            "tavo_chat_create",
            json!({"chat": {"characters": [bob], "name": "Trip"}}),
        )
        .await["id"]
        .as_i64()
        .unwrap_or_default();
    let copy = tavo_tools::chats::clone_chat(&lib.store, ChatId(chat), None).expect("clone");
    let c = lib.store.chat_get(copy).expect("read").expect("exists");
    assert_eq!(c.name, "Trip (copy)");
    assert_eq!(lib.store.message_count(copy).unwrap_or(0), 1);
    let e = tavo_tools::chats::clone_chat(&lib.store, ChatId(999), None).err();
    assert_eq!(
        e.map(|e| e.code),
        Some(tavo_tools::ErrorCode::ResourceNotFound)
    );
}

#[tokio::test]
async fn the_model_door_sets_a_group_reply_mode_and_leaving_unmutes() {
    let lib = Lib::new();
    let mut members = Vec::new();
    for name in ["Ann", "Bo"] {
        let id = lib
            .ok(
                None,
                "tavo_character_create",
                json!({"character": {"name": name, "firstMes": format!("{name} here")}}),
            )
            .await["id"]
            .as_i64()
            .unwrap_or_default();
        members.push(id);
    }
    let created = lib
        .ok(
            None,
            "tavo_chat_create",
            json!({"chat": {"characters": members, "replyMode": "designated"}}),
        )
        .await;
    let chat = created["id"].as_i64().unwrap_or_default();
    assert_eq!(created["replyMode"], "designated", "{created}");
    assert_eq!(
        lib.store.message_count(ChatId(chat)).unwrap_or(0),
        2,
        "each member greets"
    );
    let e = lib
        .err(
            Some(ChatId(chat)),
            "tavo_chat_update",
            json!({"chat": {"replyMode": "pooled"}}),
        )
        .await;
    assert_eq!(e["code"], "invalid_arguments", "{e}");
    let muted = tavo_tools::group::set_muted(
        &lib.store,
        ChatId(chat),
        tavo_model::CharacterId(members[1]),
        true,
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(muted["mutedCharacterIds"], json!([members[1]]));
    let updated = lib
        .ok(
            Some(ChatId(chat)),
            "tavo_chat_update",
            json!({"chat": {"replyMode": "all", "characters": [members[0]]}}),
        )
        .await;
    assert_eq!(updated["replyMode"], "all");
    assert!(
        updated.get("mutedCharacterIds").is_none(),
        "a member who left is no longer muted: {updated}"
    );
}
