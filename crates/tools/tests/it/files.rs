//! The five file tools end to end on a temporary store.

use crate::support::Lib;
use serde_json::json;
use tavo_tools::{REPLY_LIMIT, RESULT_LIMIT, ReplyBudget};

#[tokio::test]
async fn save_load_exists_list_delete_in_chat_scope() {
    let lib = Lib::new();
    let chat = lib.chat("files");
    let saved = lib
        .ok(Some(chat), "tavo_file_save", json!({"name": "notes.txt", "content": "由模型工具保存", "options": {"scope": "chat", "encoding": "utf8"}}))
        .await;
    assert_eq!(saved["path"], json!("files/chat/notes.txt"));
    assert_eq!(saved["size"], json!("由模型工具保存".len()));
    let loaded = lib
        .ok(Some(chat), "tavo_file_load", json!({"name": "notes.txt"}))
        .await;
    assert_eq!(loaded["content"], json!("由模型工具保存"));
    assert_eq!(loaded["mimeType"], json!("text/plain"));
    assert!(loaded.get("truncated").is_none());
    assert_eq!(
        lib.ok(Some(chat), "tavo_file_exists", json!({"name": "notes.txt"}))
            .await["exists"],
        json!(true)
    );
    let listed = lib
        .ok(
            Some(chat),
            "tavo_file_list",
            json!({"options": {"scope": "chat", "limit": 10}}),
        )
        .await;
    let entry = &listed["files"][0];
    for key in ["path", "name", "size", "mimeType", "modifiedAt"] {
        assert!(entry.get(key).is_some(), "{key} missing in {entry}");
    }
    assert!(
        entry["modifiedAt"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "UTC time"
    );
    assert_eq!(
        lib.ok(Some(chat), "tavo_file_delete", json!({"name": "notes.txt"}))
            .await["deleted"],
        json!(true)
    );
    assert_eq!(
        lib.ok(Some(chat), "tavo_file_exists", json!({"name": "notes.txt"}))
            .await["exists"],
        json!(false)
    );
    let e = lib
        .err(Some(chat), "tavo_file_delete", json!({"name": "notes.txt"}))
        .await;
    assert_eq!(e["code"], json!("resource_not_found"));
    assert_eq!(
        lib.err(Some(chat), "tavo_file_load", json!({"name": "notes.txt"}))
            .await["code"],
        json!("resource_not_found")
    );
}

#[tokio::test]
async fn chat_scope_is_bound_to_the_reply_chat_and_global_is_shared() {
    let lib = Lib::new();
    let a = lib.chat("a");
    let b = lib.chat("b");
    lib.ok(
        Some(a),
        "tavo_file_save",
        json!({"name": "x.txt", "content": "A"}),
    )
    .await;
    lib.ok(
        Some(a),
        "tavo_file_save",
        json!({"name": "g.txt", "content": "G", "options": {"scope": "global"}}),
    )
    .await;
    assert_eq!(
        lib.ok(Some(b), "tavo_file_exists", json!({"name": "x.txt"}))
            .await["exists"],
        json!(false)
    );
    let g = lib
        .ok(
            Some(b),
            "tavo_file_load",
            json!({"name": "g.txt", "options": {"scope": "global"}}),
        )
        .await;
    assert_eq!(g["content"], json!("G"));
    assert_eq!(g["path"], json!("files/global/g.txt"));
    // Global scope needs no chat at all; chat scope does.
    assert_eq!(
        lib.ok(
            None,
            "tavo_file_exists",
            json!({"name": "g.txt", "options": {"scope": "global"}})
        )
        .await["exists"],
        json!(true)
    );
    assert_eq!(
        lib.err(None, "tavo_file_exists", json!({"name": "g.txt"}))
            .await["code"],
        json!("resource_not_found")
    );
    assert_eq!(
        lib.err(
            Some(tavo_model::ChatId(9999)),
            "tavo_file_save",
            json!({"name": "g.txt", "content": ""})
        )
        .await["code"],
        json!("resource_not_found")
    );
}

#[tokio::test]
async fn encodings_round_trip() {
    let lib = Lib::new();
    let chat = lib.chat("enc");
    let png = [0x89u8, b'P', b'N', b'G', 0, 1, 2, 255];
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(png);
    lib.ok(
        Some(chat),
        "tavo_file_save",
        json!({"name": "a.png", "content": b64, "options": {"encoding": "base64"}}),
    )
    .await;
    let back = lib
        .ok(
            Some(chat),
            "tavo_file_load",
            json!({"name": "a.png", "options": {"encoding": "dataUrl"}}),
        )
        .await;
    assert_eq!(
        back["content"],
        json!(format!("data:image/png;base64,{b64}"))
    );
    lib.ok(
        Some(chat),
        "tavo_file_save",
        json!({"name": "b.png", "content": back["content"], "options": {"encoding": "dataUrl"}}),
    )
    .await;
    let raw = lib
        .ok(
            Some(chat),
            "tavo_file_load",
            json!({"name": "b.png", "options": {"encoding": "base64"}}),
        )
        .await;
    assert_eq!(raw["content"], json!(b64));
    // Binary as text is refused with advice, not garbled.
    let e = lib
        .err(Some(chat), "tavo_file_load", json!({"name": "a.png"}))
        .await;
    assert_eq!(e["details"]["path"], json!("options.encoding"));
    let e = lib
        .err(
            Some(chat),
            "tavo_file_save",
            json!({"name": "c.bin", "content": "@@@", "options": {"encoding": "base64"}}),
        )
        .await;
    assert_eq!(e["details"]["path"], json!("content"));
}

#[tokio::test]
async fn names_with_paths_are_refused() {
    let lib = Lib::new();
    let chat = lib.chat("names");
    for bad in ["../x", "a/b", "a\\b", "c:d", "..", ""] {
        let e = lib
            .err(
                Some(chat),
                "tavo_file_save",
                json!({"name": bad, "content": "x"}),
            )
            .await;
        assert_eq!(e["code"], json!("invalid_arguments"), "{bad}");
        assert_eq!(e["details"]["path"], json!("name"), "{bad}");
    }
}

#[tokio::test]
async fn listing_pages_in_case_sensitive_order_with_scoped_cursors() {
    let lib = Lib::new();
    let chat = lib.chat("list");
    for name in ["b.txt", "B.txt", "a.txt", "A.txt", "c.txt"] {
        lib.ok(
            Some(chat),
            "tavo_file_save",
            json!({"name": name, "content": name}),
        )
        .await;
    }
    let p1 = lib
        .ok(
            Some(chat),
            "tavo_file_list",
            json!({"options": {"limit": 2}}),
        )
        .await;
    let names = |p: &serde_json::Value| -> Vec<String> {
        p["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["name"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(names(&p1), vec!["A.txt", "B.txt"]);
    let cursor = p1["nextCursor"].clone();
    let p2 = lib
        .ok(
            Some(chat),
            "tavo_file_list",
            json!({"options": {"limit": 2, "cursor": cursor}}),
        )
        .await;
    assert_eq!(names(&p2), vec!["a.txt", "b.txt"]);
    let p3 = lib
        .ok(
            Some(chat),
            "tavo_file_list",
            json!({"options": {"limit": 2, "cursor": p2["nextCursor"]}}),
        )
        .await;
    assert_eq!(names(&p3), vec!["c.txt"]);
    assert!(p3.get("nextCursor").is_none());
    let e = lib
        .err(
            Some(chat),
            "tavo_file_list",
            json!({"options": {"scope": "global", "cursor": cursor}}),
        )
        .await;
    assert_eq!(e["details"]["path"], json!("options.cursor"));
    for limit in [0, 201] {
        let e = lib
            .err(
                Some(chat),
                "tavo_file_list",
                json!({"options": {"limit": limit}}),
            )
            .await;
        assert_eq!(e["details"]["path"], json!("options.limit"));
    }
    let all = lib.ok(Some(chat), "tavo_file_list", json!({})).await;
    assert_eq!(names(&all).len(), 5, "default limit 100");
}

#[tokio::test]
async fn big_text_reads_are_cut_and_big_listings_become_previews() {
    let lib = Lib::new();
    let chat = lib.chat("big");
    let text = "字".repeat(50_000); // 150,000 bytes
    lib.ok(
        Some(chat),
        "tavo_file_save",
        json!({"name": "big.txt", "content": text}),
    )
    .await;
    let mut budget = ReplyBudget::default();
    let done = lib
        .call_with(
            Some(chat),
            "tavo_file_load",
            json!({"name": "big.txt"}),
            &mut budget,
        )
        .await;
    assert!(done.truncated);
    let result = &done.envelope["result"];
    assert_eq!(result["truncated"], json!(true));
    let content = result["content"].as_str().unwrap_or_default();
    assert!(!content.is_empty() && content.chars().all(|c| c == '字'));
    assert!(
        serde_json::to_string(result)
            .map(|s| s.len())
            .unwrap_or(usize::MAX)
            <= RESULT_LIMIT
    );
    // Many files: the listing is larger than 64 KiB and becomes a preview.
    for i in 0..200 {
        lib.ok(
            Some(chat),
            "tavo_file_save",
            json!({"name": format!("{i:03}-{}.txt", "n".repeat(200)), "content": ""}),
        )
        .await;
    }
    let listing = lib
        .call_with(
            Some(chat),
            "tavo_file_list",
            json!({"options": {"limit": 200}}),
            &mut budget,
        )
        .await;
    assert!(listing.truncated);
    assert_eq!(listing.envelope["result"]["truncated"], json!(true));
    assert!(
        listing.envelope["result"]["preview"]
            .as_str()
            .is_some_and(|p| p.starts_with("{\"files\""))
    );
}

#[tokio::test]
async fn the_reply_budget_ends_in_result_too_large() {
    let lib = Lib::new();
    let chat = lib.chat("budget");
    lib.ok(
        Some(chat),
        "tavo_file_save",
        json!({"name": "big.txt", "content": "x".repeat(40_000)}),
    )
    .await;
    let mut budget = ReplyBudget::default();
    let mut codes = Vec::new();
    for _ in 0..8 {
        let done = lib
            .call_with(
                Some(chat),
                "tavo_file_load",
                json!({"name": "big.txt"}),
                &mut budget,
            )
            .await;
        codes.push(
            done.envelope["error"]["code"]
                .as_str()
                .unwrap_or("ok")
                .to_owned(),
        );
    }
    assert_eq!(
        codes,
        vec![
            "ok",
            "ok",
            "ok",
            "ok",
            "ok",
            "ok",
            "result_too_large",
            "result_too_large"
        ]
    );
    assert!(budget.used() <= REPLY_LIMIT);
    // Small results still fit afterwards.
    let small = lib
        .call_with(
            Some(chat),
            "tavo_file_exists",
            json!({"name": "big.txt"}),
            &mut budget,
        )
        .await;
    assert_eq!(small.envelope["ok"], json!(true));
}

/// A one-route HTTP server on 127.0.0.1: `/cat.png` answers `body`, anything else 404.
async fn serve_once_per_request(body: &'static [u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = vec![0u8; 4096];
            let n = sock.read(&mut buf).await.unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let found = head.starts_with("GET /cat.png ");
            let (status, payload): (&str, &[u8]) = if found {
                ("200 OK", body)
            } else {
                ("404 Not Found", b"no such file")
            };
            let reply = format!(
                "HTTP/1.1 {status}\r\ncontent-type: image/png\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                payload.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
            let _ = sock.write_all(payload).await;
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn save_stores_text_by_default_and_auto_detects_data_urls_and_downloads() {
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\nnot really an image, but bytes";
    let lib = Lib::new();
    let chat = lib.chat("download");
    let base = serve_once_per_request(PNG).await;

    // Without an encoding (the model's call, seed 000): a data: URL and a link are text.
    let saved = lib
        .ok(
            Some(chat),
            "tavo_file_save",
            json!({"name": "raw.txt", "content": "data:text/plain;base64,aGk="}),
        )
        .await;
    assert_eq!(saved["size"], json!("data:text/plain;base64,aGk=".len()));
    let link = format!("{base}/cat.png");
    let saved = lib
        .ok(
            Some(chat),
            "tavo_file_save",
            json!({"name": "link-note.txt", "content": link}),
        )
        .await;
    assert_eq!(
        saved["size"],
        json!(link.len()),
        "a bare URL is stored as its text, not downloaded"
    );
    let e = lib
        .err(
            Some(chat),
            "tavo_file_load",
            json!({"name": "raw.txt", "options": {"encoding": "auto"}}),
        )
        .await;
    assert_eq!(e["details"]["path"], json!("options.encoding"), "{e}");

    // With `auto` (TavoJS's file.save): a data: URL is decoded, text stays text.
    let saved = lib
        .ok(
            Some(chat),
            "tavo_file_save",
            json!({"name": "hi.txt", "content": "data:text/plain;base64,aGk=", "options": {"encoding": "auto"}}),
        )
        .await;
    assert_eq!(saved["size"], json!(2));
    let saved = lib
        .ok(
            Some(chat),
            "tavo_file_save",
            json!({"name": "link.txt", "content": "https://example.com is where it is", "options": {"encoding": "auto"}}),
        )
        .await;
    assert_eq!(
        saved["size"],
        json!(34),
        "a sentence starting with a URL is text"
    );

    // Loopback is refused when the user narrowed downloads to public addresses; nothing saved.
    lib.store
        .setting_set(tavo_web::AddressPolicy::SETTING, &json!("publicOnly"))
        .expect("policy");
    let url = format!("{base}/cat.png");
    let e = lib
        .err(
            Some(chat),
            "tavo_file_save",
            json!({"name": "cat.png", "content": url, "options": {"encoding": "auto"}}),
        )
        .await;
    assert_eq!(e["code"], json!("permission_denied"), "{e}");
    assert_eq!(
        lib.ok(Some(chat), "tavo_file_exists", json!({"name": "cat.png"}))
            .await["exists"],
        json!(false)
    );

    // Allowed (the default): downloaded as it is.
    lib.store
        .setting_set(tavo_web::AddressPolicy::SETTING, &json!("allowAll"))
        .expect("policy");
    let saved = lib
        .ok(
            Some(chat),
            "tavo_file_save",
            json!({"name": "cat.png", "content": url, "options": {"encoding": "auto"}}),
        )
        .await;
    assert_eq!(saved["size"], json!(PNG.len()));
    assert_eq!(saved["mimeType"], json!("image/png"));
    let loaded = lib
        .ok(
            Some(chat),
            "tavo_file_load",
            json!({"name": "cat.png", "options": {"encoding": "base64"}}),
        )
        .await;
    use base64::Engine as _;
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(loaded["content"].as_str().expect("base64"))
            .expect("decode"),
        PNG
    );

    // An explicit utf8 stores the URL itself; a 404 saves nothing.
    let saved = lib
        .ok(
            Some(chat),
            "tavo_file_save",
            json!({"name": "url.txt", "content": url, "options": {"encoding": "utf8"}}),
        )
        .await;
    assert_eq!(saved["size"], json!(url.len()));
    let e = lib
        .err(
            Some(chat),
            "tavo_file_save",
            json!({"name": "gone.png", "content": format!("{base}/gone.png"), "options": {"encoding": "auto"}}),
        )
        .await;
    assert_eq!(e["code"], json!("unavailable"), "{e}");
    assert!(
        e["message"].as_str().is_some_and(|m| m.contains("404")),
        "{e}"
    );
    assert_eq!(
        lib.ok(Some(chat), "tavo_file_exists", json!({"name": "gone.png"}))
            .await["exists"],
        json!(false)
    );
}

#[tokio::test]
async fn a_file_over_40_mib_is_refused_and_nothing_is_saved() {
    let lib = Lib::new();
    let chat = lib.chat("big files");
    let max = tavo_tools::ops::files::MAX_FILE_BYTES;
    let e = lib
        .err(
            Some(chat),
            "tavo_file_save",
            json!({"name": "huge.txt", "content": "z".repeat(max + 1), "options": {"encoding": "utf8"}}),
        )
        .await;
    assert_eq!(e["code"], json!("limit_exceeded"), "{e}");
    assert!(
        e["message"].as_str().is_some_and(|m| m.contains("40 MiB")),
        "{e}"
    );
    assert_eq!(
        lib.ok(Some(chat), "tavo_file_exists", json!({"name": "huge.txt"}))
            .await["exists"],
        json!(false)
    );
    let saved = lib
        .ok(
            Some(chat),
            "tavo_file_save",
            json!({"name": "just.txt", "content": "z".repeat(max), "options": {"encoding": "utf8"}}),
        )
        .await;
    assert_eq!(saved["size"], json!(max));
}
