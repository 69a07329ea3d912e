//! `POST /api/import` of SillyTavern files: `settings.json` gives one result per persona; a
//! group definition takes the upload's part named after its chat as its group chat.

use crate::support::{TestServer, client, json_of, multipart};
use serde_json::json;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../formats/tests/data/st")
            .join(name),
    )
    .expect("fixture")
}

#[tokio::test]
async fn settings_and_a_group_with_its_chat_file() {
    let s = TestServer::start().await;
    let ann =
        br#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ann","first_mes":"hi"}}"#;
    let bo =
        br#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Bo","first_mes":"hi"}}"#;
    let (settings, group, chat) = (
        fixture("settings.json"),
        fixture("group.json"),
        fixture("2024-7-19@22h51m00s.jsonl"),
    );
    let (ct, body) = multipart(
        &[
            ("Ann.json", ann),
            ("Bo.json", bo),
            ("settings.json", &settings),
            ("1721432460000.json", &group),
            ("2024-7-19@22h51m00s.jsonl", &chat),
        ],
        &[],
    );
    let r = client()
        .post(s.url("/api/import"))
        .header("content-type", ct)
        .body(body)
        .send()
        .await
        .expect("send");
    let (status, out) = json_of(r).await;
    assert_eq!(status, 200, "{out}");
    assert_eq!(
        (out["imported"].clone(), out["failed"].clone()),
        (json!(5), json!(0)),
        "{out}"
    );
    let results = out["results"].as_array().expect("results");
    let kinds: Vec<(&str, &str)> = results
        .iter()
        .map(|r| {
            (
                r["file"].as_str().unwrap_or(""),
                r["kind"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("Ann.json", "character"),
            ("Bo.json", "character"),
            ("settings.json", "persona"),
            ("settings.json", "persona"),
            ("settings.json", "persona"),
            ("1721432460000.json", "chat"),
        ]
    );
    let chat_id = results[5]["chatId"].as_i64().expect("chatId");
    let r = client()
        .get(s.url(&format!("/api/library/chat/{chat_id}")))
        .send()
        .await
        .expect("send");
    let (status, chat) = json_of(r).await;
    assert_eq!(status, 200, "{chat}");
    assert_eq!(chat["replyMode"], "all");
    assert_eq!(chat["characters"].as_array().map(Vec::len), Some(2));
}
