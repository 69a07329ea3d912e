//! Signed file URLs for bubble frames (`tavo.file.url` on a token-protected server): the app
//! signs with its token, the URL then serves that one file without any credential, and a
//! changed chat, scope, name, expiry or signature, a missing one and an expired one are
//! refused with 403; the unsigned file routes still need the token.

use crate::support::{TOKEN, TestServer, bare_client, bearer_client, json_of, make_chat};
use serde_json::{Value, json};

async fn save(s: &TestServer, chat: i64, name: &str, content: &str, scope: &str) {
    let (st, v) = json_of(
        bearer_client()
            .post(s.url(&format!("/api/ops/tavo_file_save?chat={chat}")))
            .json(&json!({"name": name, "content": content, "options": {"scope": scope}}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(st, 200, "{v}");
}

async fn sign(s: &TestServer, chat: i64, body: Value) -> (u16, Value) {
    json_of(
        bearer_client()
            .post(s.url(&format!("/api/chats/{chat}/files/sign")))
            .json(&body)
            .send()
            .await
            .expect("send"),
    )
    .await
}

async fn fetch(s: &TestServer, path: &str) -> (u16, String) {
    let r = bare_client().get(s.url(path)).send().await.expect("send");
    (r.status().as_u16(), r.text().await.expect("body"))
}

#[tokio::test]
async fn a_signed_url_serves_one_file_without_a_token_and_refuses_tampering_and_expiry() {
    let s = TestServer::start_with(|c| c.token = Some(TOKEN.into())).await;
    let chat = make_chat(&s.store, "signed");
    let other = make_chat(&s.store, "other");
    save(&s, chat, "note one.txt", "hello signed", "chat").await;
    save(&s, chat, "b.txt", "the other file", "chat").await;
    save(&s, chat, "logo.txt", "global file", "global").await;

    // Without the token nothing is signed, and the plain file route stays closed.
    let r = bare_client()
        .post(s.url(&format!("/api/chats/{chat}/files/sign")))
        .header("x-tavo-request", "1")
        .json(&json!({"files": [{"name": "b.txt"}]}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 401);
    let (st, _) = fetch(&s, &format!("/api/chats/{chat}/files/b.txt")).await;
    assert_eq!(st, 401);

    let (st, v) = sign(
        &s,
        chat,
        json!({"files": [{"name": "note one.txt"}, {"name": "logo.txt", "scope": "global"}]}),
    )
    .await;
    assert_eq!(st, 200, "{v}");
    let url = v["urls"][0]["url"].as_str().expect("url").to_owned();
    let global = v["urls"][1]["url"].as_str().expect("url").to_owned();
    assert!(
        url.starts_with(&format!(
            "/api/signed/chats/{chat}/files/chat/note%20one.txt?e="
        )),
        "{url}"
    );
    let expires = v["expires"].as_u64().expect("expires");

    let r = bare_client().get(s.url(&url)).send().await.expect("send");
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-security-policy"]
            .to_str()
            .unwrap_or("")
            .starts_with("sandbox")
    );
    assert_eq!(r.text().await.expect("body"), "hello signed");
    assert_eq!(fetch(&s, &global).await, (200, "global file".to_owned()));
    // A sandboxed frame's `<img>` may send `Origin: null`: the signature still decides.
    let r = bare_client()
        .get(s.url(&url))
        .header("origin", "null")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let r = bare_client()
        .get(s.url(&format!("/api/chats/{chat}/files/b.txt")))
        .header("origin", "null")
        .send()
        .await
        .expect("send");
    assert_eq!(
        r.status(),
        403,
        "an opaque origin is still refused elsewhere"
    );

    // Tampering: another name, scope, chat, expiry or signature.
    let sig = url.split("&s=").nth(1).expect("sig").to_owned();
    let tampered = [
        url.replace("note%20one.txt", "b.txt"),
        url.replace("/files/chat/", "/files/global/"),
        url.replace(&format!("/chats/{chat}/"), &format!("/chats/{other}/")),
        url.replace(&format!("e={expires}"), &format!("e={}", expires + 3600)),
        url.replace(&sig, &"0".repeat(64)),
        url.split('?').next().expect("path").to_owned(),
        global.replace("logo.txt", "note%20one.txt"),
    ];
    for t in tampered {
        let r = bare_client().get(s.url(&t)).send().await.expect("send");
        let status = r.status().as_u16();
        let body: Value = r.json().await.expect("json");
        assert_eq!(
            (status, body["error"]["code"].as_str().unwrap_or("")),
            (403, "signature_invalid"),
            "{t}"
        );
    }

    // A signed URL for a file that does not exist: 404, nothing else.
    let (_, v) = sign(&s, chat, json!({"files": [{"name": "missing.png"}]})).await;
    let (st, _) = fetch(&s, v["urls"][0]["url"].as_str().expect("url")).await;
    assert_eq!(st, 404);

    // Bad requests.
    for body in [
        json!({"files": [{"name": "../x"}]}),
        json!({"files": [{"name": "a", "scope": "message"}]}),
        json!({"files": [], "ttl": 0}),
        json!({"files": [], "ttl": 99999}),
    ] {
        assert_eq!(sign(&s, chat, body.clone()).await.0, 400, "{body}");
    }
    assert_eq!(sign(&s, 9999, json!({"files": []})).await.0, 404);

    // Expiry.
    let (_, v) = sign(&s, chat, json!({"files": [{"name": "b.txt"}], "ttl": 1})).await;
    let short = v["urls"][0]["url"].as_str().expect("url").to_owned();
    assert_eq!(fetch(&s, &short).await.0, 200);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let r = bare_client().get(s.url(&short)).send().await.expect("send");
    assert_eq!(r.status(), 403);
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["error"]["code"], "signature_expired");
}
