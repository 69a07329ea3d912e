//! The voice codecs against the wire fixtures in `tests/fixtures/media/speech/` (see its
//! README for where each shape comes from): requests built field by field as the providers
//! document them, answers parsed, failures mapped — and the same through a loopback server,
//! where no key and no provider message may reach an error.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::{Value, json};
use tavo_llm::ErrorKind;
use tavo_llm::media::image::{Auth, WireBody};
use tavo_llm::media::speech::{self, SpeechRequest, VoiceConnection, VoicePlatform, gemini};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/media/speech")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn body_bytes(resp: &Value) -> Vec<u8> {
    match (resp.get("bodyBase64"), resp.get("body")) {
        (Some(Value::String(b)), _) => base64::engine::general_purpose::STANDARD
            .decode(b)
            .expect("base64"),
        (_, Some(body)) => serde_json::to_vec(body).expect("json"),
        _ => Vec::new(),
    }
}

/// The connection and request each fixture was written for.
fn case(platform: VoicePlatform) -> (VoiceConnection, SpeechRequest) {
    let (model, text, voice) = match platform {
        VoicePlatform::Openai => (
            "gpt-4o-mini-tts",
            "Today is a wonderful day to build something people love!",
            "coral",
        ),
        VoicePlatform::Gemini => (
            "gemini-2.5-flash-preview-tts",
            "Say cheerfully: Have a wonderful day!",
            "Kore",
        ),
        VoicePlatform::Elevenlabs => (
            "eleven_multilingual_v2",
            "The first move is what sets everything in motion.",
            "JBFqnCBsd6RMkjVDRZzb",
        ),
    };
    let mut conn = VoiceConnection::new("voice", platform, model);
    conn.api_key = Some("test-key".into());
    (
        conn,
        SpeechRequest {
            text: text.into(),
            voice: Some(voice.into()),
        },
    )
}

const PLATFORMS: [(VoicePlatform, &str); 3] = [
    (VoicePlatform::Openai, "openai"),
    (VoicePlatform::Gemini, "gemini"),
    (VoicePlatform::Elevenlabs, "elevenlabs"),
];

#[test]
fn requests_are_built_as_the_providers_document_them() {
    for (platform, id) in PLATFORMS {
        let want = fixture(&format!("{id}.request.json"));
        let (conn, req) = case(platform);
        let wire = speech::build(&conn, Some("test-key"), &req).expect("built");
        assert_eq!(wire.url, want["url"], "{id}: url");
        let WireBody::Json(body) = &wire.body else {
            panic!("{id}: a JSON body")
        };
        assert_eq!(body, &want["body"], "{id}: body");
        let headers = &want["headers"];
        match &wire.auth {
            Auth::Bearer(k) => assert_eq!(headers["authorization"], format!("Bearer {k}")),
            Auth::Header(h, k) => assert_eq!(headers[*h], json!(k), "{id}: {h}"),
            Auth::None => panic!("{id}: a key is sent"),
        }
        for (h, v) in &wire.headers {
            assert_eq!(headers[*h], json!(v), "{id}: header {h}");
        }
    }
}

#[test]
fn answers_are_parsed_into_playable_audio() {
    for (platform, id) in PLATFORMS {
        let resp = fixture(&format!("{id}.response.json"));
        let ct = resp["contentType"].as_str().unwrap_or_default();
        let audio = speech::parse(platform, ct, &body_bytes(&resp)).expect("audio");
        match platform {
            VoicePlatform::Gemini => {
                assert_eq!(audio.mime, "audio/wav");
                assert_eq!(audio.extension(), "wav");
                assert_eq!(&audio.bytes[..4], b"RIFF");
                // 24 kHz mono 16-bit, the 16 PCM bytes after the 44-byte header.
                assert_eq!(&audio.bytes[24..28], &24_000u32.to_le_bytes());
                assert_eq!(audio.bytes.len(), 44 + 16);
            }
            _ => {
                assert_eq!(audio.mime, "audio/mpeg", "{id}");
                assert_eq!(audio.extension(), "mp3");
                assert!(audio.bytes.starts_with(b"ID3"));
            }
        }
    }
    assert_eq!(gemini::wav(&[0, 0], 8000, 1).len(), 46);
}

#[test]
fn provider_options_reach_the_body() {
    let (mut conn, req) = case(VoicePlatform::Openai);
    conn.options.insert("responseFormat".into(), json!("wav"));
    conn.options.insert("speed".into(), json!(1.25));
    let wire = speech::build(&conn, None, &req).expect("built");
    let WireBody::Json(body) = wire.body else {
        panic!()
    };
    assert_eq!(body["response_format"], "wav");
    assert_eq!(body["speed"], 1.25);
    assert_eq!(wire.auth, Auth::None, "no key, no header (a local server)");

    let (mut conn, req) = case(VoicePlatform::Elevenlabs);
    conn.base_url = "http://127.0.0.1:1/v1".into();
    conn.options
        .insert("voiceSettings".into(), json!({"stability": 0.5}));
    conn.options
        .insert("outputFormat".into(), json!("mp3_22050_32"));
    let wire = speech::build(&conn, None, &req).expect("built");
    assert_eq!(
        wire.url,
        "http://127.0.0.1:1/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=mp3_22050_32",
        "a base given with /v1 is not doubled"
    );
    let bad = SpeechRequest {
        voice: Some("../admin".into()),
        ..req
    };
    let e = speech::build(&conn, None, &bad).expect_err("refused");
    assert!(e.message.starts_with("voice:"), "{}", e.message);

    let (mut conn, req) = case(VoicePlatform::Gemini);
    conn.model = "models/gemini-2.5-pro-preview-tts".into();
    conn.options.insert("languageCode".into(), json!("ja-JP"));
    let wire = speech::build(&conn, None, &req).expect("built");
    assert!(
        wire.url
            .ends_with("/models/gemini-2.5-pro-preview-tts:generateContent")
    );
    let WireBody::Json(body) = wire.body else {
        panic!()
    };
    assert_eq!(
        body["generationConfig"]["speechConfig"]["languageCode"],
        "ja-JP"
    );
}

/// One canned answer; records the request it got.
async fn serve_once(
    status: u16,
    content_type: String,
    body: Vec<u8>,
) -> (String, Arc<Mutex<Vec<u8>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let rec = seen.clone();
    tokio::spawn(async move {
        let Ok((mut sock, _)) = listener.accept().await else {
            return;
        };
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            let Ok(n) = sock.read(&mut chunk).await else {
                return;
            };
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buf).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let len = text[..end]
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if buf.len() >= end + 4 + len {
                    break;
                }
            }
        }
        *rec.lock().expect("lock") = buf;
        let head = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = sock.write_all(head.as_bytes()).await;
        let _ = sock.write_all(&body).await;
    });
    (format!("http://{addr}"), seen)
}

#[tokio::test]
async fn the_http_path_sends_the_fixture_request_and_maps_every_failure() {
    let client = tavo_llm::Client::new().expect("client");
    for (platform, id) in PLATFORMS {
        let resp = fixture(&format!("{id}.response.json"));
        let (base, seen) = serve_once(
            200,
            resp["contentType"].as_str().unwrap_or_default().to_owned(),
            body_bytes(&resp),
        )
        .await;
        let (mut conn, req) = case(platform);
        let path = match platform {
            VoicePlatform::Openai => "/v1",
            VoicePlatform::Gemini => "/v1beta",
            VoicePlatform::Elevenlabs => "",
        };
        conn.base_url = format!("{base}{path}");
        let audio = speech::synthesize(&client, &conn, &req)
            .await
            .expect("audio");
        assert!(!audio.bytes.is_empty(), "{id}");
        let raw = String::from_utf8_lossy(&seen.lock().expect("lock")).to_string();
        let want = fixture(&format!("{id}.request.json"));
        let url = want["url"].as_str().unwrap_or_default();
        let path_and_query = &url[url.find("://").map_or(0, |i| i + 3)..];
        let path_and_query = &path_and_query[path_and_query.find('/').unwrap_or(0)..];
        assert!(
            raw.starts_with(&format!("POST {path_and_query} HTTP/1.1")),
            "{id}: {raw}"
        );
        let (_, sent_body) = raw.split_once("\r\n\r\n").expect("body");
        let sent: Value = serde_json::from_str(sent_body).expect("json body");
        assert_eq!(sent, want["body"], "{id}");
    }
    let errors = [
        (
            "openai.error-401.json",
            VoicePlatform::Openai,
            ErrorKind::Authentication,
        ),
        (
            "gemini.error-429.json",
            VoicePlatform::Gemini,
            ErrorKind::RateLimit,
        ),
        (
            "elevenlabs.error-401.json",
            VoicePlatform::Elevenlabs,
            ErrorKind::Authentication,
        ),
    ];
    for (file, platform, kind) in errors {
        let resp = fixture(file);
        let status = resp["status"].as_u64().unwrap_or(500) as u16;
        let (base, _) = serve_once(status, "application/json".into(), body_bytes(&resp)).await;
        let (mut conn, req) = case(platform);
        conn.base_url = base;
        let e = speech::synthesize(&client, &conn, &req)
            .await
            .expect_err("refused");
        assert_eq!(e.kind, kind, "{file}");
        assert!(!e.message.contains("test-key"), "{file}: {}", e.message);
        assert!(
            !e.message.contains("Incorrect") && !e.message.contains("permission text_to_speech"),
            "{file}: the provider's text stays out: {}",
            e.message
        );
    }
    for (status, kind) in [
        (403, ErrorKind::Permission),
        (404, ErrorKind::NotFound),
        (502, ErrorKind::Server),
    ] {
        let (base, _) = serve_once(status, "text/html".into(), b"<h1>test-key</h1>".to_vec()).await;
        let (mut conn, req) = case(VoicePlatform::Openai);
        conn.base_url = base;
        let e = speech::synthesize(&client, &conn, &req)
            .await
            .expect_err("refused");
        assert_eq!(e.kind, kind, "{status}");
        assert!(!e.message.contains("test-key"));
    }
    // A 200 that is not audio is an error too.
    let (base, _) = serve_once(200, "application/json".into(), b"{\"ok\":true}".to_vec()).await;
    let (mut conn, req) = case(VoicePlatform::Openai);
    conn.base_url = base;
    let e = speech::synthesize(&client, &conn, &req)
        .await
        .expect_err("not audio");
    assert_eq!(e.kind, ErrorKind::InvalidResponse);
}
