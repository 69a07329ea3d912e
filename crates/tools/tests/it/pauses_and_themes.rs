//! Operations that need the user (`tavo_ask_user`, theme import conflicts), themes, and the
//! error codes that only appear in unusual situations.

use crate::support::Lib;
use serde_json::json;
use tavo_tools::UserAnswer;

#[tokio::test]
async fn ask_user_pauses_and_resumes_with_the_seed_answer_shapes() {
    let lib = Lib::new();
    let args = json!({
        "question": "文件应该保存到哪个作用域？",
        "options": [{"value": "chat", "label": "当前聊天"}, {"value": "global", "label": "所有聊天", "description": "跨聊天", "meta": "shared"}],
        "allowOther": false,
        "defaultValue": "chat"
    });
    let (q, env) = lib
        .answered(
            None,
            "tavo_ask_user",
            args.clone(),
            UserAnswer::Option {
                value: "global".into(),
            },
        )
        .await;
    assert!(!q.allow_other);
    assert_eq!(q.options[1].meta.as_deref(), Some("shared"));
    assert_eq!(
        env,
        json!({"ok": true, "result": {"status": "answered", "answer": "global", "source": "option"}})
    );
    let (_, env) = lib
        .answered(
            None,
            "tavo_ask_user",
            json!({"question": "Name?"}),
            UserAnswer::Custom {
                text: "  Zed ".into(),
            },
        )
        .await;
    assert_eq!(
        env["result"],
        json!({"status": "answered", "answer": "Zed", "source": "custom"})
    );
    let (_, env) = lib
        .answered(
            None,
            "tavo_ask_user",
            json!({"question": "Name?"}),
            UserAnswer::Cancelled,
        )
        .await;
    assert_eq!(env["result"], json!({"status": "cancelled"}));
    for (bad, path) in [
        (json!({"question": "Q", "options": [""]}), "options[0]"),
        (json!({"question": "Q", "allowOther": false}), "options"),
        (
            json!({"question": "Q", "options": ["a"], "allowOther": false, "defaultValue": "b"}),
            "defaultValue",
        ),
        (
            json!({"question": "Q", "options": [{"value": "a", "label": "A", "icon": "x"}]}),
            "options[0]",
        ),
        (json!({"question": "Q", "timeout": 5}), "timeout"),
    ] {
        let e = lib.err(None, "tavo_ask_user", bad.clone()).await;
        assert_eq!(e["code"], json!("invalid_arguments"), "{bad}");
        assert!(
            e["details"]["path"]
                .as_str()
                .is_some_and(|p| p.starts_with(path)),
            "{bad}: {e}"
        );
    }
}

#[tokio::test]
async fn themes_crud_and_official_themes_are_read_only() {
    let lib = Lib::new();
    let all = lib.ok(None, "tavo_theme_all", json!({})).await;
    let official = all[0]["id"].clone();
    assert_eq!(all[0]["official"], json!(true));
    let e = lib
        .err(
            None,
            "tavo_theme_update",
            json!({"theme": {"id": official, "name": "Mine"}}),
        )
        .await;
    assert_eq!(e["code"], json!("permission_denied"));
    assert_eq!(
        lib.err(None, "tavo_theme_delete", json!({"id": official}))
            .await["code"],
        json!("permission_denied")
    );
    let created = lib
        .ok(
            None,
            "tavo_theme_create",
            json!({"theme": {
                "name": "Night",
                "userBubble": {"color": "#112233"},
                "userBubbleFont": {"textStyle": {"color": "#FFFFFF"}},
                "characterBubbleFont": {"textStyle": {"color": "#EEEEEE"}},
                "inputArea": {"color": "#000000", "fontColor": "#FFFFFF"},
                "thinkingLabel": {"fontColor": "#999999"},
                "avatar": {"shape": "circle"}
            }}),
        )
        .await;
    let id = created["id"].clone();
    let e = lib
        .err(
            None,
            "tavo_theme_create",
            json!({"theme": {"name": "X", "userBubble": {"fill": "#fff"}}}),
        )
        .await;
    assert_eq!(e["details"]["path"], json!("theme.userBubble.fill"));
    let e = lib
        .err(
            None,
            "tavo_theme_create",
            json!({"theme": {"name": "X", "userBubbleFont": {"textStyle": {"color": "white"}}}}),
        )
        .await;
    assert_eq!(
        e["details"]["path"],
        json!("theme.userBubbleFont.textStyle.color")
    );
    assert_eq!(
        lib.err(
            None,
            "tavo_theme_create",
            json!({"theme": {"name": "Night"}})
        )
        .await["details"]["path"],
        json!("theme.name")
    );
    lib.ok(
        None,
        "tavo_theme_update",
        json!({"theme": {"id": id, "userBubble": {"borderRadius": 8}}}),
    )
    .await;
    let got = lib.ok(None, "tavo_theme_get", json!({"id": id})).await;
    assert_eq!(
        got["userBubble"],
        json!({"color": "#112233", "borderRadius": 8.0}),
        "nested fields merge"
    );
    assert_eq!(
        lib.ok(
            None,
            "tavo_theme_find",
            json!({"name": "ight", "options": {"match": "suffix"}})
        )
        .await
        .as_array()
        .map(Vec::len),
        Some(2)
    );
    assert_eq!(
        lib.ok(
            None,
            "tavo_theme_find",
            json!({"name": "Nig", "options": {"match": "prefix"}})
        )
        .await[0]["id"],
        id
    );
    lib.ok(None, "tavo_theme_delete", json!({"id": id})).await;
    assert_eq!(
        lib.err(None, "tavo_theme_get", json!({"id": id})).await["code"],
        json!("resource_not_found")
    );
}

#[tokio::test]
async fn theme_export_and_import_through_chat_files_ask_overwrite_or_copy() {
    let lib = Lib::new();
    let chat = lib.chat("themes");
    let id = lib
        .ok(
            None,
            "tavo_theme_create",
            json!({"theme": {"name": "Dawn", "background": {"color": "#FFEEDD"}}}),
        )
        .await["id"]
        .clone();
    let exported = lib
        .ok(Some(chat), "tavo_theme_export", json!({"id": id}))
        .await;
    assert_eq!(exported["path"], json!("files/chat/Dawn.thm"));
    // Same name: the user chooses.
    let (q, env) = lib
        .answered(
            Some(chat),
            "tavo_theme_import",
            json!({"name": "Dawn.thm"}),
            UserAnswer::Option {
                value: "copy".into(),
            },
        )
        .await;
    assert_eq!(
        q.options
            .iter()
            .map(|o| o.value.as_str())
            .collect::<Vec<_>>(),
        vec!["overwrite", "copy"]
    );
    assert_eq!(env["result"]["status"], json!("created"));
    let copy = lib
        .ok(None, "tavo_theme_get", json!({"id": env["result"]["id"]}))
        .await;
    assert_eq!(copy["name"], json!("Dawn (copy)"));
    assert_eq!(copy["background"]["color"], json!("#FFEEDD"));
    lib.ok(
        None,
        "tavo_theme_update",
        json!({"theme": {"id": id, "background": {"color": "#000000"}}}),
    )
    .await;
    let (_, env) = lib
        .answered(
            Some(chat),
            "tavo_theme_import",
            json!({"name": "Dawn.thm"}),
            UserAnswer::Option {
                value: "overwrite".into(),
            },
        )
        .await;
    assert_eq!(env["result"], json!({"id": id, "status": "overwritten"}));
    assert_eq!(
        lib.ok(None, "tavo_theme_get", json!({"id": id})).await["background"]["color"],
        json!("#FFEEDD")
    );
    let (_, env) = lib
        .answered(
            Some(chat),
            "tavo_theme_import",
            json!({"name": "Dawn.thm"}),
            UserAnswer::Cancelled,
        )
        .await;
    assert_eq!(env["result"]["status"], json!("cancelled"));
    // A new name imports directly; a broken file is refused; a missing one is not found.
    lib.ok(
        Some(chat),
        "tavo_file_save",
        json!({"name": "new.thm", "content": "{\"name\": \"Fresh\"}"}),
    )
    .await;
    assert_eq!(
        lib.ok(Some(chat), "tavo_theme_import", json!({"name": "new.thm"}))
            .await["status"],
        json!("created")
    );
    lib.ok(
        Some(chat),
        "tavo_file_save",
        json!({"name": "bad.thm", "content": "{\"name\": \"B\", \"userBubble\": {\"fill\": 1}}"}),
    )
    .await;
    assert_eq!(
        lib.err(Some(chat), "tavo_theme_import", json!({"name": "bad.thm"}))
            .await["code"],
        json!("invalid_arguments")
    );
    assert_eq!(
        lib.err(Some(chat), "tavo_theme_import", json!({"name": "none.thm"}))
            .await["code"],
        json!("resource_not_found")
    );
    assert_eq!(
        lib.err(Some(chat), "tavo_theme_import", json!({"name": "x.txt"}))
            .await["details"]["path"],
        json!("name")
    );
    // The official theme can only be copied.
    let official = lib.ok(None, "tavo_theme_get", json!({"id": 1})).await;
    lib.ok(Some(chat), "tavo_file_save", json!({"name": "o.thm", "content": serde_json::to_string(&json!({"name": official["name"]})).unwrap_or_default()})).await;
    let (q, _) = lib
        .answered(
            Some(chat),
            "tavo_theme_import",
            json!({"name": "o.thm"}),
            UserAnswer::Option {
                value: "copy".into(),
            },
        )
        .await;
    assert_eq!(q.options.len(), 1);
}

#[tokio::test]
async fn internal_errors_do_not_leak_paths() {
    let lib = Lib::new();
    let chat = lib.chat("broken");
    // Make the chat's file directory a regular file: every write fails inside the store.
    let dir = lib.store.data_dir().join("files").join("chat");
    std::fs::create_dir_all(&dir).unwrap_or_default();
    std::fs::write(dir.join(chat.to_string()), b"not a directory").unwrap_or_default();
    let e = lib
        .err(
            Some(chat),
            "tavo_file_save",
            json!({"name": "a.txt", "content": "x"}),
        )
        .await;
    assert_eq!(e["code"], json!("internal_error"));
    let text = e.to_string();
    assert!(
        !text.contains(lib.store.data_dir().to_string_lossy().as_ref()),
        "{text}"
    );
    assert!(!text.contains("files/chat/"), "{text}");
}

#[tokio::test]
async fn apply_makes_a_theme_the_apps_current_one() {
    // Seed 000: "更新或重新绑定当前主题时": a tool may rebind the current theme, which is the
    // library setting the open app follows.
    let lib = Lib::new();
    let created = lib
        .ok(
            None,
            "tavo_theme_create",
            json!({"theme": {"name": "Dusk"}, "apply": false}),
        )
        .await;
    let id = created["id"].as_i64().expect("id");
    let current = || {
        lib.store
            .setting_get(tavo_tools::theme_store::CURRENT_KEY)
            .expect("setting")
    };
    assert_eq!(
        current(),
        None,
        "apply: false leaves the current theme alone"
    );
    lib.ok(
        None,
        "tavo_theme_update",
        json!({"theme": {"id": id, "background": {"color": "#FF102030"}}, "apply": true}),
    )
    .await;
    assert_eq!(current(), Some(json!(id)));
    let e = lib
        .err(
            None,
            "tavo_theme_update",
            json!({"theme": {"id": id}, "apply": "yes"}),
        )
        .await;
    assert_eq!(e["details"]["path"], json!("apply"), "{e}");
}
