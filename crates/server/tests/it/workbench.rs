//! The workbench's routes: the prompt inspector's explain record (the CLI's, from one function),
//! the regex tester (the engine's pipeline, JavaScript semantics), a card's own assets and
//! token counts. Each writes nothing.

use crate::support::{TestServer, client, get, json_of, post};
use serde_json::{Value, json};

#[tokio::test]
async fn the_prompt_route_is_the_explain_record_and_changes_nothing() {
    let s = TestServer::start().await;
    let (_, c) = post(
        &s,
        "/api/library/character",
        json!({"name": "Mira", "description": "Keeps an inn.", "firstMes": "Welcome."}),
    )
    .await;
    let (_, b) = post(
        &s,
        "/api/library/lorebook",
        json!({"name": "W", "entries": [
            {"identifier": "d", "name": "Dragon", "content": "A dragon.", "keywords": ["welcome"]},
            {"identifier": "x", "name": "Off", "content": "No.", "strategy": "constant", "enabled": false}]}),
    )
    .await;
    let (st, chat) = post(
        &s,
        "/api/chats",
        json!({"characters": [c["id"]], "lorebooks": [b["id"]]}),
    )
    .await;
    assert_eq!(st, 201, "{chat}");
    let id = chat["id"].as_i64().expect("id");
    let (_, before) = get(&s, &format!("/api/library/chat/{id}")).await;
    let (st, e) = get(&s, &format!("/api/chats/{id}/prompt")).await;
    assert_eq!(st, 200, "{e}");
    for key in [
        "messages",
        "tools",
        "toolChoice",
        "model",
        "parameters",
        "activatedEntries",
        "skippedEntries",
        "regexApplied",
        "tokens",
        "diagnostics",
        "messageSources",
        "historyCut",
    ] {
        assert!(e.get(key).is_some(), "{key} missing: {e}");
    }
    assert_eq!(e["activatedEntries"][0]["identifier"], "d");
    // One list of sources per message sent.
    assert_eq!(
        e["messageSources"].as_array().map(Vec::len),
        e["messages"].as_array().map(Vec::len),
        "{e}"
    );
    assert_eq!(e["skippedEntries"][0]["gate"], "disabled");
    let text = e["messages"].to_string();
    assert!(
        text.contains("A dragon.") && text.contains("Keeps an inn."),
        "{text}"
    );
    let parts: u64 = e["tokens"]["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .map(|p| p["tokens"].as_u64().unwrap_or(0))
        .sum();
    assert!(parts > 0 && parts <= e["tokens"]["total"].as_u64().unwrap_or(0));
    let (_, after) = get(&s, &format!("/api/library/chat/{id}")).await;
    assert_eq!(before["revision"], after["revision"], "nothing written");
    let (st, bad) = get(&s, &format!("/api/chats/{id}/prompt?kind=sideways")).await;
    assert_eq!(st, 400, "{bad}");
    assert_eq!(bad["error"]["details"]["path"], "kind");
    let (st, _) = get(&s, "/api/chats/999/prompt").await;
    assert_eq!(st, 404);
}

#[tokio::test]
async fn the_regex_tester_runs_the_engines_pipeline() {
    let s = TestServer::start().await;
    let rule = json!({"findRegex": "/(?<u>\\w+)@(\\w+)/g", "replaceString": "[$2 by $<u>, {{char}}]",
                      "trimStrings": ["x"], "placements": ["char"], "timing": "display"});
    let (st, t) = post(
        &s,
        "/api/regex/test",
        json!({"rule": rule, "text": "ax@b 😀 c@dx", "char": "Mira"}),
    )
    .await;
    assert_eq!(st, 200, "{t}");
    assert_eq!(t["output"], "[b by a, Mira] 😀 [d by c, Mira]");
    assert_eq!(t["replacements"], 2);
    assert_eq!(t["stage"], "display");
    assert_eq!(
        t["matches"][1]["index"], 8,
        "UTF-16: the emoji is two units"
    );
    assert_eq!(t["matches"][1]["text"], "c@dx");
    // A bare pattern: the first match only, as SillyTavern.
    let (_, t) = post(
        &s,
        "/api/regex/test",
        json!({"rule": {"findRegex": "a", "replaceString": "b"}, "text": "aaa"}),
    )
    .await;
    assert_eq!(t["output"], "baa");
    // Outside its depth bounds it does nothing and says why.
    let (_, t) = post(
        &s,
        "/api/regex/test",
        json!({"rule": {"findRegex": "a", "replaceString": "b", "maxDepth": 1}, "text": "a", "depth": 4}),
    )
    .await;
    assert_eq!(t["output"], "a");
    assert!(t["skipped"].as_str().is_some_and(|m| m.contains("depth 4")));
    // A bad pattern is the pipeline's error, the text unchanged.
    let (_, t) = post(
        &s,
        "/api/regex/test",
        json!({"rule": {"findRegex": "/(/", "replaceString": "b"}, "text": "abc"}),
    )
    .await;
    assert_eq!(t["output"], "abc");
    assert!(t["error"].as_str().is_some(), "{t}");
    let (st, big) = post(
        &s,
        "/api/regex/test",
        json!({"rule": {"findRegex": "a"}, "text": "a".repeat(300_000)}),
    )
    .await;
    assert_eq!(st, 413, "over the route's body limit: {big}");
}

#[tokio::test]
async fn a_cards_own_assets_and_token_counts() {
    let s = TestServer::start().await;
    let (_, c) = post(
        &s,
        "/api/library/character",
        json!({"name": "Mira", "firstMes": "Hi."}),
    )
    .await;
    let (st, owned) = get(&s, &format!("/api/characters/{}/owned", c["id"])).await;
    assert_eq!(st, 200, "{owned}");
    assert_eq!(owned, json!({"lorebooks": [], "regexes": []}));
    let (st, _) = get(&s, "/api/characters/999/owned").await;
    assert_eq!(st, 404);
    let (st, t) = post(
        &s,
        "/api/tokens",
        json!({"texts": ["", "hello world", "hello world hello world"]}),
    )
    .await;
    assert_eq!(st, 200, "{t}");
    assert_eq!(t["model"], "gpt-4o");
    assert_eq!(t["encoding"], "o200k_base");
    let counts: Vec<u64> = t["counts"]
        .as_array()
        .expect("counts")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    assert_eq!(counts[0], 0);
    assert_eq!(counts[2], counts[1] * 2);
}

#[tokio::test]
async fn an_avatar_upload_replaces_the_image_and_refuses_what_is_not_one() {
    let s = TestServer::start().await;
    let (_, c) = post(
        &s,
        "/api/library/character",
        json!({"name": "Mira", "firstMes": "Hi."}),
    )
    .await;
    let id = c["id"].as_i64().expect("id");
    // The smallest PNG signature the sniffer accepts, then any bytes: the store keeps them.
    let png = b"\x89PNG\r\n\x1a\nnot really pixels".to_vec();
    let put = |body: Vec<u8>, id: i64| {
        client()
            .put(s.url(&format!("/api/characters/{id}/avatar")))
            .header("content-type", "image/png")
            .body(body)
            .send()
    };
    let r = put(png.clone(), id).await.expect("send");
    assert_eq!(r.status().as_u16(), 204);
    let got = client()
        .get(s.url(&format!("/api/characters/{id}/avatar")))
        .send()
        .await
        .expect("send");
    assert_eq!(got.status().as_u16(), 200);
    assert_eq!(got.bytes().await.expect("bytes").to_vec(), png);
    let (st, bad) = json_of(put(b"GIF? no".to_vec(), id).await.expect("send")).await;
    assert_eq!(st, 400, "{bad}");
    assert_eq!(bad["error"]["details"]["path"], "body");
    let (st, _) = json_of(put(png, 999).await.expect("send")).await;
    assert_eq!(st, 404);
}
