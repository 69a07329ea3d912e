//! The operation door (`/api/ops`) and stored files: strict envelopes with matching statuses,
//! confirmations, and file names that cannot leave their folder.

use crate::support::{TestServer, bare_client, client, json_of, make_chat};
use serde_json::json;

#[tokio::test]
async fn the_ops_door_lists_operations_with_their_schemas() {
    let s = TestServer::start().await;
    let (status, ops) = json_of(
        bare_client()
            .get(s.url("/api/ops"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 200);
    let list = ops.as_array().expect("array");
    let save = list
        .iter()
        .find(|o| o["name"] == "tavo_file_save")
        .expect("tavo_file_save listed");
    assert_eq!(save["operation"], "file.save");
    assert_eq!(save["parameters"]["type"], "object");
    assert!(save["parameters"]["properties"]["name"].is_object());
    assert!(list.iter().any(|o| o["safety"] == "confirm"));
}

#[tokio::test]
async fn the_ops_door_answers_the_strict_envelope_with_matching_statuses() {
    let s = TestServer::start().await;
    let chat = make_chat(&s.store, "door");
    let c = client();
    // Unknown field → invalid_arguments naming the path.
    let r = c
        .post(s.url(&format!("/api/ops/tavo_file_save?chat={chat}")))
        .json(&json!({"name": "a.txt", "content": "x", "bogus": 1}))
        .send()
        .await
        .expect("send");
    let (status, env) = json_of(r).await;
    assert_eq!(status, 400);
    assert_eq!(env["ok"], false);
    assert_eq!(env["error"]["code"], "invalid_arguments");
    // Unknown operation.
    let (status, env) = json_of(
        c.post(s.url("/api/ops/tavo_nope"))
            .json(&json!({}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(
        (status, env["error"]["code"].clone()),
        (404, json!("unknown_tool"))
    );
    // Not JSON.
    let (status, env) = json_of(
        c.post(s.url("/api/ops/file.save"))
            .body("{oops")
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(
        (status, env["error"]["code"].clone()),
        (400, json!("invalid_arguments"))
    );
    // A real call, by operation name, then the file through the media route.
    let r = c
        .post(s.url(&format!("/api/ops/file.save?chat={chat}")))
        .json(&json!({"name": "note.txt", "content": "hello"}))
        .send()
        .await
        .expect("send");
    let (status, env) = json_of(r).await;
    assert_eq!(status, 200, "{env}");
    assert_eq!(env["ok"], true);
    let file = bare_client()
        .get(s.url(&format!("/api/chats/{chat}/files/note.txt")))
        .send()
        .await
        .expect("send");
    assert_eq!(file.status(), 200);
    let ct = file
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(ct.starts_with("text/plain"), "{ct}");
    let csp = file
        .headers()
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(csp.starts_with("sandbox"), "{csp}");
    assert_eq!(file.text().await.expect("body"), "hello");
}

#[tokio::test]
async fn file_names_cannot_escape_their_folder() {
    let s = TestServer::start().await;
    let chat = make_chat(&s.store, "escape");
    std::fs::write(s.dir.path().join("secret.txt"), "secret").expect("write");
    for name in [
        "..%2F..%2Fsecret.txt",
        "..",
        "a%5C..%5Cb",
        "%2E%2E%2Fsecret.txt",
        "x:y",
    ] {
        for path in [
            format!("/api/chats/{chat}/files/{name}"),
            format!("/api/files/{name}"),
        ] {
            let r = bare_client().get(s.url(&path)).send().await.expect("send");
            let status = r.status().as_u16();
            let body = r.text().await.expect("body");
            // A name reaches the file route and breaks its name rules: 400 (routes/media.rs).
            // `..` never does: the URL standard drops that segment before the request leaves,
            // so the path names no file and no route: 404.
            let expected = if name == ".." { 404 } else { 400 };
            assert_eq!(status, expected, "{path}: {status}");
            assert!(
                !body.contains("secret") || body.contains("secret.txt"),
                "{path} leaked: {body}"
            );
            assert!(
                !body.contains(&s.dir.path().display().to_string()),
                "{path} leaked a path: {body}"
            );
        }
    }
}

#[tokio::test]
async fn writes_that_need_confirmation_run_only_when_confirmed() {
    let s = TestServer::start().await;
    let c = client();
    let (_, created) = json_of(
        c.post(s.url("/api/ops/character.create?confirm=true"))
            .json(&json!({"character": {"name": "Tmp", "firstMes": "Hello."}}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(created["ok"], true, "{created}");
    let id = created["result"]["id"]
        .as_i64()
        .or_else(|| created["result"].as_i64())
        .expect("id");
    let (status, env) = json_of(
        c.post(s.url("/api/ops/character.delete"))
            .json(&json!({"id": id}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(env["error"]["code"], "permission_denied");
    assert_eq!(env["error"]["details"]["needsConfirmation"], true);
    assert!(
        s.store
            .asset_json(tavo_model::AssetKind::Character, id)
            .expect("read")
            .is_some()
    );
    let (status, env) = json_of(
        c.post(s.url("/api/ops/character.delete?confirm=true"))
            .json(&json!({"id": id}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 200, "{env}");
    assert!(
        s.store
            .asset_json(tavo_model::AssetKind::Character, id)
            .expect("read")
            .is_none()
    );
}

/// `POST /api/ops/tavo_web_fetch` has the web service a reply has (it once answered
/// `resource_not_found` at this door while `tavo chat` could fetch).
#[tokio::test]
async fn the_ops_door_fetches_the_web_as_a_reply_does() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = [0u8; 2048];
            let _ = socket.read(&mut buf).await;
            let body = "<html><head><title>Door</title></head><body><p>Same page at every door.</p></body></html>";
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(reply.as_bytes()).await;
        }
    });
    let s = TestServer::start().await;
    let chat = make_chat(&s.store, "web");
    let (status, env) = json_of(
        client()
            .post(s.url(&format!("/api/ops/tavo_web_fetch?chat={chat}")))
            .json(&json!({"url": format!("http://{addr}/")}))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(status, 200, "{env}");
    assert_eq!(env["ok"], true, "{env}");
    assert!(env.to_string().contains("Same page at every door"), "{env}");
}
