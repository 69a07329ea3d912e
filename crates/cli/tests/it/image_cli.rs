//! `tavo image …` as a user runs it: the real binary, the image mock (`tavo_testkit::image`)
//! on loopback, a library in a scratch directory — connections with write-only keys, images
//! written to a file or stored in the library, `/imagine` through `tavo image imagine` and
//! `tavo reply`, the model's `tavo_image_generate` through `tavo tool call`, and failures
//! reported without the key.

use crate::support::{json, ok, tavo};
use serde_json::{Value, json};
use tavo_testkit::image::{MockImage, png};

const KEY: &str = "sk-cli-image-0123456789abcdef";

#[test]
fn image_connections_generate_imagine_and_the_tool() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mock = rt
        .block_on(MockImage::start())
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    let base = format!("{}/v1", mock.base());

    // No connection: a clear error, exit 1.
    let out = tavo(&data, &["image", "generate", "a cat"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("resource_not_found") && err.contains("tavo image connection add"),
        "{err}"
    );

    ok(tavo(
        &data,
        &[
            "image",
            "connection",
            "add",
            "main",
            "--platform",
            "openai",
            "--model",
            "dall-e-3",
            "--base-url",
            &base,
            "--api-key",
            KEY,
            "--option",
            "quality=\"hd\"",
        ],
    ));
    let list = json(tavo(&data, &["image", "connection", "list", "--json"]));
    assert_eq!(list["default"], "main");
    assert!(!list.to_string().contains(KEY), "{list}");
    let shown = json(tavo(&data, &["image", "connection", "show", "main"]));
    assert_eq!(
        (
            shown["platform"].clone(),
            shown["options"]["quality"].clone()
        ),
        (json!("openai"), json!("hd"))
    );
    assert!(!shown.to_string().contains(KEY));

    // -o FILE: the bytes in the file, nothing in the library.
    let file = dir.path().join("cat.png");
    ok(tavo(
        &data,
        &[
            "image",
            "generate",
            "a cat",
            "--size",
            "512x512",
            "-o",
            &file.to_string_lossy(),
        ],
    ));
    assert_eq!(std::fs::read(&file).unwrap_or_default(), png());
    let sent = mock.requests().pop().unwrap_or_else(|| panic!("a request"));
    assert_eq!(sent.body["size"], "512x512");
    assert_eq!(
        sent.body["quality"], "hd",
        "the connection's options go along"
    );

    // A card and a chat; stored in the chat's files.
    let card = dir.path().join("card.json");
    let body = json!({"spec": "chara_card_v2", "spec_version": "2.0",
        "data": {"name": "Painter", "description": "Paints.", "first_mes": "Hello."}});
    std::fs::write(&card, body.to_string()).unwrap_or_else(|e| panic!("{e}"));
    ok(tavo(&data, &["import", &card.to_string_lossy()]));
    ok(tavo(&data, &["chat", "create", "--character", "1"]));
    let stored = json(tavo(
        &data,
        &[
            "image",
            "generate",
            "a cat",
            "--chat",
            "1",
            "--save-as",
            "cat.png",
            "--json",
        ],
    ));
    assert_eq!(stored["path"], "files/chat/cat.png");
    assert_eq!(stored["size"], png().len());

    // The model's tool, exactly as a model calls it.
    let called = json(tavo(
        &data,
        &[
            "tool",
            "call",
            "tavo_image_generate",
            "--chat",
            "1",
            r#"{"prompt": "a fox", "options": {"referenceImages": ["files/chat/cat.png"]}}"#,
        ],
    ));
    assert_eq!(called["ok"], true, "{called}");
    assert!(
        called["result"]["path"]
            .as_str()
            .is_some_and(|p| p.starts_with("files/chat/image-")),
        "{called}"
    );
    let edits = mock.requests().pop().unwrap_or_else(|| panic!("a request"));
    assert_eq!(
        edits.path, "/v1/images/edits",
        "a reference image is an edit"
    );

    // /imagine from `tavo reply` and `tavo image imagine`.
    let out = ok(tavo(
        &data,
        &["reply", "--chat", "1", "--message", "/imagine a red barn"],
    ));
    assert!(out.contains("[生成了一张图片：a red barn]"), "{out}");
    let done = json(tavo(
        &data,
        &["image", "imagine", "--chat", "1", "a blue barn", "--json"],
    ));
    assert_eq!(done["content"], "[生成了一张图片：a blue barn]");
    let messages = json(tavo(&data, &["message", "list", "--chat", "1", "--json"]));
    let last = messages
        .as_array()
        .and_then(|l| l.last())
        .cloned()
        .or_else(|| {
            messages["messages"]
                .as_array()
                .and_then(|l| l.last())
                .cloned()
        })
        .unwrap_or_default();
    assert_eq!(last["extra"]["image"], done["path"], "{last}");

    // Failures: a refused key never printed; a provider failure named.
    ok(tavo(
        &data,
        &[
            "image",
            "connection",
            "update",
            "main",
            "--api-key",
            "bad-key",
        ],
    ));
    let out = tavo(&data, &["image", "generate", "a cat"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("permission_denied") && !err.contains("bad-key"),
        "{err}"
    );
    ok(tavo(
        &data,
        &["image", "connection", "update", "main", "--api-key", KEY],
    ));
    let out = tavo(&data, &["image", "generate", "FAIL 500"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("HTTP 500") && !err.contains("/srv/provider"),
        "{err}"
    );

    // update / default / remove.
    ok(tavo(
        &data,
        &[
            "image",
            "connection",
            "add",
            "nai",
            "--platform",
            "novelai",
            "--model",
            "nai-diffusion-4-5-full",
            "--base-url",
            &mock.base(),
            "--api-key-env",
            "NAI_TOKEN_FOR_TEST",
        ],
    ));
    ok(tavo(&data, &["image", "connection", "default", "nai"]));
    let out = tavo(&data, &["image", "generate", "a cat"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("NAI_TOKEN_FOR_TEST"),
        "a missing env key is named: {err}"
    );
    ok(tavo(&data, &["image", "connection", "remove", "nai"]));
    let list = json(tavo(&data, &["image", "connection", "list", "--json"]));
    assert_eq!(list["connections"].as_array().map(Vec::len), Some(1));
    assert_eq!(list["default"], Value::Null);
    let out = tavo(
        &data,
        &["image", "connection", "update", "zz", "--model", "m"],
    );
    assert!(!out.status.success());
}
