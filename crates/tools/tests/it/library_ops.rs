//! The business operations over the store: variables, messages, chat, library assets, memory,
//! input draft, image/TTS without providers.

use crate::support::Lib;
use serde_json::json;

#[tokio::test]
async fn variables_in_chat_and_global_scopes_with_dotted_paths() {
    let lib = Lib::new();
    let chat = lib.chat("vars");
    lib.ok(
        Some(chat),
        "tavo_variable_set",
        json!({"name": "status", "value": {"hp": 100, "mp": 32}}),
    )
    .await;
    lib.ok(
        Some(chat),
        "tavo_variable_update",
        json!({"name": "status", "value": {"hp": 70}}),
    )
    .await;
    let v = lib
        .ok(Some(chat), "tavo_variable_get", json!({"name": "status"}))
        .await;
    assert_eq!(v["value"], json!({"hp": 70, "mp": 32}));
    assert_eq!(
        lib.ok(
            Some(chat),
            "tavo_variable_get",
            json!({"name": "status.hp"})
        )
        .await["value"],
        json!(70)
    );
    lib.ok(
        Some(chat),
        "tavo_variable_unset",
        json!({"name": "status.hp"}),
    )
    .await;
    assert_eq!(
        lib.ok(Some(chat), "tavo_variable_get", json!({"name": "status"}))
            .await["value"],
        json!({"mp": 32})
    );
    // Scopes never fall through.
    let g = lib
        .ok(
            Some(chat),
            "tavo_variable_get",
            json!({"name": "status", "scope": "global"}),
        )
        .await;
    assert_eq!(g["exists"], json!(false));
    lib.ok(
        None,
        "tavo_variable_set",
        json!({"name": "shared", "value": [1, "two"], "scope": "global"}),
    )
    .await;
    assert_eq!(
        lib.ok(
            Some(chat),
            "tavo_variable_get",
            json!({"name": "shared", "scope": "global"})
        )
        .await["value"],
        json!([1, "two"])
    );
    for bad in [
        json!({"name": ""}),
        json!({"name": "a..b"}),
        json!({"name": "x", "scope": "character"}),
    ] {
        let e = lib.err(Some(chat), "tavo_variable_get", bad.clone()).await;
        assert_eq!(e["code"], json!("invalid_arguments"), "{bad}");
    }
    // The message scope (TavoJS `{scope: 'message'}`) needs a message: this chat has none.
    let e = lib
        .err(
            Some(chat),
            "tavo_variable_get",
            json!({"name": "x", "scope": "message"}),
        )
        .await;
    assert_eq!(e["code"], json!("resource_not_found"));
}

#[tokio::test]
async fn messages_find_append_update_delete() {
    let lib = Lib::new();
    let chat = lib.chat("msgs");
    let e = lib
        .err(
            Some(chat),
            "tavo_message_append",
            json!({"message": {"content": "no speaker", "characterId": 999}}),
        )
        .await;
    assert_eq!(
        (e["code"].clone(), e["details"]["path"].clone()),
        (json!("resource_not_found"), json!("message.characterId")),
        "a speaker that does not exist is refused, naming the field"
    );
    let u = lib
        .ok(
            Some(chat),
            "tavo_message_append",
            json!({"message": {"content": "hello", "role": "user"}}),
        )
        .await;
    lib.ok(
        Some(chat),
        "tavo_message_append",
        json!({"message": {"content": "hidden note", "role": "user", "hidden": true}}),
    )
    .await;
    assert_eq!(
        lib.ok(Some(chat), "tavo_message_count", json!({})).await["count"],
        json!(2)
    );
    let last = lib
        .ok(Some(chat), "tavo_message_find", json!({"indexRange": -1}))
        .await;
    assert_eq!(last[0]["content"], json!("hidden note"));
    let visible = lib
        .ok(
            Some(chat),
            "tavo_message_find",
            json!({"indexRange": [], "filter": {"hidden": false}}),
        )
        .await;
    assert_eq!(visible.as_array().map(Vec::len), Some(1));
    assert_eq!(
        lib.ok(
            Some(chat),
            "tavo_message_find",
            json!({"indexRange": [5, 9]})
        )
        .await,
        json!([])
    );
    assert_eq!(
        lib.ok(Some(chat), "tavo_message_find", json!({"indexRange": 7}))
            .await,
        json!([])
    );
    let id = u["id"].as_i64().unwrap_or_default();
    lib.ok(
        Some(chat),
        "tavo_message_update",
        json!({"message": {"id": id, "content": "hello again"}}),
    )
    .await;
    assert_eq!(
        lib.ok(Some(chat), "tavo_message_get", json!({"id": {"id": id}}))
            .await["content"],
        json!("hello again")
    );
    lib.ok(Some(chat), "tavo_message_delete", json!({"id": id}))
        .await;
    assert_eq!(
        lib.err(Some(chat), "tavo_message_get", json!({"id": id}))
            .await["code"],
        json!("resource_not_found")
    );
    // Another chat's message is not reachable from this reply.
    let other = lib.chat("other");
    let m = lib
        .ok(
            Some(other),
            "tavo_message_append",
            json!({"message": {"content": "x", "role": "user"}}),
        )
        .await;
    assert_eq!(
        lib.err(Some(chat), "tavo_message_get", json!({"id": m["id"]}))
            .await["code"],
        json!("resource_not_found")
    );
    assert_eq!(
        lib.err(Some(chat), "tavo_message_get", json!({"id": 0}))
            .await["details"]["path"],
        json!("id")
    );
}

#[tokio::test]
async fn characters_create_find_update_delete_and_import() {
    let lib = Lib::new();
    let e = lib
        .err(
            None,
            "tavo_character_create",
            json!({"character": {"name": "Alice"}}),
        )
        .await;
    assert_eq!(e["details"]["path"], json!("character.firstMes"));
    let e = lib
        .err(
            None,
            "tavo_character_create",
            json!({"character": {"name": "Alice", "firstMes": "hi", "first_mes": "x"}}),
        )
        .await;
    assert_eq!(
        e["details"]["path"],
        json!("character.first_mes"),
        "unknown (snake_case) fields are rejected at the model door"
    );
    let id = lib
        .ok(
            None,
            "tavo_character_create",
            json!({"character": {"name": "Alice", "firstMes": "Hi.", "tags": ["guide"]}}),
        )
        .await["id"]
        .clone();
    let found = lib
        .ok(
            None,
            "tavo_character_find",
            json!({"name": "Ali", "options": {"match": "prefix"}}),
        )
        .await;
    assert_eq!(found[0]["firstMes"], json!("Hi."));
    assert_eq!(
        lib.ok(None, "tavo_character_find", json!({"name": "Ali"}))
            .await,
        json!([]),
        "exact is the default"
    );
    let e = lib
        .err(
            None,
            "tavo_character_find",
            json!({"name": "A", "options": {"match": "fuzzy"}}),
        )
        .await;
    assert_eq!(e["details"]["path"], json!("options.match"));
    assert_eq!(
        lib.err(None, "tavo_character_find", json!({"name": ""}))
            .await["details"]["path"],
        json!("name")
    );
    assert_eq!(
        lib.err(
            None,
            "tavo_character_find",
            json!({"name": "A", "selector": 1})
        )
        .await["details"]["path"],
        json!("selector")
    );
    lib.ok(
        None,
        "tavo_character_update",
        json!({"character": {"id": id, "personality": "patient"}}),
    )
    .await;
    let got = lib.ok(None, "tavo_character_get", json!({"id": id})).await;
    assert_eq!(got["personality"], json!("patient"));
    assert_eq!(got["tags"], json!(["guide"]), "fields not given are kept");
    assert_eq!(
        lib.ok(None, "tavo_character_all", json!({})).await[0]["name"],
        json!("Alice")
    );
    lib.ok(None, "tavo_character_delete", json!({"id": {"id": id}}))
        .await;
    assert_eq!(
        lib.err(None, "tavo_character_get", json!({"id": id})).await["code"],
        json!("resource_not_found")
    );
    assert_eq!(
        lib.err(None, "tavo_character_delete", json!({"id": id}))
            .await["code"],
        json!("resource_not_found")
    );
    assert_eq!(
        lib.err(
            None,
            "tavo_character_update",
            json!({"character": {"id": 999, "name": "x"}})
        )
        .await["code"],
        json!("resource_not_found")
    );
    // A CCv3 card with a lorebook is imported whole.
    let card = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "Bob", "first_mes": "Yo.", "description": "", "personality": "", "scenario": "", "mes_example": "",
        "character_book": {"name": "Bob's world", "entries": [{"keys": ["city"], "content": "A harbour city.", "enabled": true, "insertion_order": 0}]}
    }});
    let r = lib
        .ok(None, "tavo_character_import", json!({"card": card}))
        .await;
    assert!(
        r["characterId"].as_i64().is_some() && r["lorebookId"].as_i64().is_some(),
        "{r}"
    );
}

#[tokio::test]
async fn presets_report_nested_paths_and_missing_targets() {
    let lib = Lib::new();
    let id = lib.ok(None, "tavo_preset_create", json!({"preset": {"name": "Mine", "entries": [{"identifier": "main", "name": "Main", "content": "Be brief."}]}})).await["id"].clone();
    let e = lib
        .err(
            None,
            "tavo_preset_update",
            json!({"preset": {"id": id, "entries": [{"enabled": "yes"}]}}),
        )
        .await;
    assert_eq!(e["code"], json!("invalid_arguments"));
    assert_eq!(e["details"]["path"], json!("preset.entries[0].enabled"));
    assert_eq!(e["details"]["expected"], json!("boolean"));
    assert_eq!(e["details"]["actualType"], json!("string"));
    let e = lib
        .err(
            None,
            "tavo_preset_update",
            json!({"preset": {"id": 4242, "name": "x"}}),
        )
        .await;
    assert_eq!(e["code"], json!("resource_not_found"));
    let st = json!({"name": "From ST", "prompts": [{"identifier": "main", "name": "Main Prompt", "content": "Hi", "system_prompt": true}],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": "main", "enabled": true}]}]});
    let r = lib
        .ok(None, "tavo_preset_import", json!({"preset": st}))
        .await;
    assert!(r["presetId"].as_i64().is_some(), "{r}");
    assert_eq!(r["kind"], "preset");
    assert_eq!(r["regexId"], serde_json::Value::Null);
    assert_eq!(
        lib.ok(None, "tavo_preset_all", json!({}))
            .await
            .as_array()
            .map(Vec::len),
        Some(2)
    );
}

#[tokio::test]
async fn regex_and_lorebooks() {
    let lib = Lib::new();
    let e = lib
        .err(
            None,
            "tavo_regex_create",
            json!({"regex": {"name": "R", "entries": [{"name": "a", "placements": ["sideways"]}]}}),
        )
        .await;
    assert_eq!(
        e["details"]["path"],
        json!("regex.entries[0].placements[0]")
    );
    let r = lib.ok(None, "tavo_regex_import", json!({"regex": {"name": "高亮处理", "entries": [
        {"scriptName": "高亮", "findRegex": "\\[高亮:(.+?)\\]", "replaceString": "<mark>$1</mark>", "placement": [2], "disabled": false, "markdownOnly": true, "promptOnly": false, "runOnEdit": false, "substituteRegex": 0}
    ]}})).await;
    let all = lib.ok(None, "tavo_regex_all", json!({})).await;
    assert_eq!(all[0]["entries"], json!(1), "all() counts entries");
    assert_eq!(
        lib.ok(None, "tavo_regex_get", json!({"id": r["regexId"]}))
            .await["entries"][0]["placements"],
        json!(["char"])
    );
    let b = lib
        .ok(
            None,
            "tavo_lorebook_create",
            json!({"lorebook": {"name": "城市设定", "entries": []}}),
        )
        .await;
    let found = lib
        .ok(
            None,
            "tavo_lorebook_find",
            json!({"name": "城市", "options": {"match": "prefix"}}),
        )
        .await;
    assert_eq!(found[0]["id"], b["id"]);
    assert_eq!(
        lib.err(None, "tavo_lorebook_delete", json!({"id": 31337}))
            .await["code"],
        json!("resource_not_found")
    );
}

#[tokio::test]
async fn personas_and_the_chat_object() {
    let lib = Lib::new();
    let chat = lib.chat("c");
    let e = lib
        .err(
            None,
            "tavo_persona_create",
            json!({"persona": {"name": "Detective"}}),
        )
        .await;
    assert_eq!(e["details"]["path"], json!("persona.description"));
    let p = lib
        .ok(
            None,
            "tavo_persona_create",
            json!({"persona": {"name": "Detective", "description": "Careful."}}),
        )
        .await;
    let c = lib
        .ok(
            None,
            "tavo_character_create",
            json!({"character": {"name": "Alice", "firstMes": "Hi."}}),
        )
        .await;
    let updated = lib
        .ok(Some(chat), "tavo_chat_update", json!({"chat": {"name": "Case", "characters": [c["id"]], "persona": p["id"], "background": {"color": "#222222"}}}))
        .await;
    assert_eq!(updated["name"], json!("Case"));
    assert_eq!(updated["characters"][0]["name"], json!("Alice"));
    assert_eq!(updated["persona"]["name"], json!("Detective"));
    let cur = lib.ok(Some(chat), "tavo_chat_current", json!({})).await;
    assert_eq!(cur["background"]["color"], json!("#222222"));
    let cleared = lib
        .ok(
            Some(chat),
            "tavo_chat_update",
            json!({"chat": {"background": null}}),
        )
        .await;
    assert!(cleared["background"].is_null());
    assert_eq!(
        cleared["persona"]["name"],
        json!("Detective"),
        "absent keys are left alone"
    );
    let e = lib
        .err(
            Some(chat),
            "tavo_chat_update",
            json!({"chat": {"background": {"color": "red"}}}),
        )
        .await;
    assert_eq!(e["details"]["path"], json!("chat.background.color"));
    // With one character, assistant messages infer the speaker.
    let m = lib
        .ok(
            Some(chat),
            "tavo_message_append",
            json!({"message": {"content": "Hello."}}),
        )
        .await;
    assert_eq!(
        lib.ok(Some(chat), "tavo_message_get", json!({"id": m["id"]}))
            .await["characterId"],
        c["id"]
    );
    assert_eq!(
        lib.err(None, "tavo_chat_current", json!({})).await["code"],
        json!("resource_not_found")
    );
}

#[tokio::test]
async fn memory_append_does_not_switch_injection_on() {
    let lib = Lib::new();
    let chat = lib.chat("mem");
    let m = lib.ok(Some(chat), "tavo_memory_get", json!({})).await;
    assert_eq!(m["enabled"], json!(false));
    let m = lib
        .ok(
            Some(chat),
            "tavo_memory_append",
            json!({"memories": ["likes tea", "dislikes noise"]}),
        )
        .await;
    assert_eq!(m["enabled"], json!(false));
    assert_eq!(m["memories"], json!(["likes tea", "dislikes noise"]));
    assert_eq!(
        lib.err(Some(chat), "tavo_memory_append", json!({"memories": []}))
            .await["details"]["path"],
        json!("memories")
    );
    assert_eq!(
        lib.err(
            Some(chat),
            "tavo_memory_append",
            json!({"memories": ["ok", ""]})
        )
        .await["details"]["path"],
        json!("memories[1]")
    );
    let whole = lib.ok(Some(chat), "tavo_memory_get", json!({})).await;
    let m = lib
        .ok(
            Some(chat),
            "tavo_memory_update",
            json!({"memory": {"id": whole["id"], "enabled": true, "memories": ["one"]}}),
        )
        .await;
    assert_eq!(m["memories"], json!(["one"]));
    let m = lib
        .ok(
            Some(chat),
            "tavo_memory_update",
            json!({"memory": {"enabled": false}}),
        )
        .await;
    assert_eq!(
        m["memories"],
        json!(["one"]),
        "a partial update keeps the list"
    );
}

#[tokio::test]
async fn input_draft_is_strings_only_and_per_chat() {
    let lib = Lib::new();
    let a = lib.chat("a");
    let b = lib.chat("b");
    lib.ok(Some(a), "tavo_input_set", json!({"text": "你好"}))
        .await;
    assert_eq!(
        lib.ok(Some(a), "tavo_input_append", json!({"text": "！"}))
            .await["text"],
        json!("你好！")
    );
    assert_eq!(
        lib.ok(Some(b), "tavo_input_get", json!({})).await["text"],
        json!("")
    );
    assert_eq!(
        lib.err(Some(a), "tavo_input_set", json!({"text": 5})).await["details"]["path"],
        json!("text")
    );
    lib.ok(Some(a), "tavo_input_clear", json!({})).await;
    assert_eq!(
        lib.ok(Some(a), "tavo_input_get", json!({})).await["text"],
        json!("")
    );
    assert_eq!(
        lib.ok(Some(a), "tavo_message_count", json!({})).await["count"],
        json!(0),
        "never sends"
    );
}

#[tokio::test]
async fn image_and_tts_without_providers() {
    let lib = Lib::new();
    let chat = lib.chat("media");
    let e = lib
        .err(
            Some(chat),
            "tavo_image_generate",
            json!({"prompt": "a cat", "options": {"referenceImages": [42]}}),
        )
        .await;
    assert_eq!(e["details"]["path"], json!("options.referenceImages[0]"));
    let e = lib
        .err(
            Some(chat),
            "tavo_image_generate",
            json!({"prompt": "a cat", "options": {"referenceImages": ["/etc/passwd"]}}),
        )
        .await;
    assert_eq!(e["details"]["path"], json!("options.referenceImages[0]"));
    let e = lib.err(Some(chat), "tavo_image_generate", json!({"prompt": "a cat", "options": {"aspectRatio": "16:9", "extraBody": {"seed": 1}}})).await;
    assert_eq!(
        e["code"],
        json!("resource_not_found"),
        "no image endpoint configured"
    );
    let e = lib
        .err(Some(chat), "tavo_tts_play", json!({"text": "hi"}))
        .await;
    assert_eq!(
        e["details"]["path"],
        json!("options"),
        "the voice must be chosen explicitly"
    );
    let e = lib
        .err(
            Some(chat),
            "tavo_tts_play",
            json!({"text": "hi", "options": {"voice": {"character": 77}}}),
        )
        .await;
    assert_eq!(
        e["code"],
        json!("resource_not_found"),
        "target does not exist"
    );
    let c = lib
        .ok(
            None,
            "tavo_character_create",
            json!({"character": {"name": "V", "firstMes": "."}}),
        )
        .await;
    let e = lib
        .err(
            Some(chat),
            "tavo_tts_play",
            json!({"text": "hi", "options": {"voice": {"character": {"id": c["id"]}}}}),
        )
        .await;
    assert_eq!(
        e["code"],
        json!("resource_not_found"),
        "no voice binding without a TTS provider"
    );
}
