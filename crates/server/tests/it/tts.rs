//! Text-to-speech over HTTP against a loopback mock of all three voice platforms: voice
//! connections (keys masked), bindings, settings with field-path errors, `POST
//! /api/chats/{id}/tts/play` reaching the open app as a `tts` event whose `url` serves the
//! audio, the TTS cache, `stop`, the model tool through `/api/ops`, and provider failures
//! mapped without the key.

use std::time::Duration;

use crate::support::{TestServer, client, json_of, read_sse};
use serde_json::{Value, json};
use tavo_testkit::speech::{MP3_PREFIX, MockSpeech};

async fn send(
    s: &TestServer,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut rb = client().request(method, s.url(path));
    if let Some(b) = body {
        rb = rb.json(&b);
    }
    json_of(rb.send().await.expect("send")).await
}

async fn post(s: &TestServer, path: &str, body: Value) -> (u16, Value) {
    send(s, reqwest::Method::POST, path, Some(body)).await
}

async fn put(s: &TestServer, path: &str, body: Value) -> (u16, Value) {
    send(s, reqwest::Method::PUT, path, Some(body)).await
}

async fn get(s: &TestServer, path: &str) -> (u16, Value) {
    send(s, reqwest::Method::GET, path, None).await
}

/// A character and a chat with it.
async fn chat_with_character(s: &TestServer) -> (i64, i64) {
    let (st, c) = post(
        s,
        "/api/library/character",
        json!({"name": "Mira", "firstMes": "Hello."}),
    )
    .await;
    assert_eq!(st, 201, "{c}");
    let cid = c["id"].as_i64().expect("id");
    let (st, chat) = post(s, "/api/chats", json!({"characters": [cid]})).await;
    assert_eq!(st, 201, "{chat}");
    (cid, chat["id"].as_i64().expect("id"))
}

#[tokio::test]
async fn every_platform_speaks_through_a_binding_and_reaches_the_open_app() {
    let mock = MockSpeech::start().await.expect("mock");
    let s = TestServer::start().await;
    let base = mock.base();
    for (name, platform, url, model) in [
        ("oa", "openai", format!("{base}/v1"), "gpt-4o-mini-tts"),
        (
            "gm",
            "gemini",
            format!("{base}/v1beta"),
            "gemini-2.5-flash-preview-tts",
        ),
        ("el", "elevenlabs", base.clone(), "eleven_multilingual_v2"),
    ] {
        let (st, book) = post(
            &s,
            "/api/tts/connections",
            json!({"name": name, "platform": platform, "baseUrl": url, "model": model,
                   "apiKey": "sk-secret-0123456789abcd"}),
        )
        .await;
        assert_eq!(st, 200, "{book}");
        assert!(
            !book.to_string().contains("0123456789"),
            "keys are masked: {book}"
        );
    }
    let (_, book) = get(&s, "/api/tts/connections").await;
    assert_eq!(book["default"], "oa", "the first is the default");
    assert_eq!(book["connections"][2]["hasKey"], true);

    let (cid, chat) = chat_with_character(&s).await;
    // No binding yet: playing false, with the reason.
    let (st, out) = post(
        &s,
        &format!("/api/chats/{chat}/tts/play"),
        json!({"text": "Hi", "voice": {"character": cid}}),
    )
    .await;
    assert_eq!(st, 200, "{out}");
    assert_eq!(out["playing"], false);
    assert!(
        out["reason"]
            .as_str()
            .unwrap_or("")
            .contains("no voice binding"),
        "{out}"
    );

    // The open app: the global event stream.
    let events = client()
        .get(s.url("/api/events"))
        .send()
        .await
        .expect("events");
    tokio::time::sleep(Duration::from_millis(100)).await;

    for (conn, voice, mime) in [
        ("oa", "coral", "audio/mpeg"),
        ("gm", "Kore", "audio/wav"),
        ("el", "JBFqnCBsd6RMkjVDRZzb", "audio/mpeg"),
    ] {
        let (st, b) = put(
            &s,
            &format!("/api/tts/bindings/characters/{cid}"),
            json!({"connection": conn, "voice": voice}),
        )
        .await;
        assert_eq!(st, 200, "{b}");
        assert_eq!(b["characters"][cid.to_string()]["voice"], voice);
        let (st, out) = post(
            &s,
            &format!("/api/chats/{chat}/tts/play"),
            json!({"text": format!("*waves* \"Hello from {conn}.\""), "voice": {"character": {"id": cid}},
                   "applyPlaybackRules": true, "queue": true}),
        )
        .await;
        assert_eq!(st, 200, "{out}");
        assert_eq!(out["playing"], true, "{out}");
        assert_eq!(out["audio"]["mime"], mime);
        assert_eq!(out["audio"]["cached"], false);
        let url = out["audio"]["url"].as_str().expect("url").to_owned();
        let audio = client().get(s.url(&url)).send().await.expect("audio");
        assert_eq!(audio.status(), 200);
        assert_eq!(audio.headers()["content-type"], mime);
        let bytes = audio.bytes().await.expect("bytes");
        if mime == "audio/mpeg" {
            assert!(bytes.starts_with(MP3_PREFIX));
        } else {
            assert_eq!(&bytes[..4], b"RIFF", "gemini PCM arrives as WAV");
        }
    }
    let seen = mock.requests();
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[0].path, "/v1/audio/speech");
    assert_eq!(seen[0].body["voice"], "coral");
    assert_eq!(
        seen[0].headers["authorization"],
        "Bearer sk-secret-0123456789abcd"
    );
    assert!(
        seen[1]
            .path
            .ends_with("/v1beta/models/gemini-2.5-flash-preview-tts:generateContent")
    );
    assert_eq!(
        seen[1].body["generationConfig"]["speechConfig"]["voiceConfig"]["prebuiltVoiceConfig"]["voiceName"],
        "Kore"
    );
    assert_eq!(
        seen[2].path,
        "/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=mp3_44100_128"
    );
    assert_eq!(seen[2].headers["xi-api-key"], "sk-secret-0123456789abcd");
    // The playback rules ran: narration is spoken by default, the quote marks and asterisks are not.
    assert_eq!(seen[0].body["input"], "waves Hello from oa.");

    // The same text again comes from the cache.
    let (_, again) = post(
        &s,
        &format!("/api/chats/{chat}/tts/play"),
        json!({"text": "*waves* \"Hello from el.\"", "voice": {"character": cid}, "applyPlaybackRules": true}),
    )
    .await;
    assert_eq!(again["audio"]["cached"], true, "{again}");
    assert_eq!(mock.requests().len(), 3, "no new provider request");

    let (st, stopped) = post(&s, &format!("/api/chats/{chat}/tts/stop"), json!({})).await;
    assert_eq!((st, &stopped["stopped"]), (200, &json!(true)), "{stopped}");

    let got = read_sse(events, Duration::from_secs(5), |e| {
        e.event == "tts" && e.json()["action"] == "stop"
    })
    .await;
    let tts: Vec<Value> = got
        .iter()
        .filter(|e| e.event == "tts")
        .map(|e| e.json())
        .collect();
    assert_eq!(tts.len(), 5, "{tts:?}");
    assert_eq!(tts[0]["action"], "play");
    assert_eq!(tts[0]["chatId"], chat);
    assert_eq!(tts[0]["queue"], true);
    assert!(
        tts[0]["url"]
            .as_str()
            .unwrap_or("")
            .starts_with("/api/tts/audio/")
    );
    assert_eq!(tts[3]["queue"], false, "interrupt is the default");
    assert_eq!(tts[4], json!({"chatId": chat, "action": "stop"}));

    // The cache is a clearable category.
    let (_, usage) = get(&s, "/api/tts/cache").await;
    assert_eq!(usage["files"], 3, "{usage}");
    let (_, cleared) = send(&s, reqwest::Method::DELETE, "/api/tts/cache", None).await;
    assert_eq!(cleared["removed"], 3);
    let gone = client()
        .get(s.url(tts[0]["url"].as_str().expect("url")))
        .send()
        .await
        .expect("audio");
    assert_eq!(gone.status(), 404);
}

#[tokio::test]
async fn a_message_is_spoken_in_its_speakers_voice_and_the_model_tool_works() {
    let mock = MockSpeech::start().await.expect("mock");
    let s = TestServer::start().await;
    let (st, _) = post(
        &s,
        "/api/tts/connections",
        json!({"name": "oa", "platform": "openai",
        "baseUrl": format!("{}/v1", mock.base()), "model": "tts-1"}),
    )
    .await;
    assert_eq!(st, 200);
    let (cid, chat) = chat_with_character(&s).await;
    put(
        &s,
        &format!("/api/tts/bindings/characters/{cid}"),
        json!({"voice": "nova"}),
    )
    .await;
    let (_, page) = get(&s, &format!("/api/chats/{chat}/messages")).await;
    let greeting = page["messages"][0]["id"].as_i64().expect("greeting");
    // No page listens: synthesized and kept, but honestly not playing.
    let (st, out) = post(
        &s,
        &format!("/api/chats/{chat}/tts/play"),
        json!({"messageId": greeting}),
    )
    .await;
    assert_eq!(st, 200, "{out}");
    assert_eq!(out["playing"], false);
    assert!(
        out["reason"]
            .as_str()
            .unwrap_or("")
            .contains("no app page is open"),
        "{out}"
    );
    assert_eq!(out["audio"]["voice"], "nova", "the speaker's binding");
    assert_eq!(mock.requests()[0].body["input"], "Hello.");

    // The model's door: tavo_tts_play through the operation route.
    let (st, r) = post(
        &s,
        &format!("/api/ops/tavo_tts_play?chat={chat}"),
        json!({"text": "From the model.", "options": {"voice": {"character": cid}}}),
    )
    .await;
    assert_eq!(st, 200, "{r}");
    assert_eq!(r["result"]["playing"], false, "{r}");
    assert!(r["result"]["audio"]["url"].is_string(), "{r}");
    assert_eq!(
        mock.requests().last().expect("request").body["input"],
        "From the model."
    );
    // The model's door on the other two platforms, with an app open: playing, and the event
    // names the audio.
    let base = mock.base();
    for (name, platform, url, model, voice) in [
        (
            "gm",
            "gemini",
            format!("{base}/v1beta"),
            "gemini-2.5-flash-preview-tts",
            "Kore",
        ),
        (
            "el",
            "elevenlabs",
            base.clone(),
            "eleven_multilingual_v2",
            "JBFqnCBsd6RMkjVDRZzb",
        ),
    ] {
        let (st, _) = post(
            &s,
            "/api/tts/connections",
            json!({"name": name, "platform": platform, "baseUrl": url, "model": model}),
        )
        .await;
        assert_eq!(st, 200);
        put(
            &s,
            &format!("/api/tts/bindings/characters/{cid}"),
            json!({"connection": name, "voice": voice}),
        )
        .await;
        let events = client()
            .get(s.url("/api/events"))
            .send()
            .await
            .expect("events");
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (st, r) = post(
            &s,
            &format!("/api/ops/tavo_tts_play?chat={chat}"),
            json!({"text": format!("Model on {platform}."), "options": {"voice": {"character": cid}, "queue": true}}),
        )
        .await;
        assert_eq!(st, 200, "{r}");
        assert_eq!(r["result"]["playing"], true, "{r}");
        let url = r["result"]["audio"]["url"]
            .as_str()
            .expect("url")
            .to_owned();
        let got = read_sse(events, Duration::from_secs(5), |e| e.event == "tts").await;
        let ev = got
            .iter()
            .find(|e| e.event == "tts")
            .expect("a tts event")
            .json();
        assert_eq!(ev["url"], url.as_str());
        assert_eq!(ev["queue"], true);
        let seen = mock.requests();
        let last = seen.last().expect("request");
        let text = last
            .body
            .pointer("/contents/0/parts/0/text")
            .or_else(|| last.body.get("text"))
            .cloned();
        assert_eq!(
            text,
            Some(json!(format!("Model on {platform}."))),
            "{platform}"
        );
    }
    let (st, r) = post(
        &s,
        &format!("/api/ops/tavo_tts_stop?chat={chat}"),
        json!({}),
    )
    .await;
    assert_eq!(st, 200, "{r}");
    // A persona without a binding: resource_not_found for the model.
    let (_, p) = post(
        &s,
        "/api/library/persona",
        json!({"name": "Ann", "description": "d"}),
    )
    .await;
    let pid = p["id"].as_i64().expect("id");
    let (st, r) = post(
        &s,
        &format!("/api/ops/tavo_tts_play?chat={chat}"),
        json!({"text": "x", "options": {"voice": {"persona": pid}}}),
    )
    .await;
    assert_eq!(st, 404, "{r}");
    assert_eq!(r["error"]["code"], "resource_not_found");

    // Errors: unknown chat, message of no chat, bad voice shape.
    let (st, _) = post(
        &s,
        "/api/chats/999/tts/play",
        json!({"text": "x", "voice": {"character": cid}}),
    )
    .await;
    assert_eq!(st, 404);
    let (st, e) = post(
        &s,
        &format!("/api/chats/{chat}/tts/play"),
        json!({"text": "x", "voice": {"robot": 1}}),
    )
    .await;
    assert_eq!(st, 400, "{e}");
    assert_eq!(e["error"]["details"]["path"], "voice");
}

#[tokio::test]
async fn settings_bindings_and_provider_failures_have_clear_errors() {
    let mock = MockSpeech::start().await.expect("mock");
    let s = TestServer::start().await;
    let (_, st0) = get(&s, "/api/tts/settings").await;
    assert_eq!(
        st0,
        json!({"autoPlay": false, "backgroundPlayback": true, "playNarration": true,
        "onlyQuotes": false, "playCodeBlocks": false, "playTagContent": false, "rules": []})
    );
    let (st, e) = put(&s, "/api/tts/settings", json!({"onlyQuotes": true,
        "rules": [{"name": "ok", "regex": "x", "mode": "include"}, {"name": "bad", "regex": "(", "mode": "exclude"}]})).await;
    assert_eq!(st, 400, "{e}");
    assert_eq!(e["error"]["details"]["path"], "rules[1].regex");
    let (_, now) = get(&s, "/api/tts/settings").await;
    assert_eq!(now["onlyQuotes"], false, "nothing was written");
    let (st, now) = put(
        &s,
        "/api/tts/settings",
        json!({"onlyQuotes": true, "autoPlay": true}),
    )
    .await;
    assert_eq!(st, 200);
    assert_eq!(
        (now["onlyQuotes"].clone(), now["autoPlay"].clone()),
        (json!(true), json!(true))
    );
    // The switches are ordinary settings too.
    let (_, list) = get(&s, "/api/settings").await;
    assert!(list.to_string().contains("tts.onlyQuotes"), "{list}");

    let (st, e) = post(
        &s,
        "/api/tts/connections",
        json!({"name": "x", "platform": "azure", "model": "m"}),
    )
    .await;
    assert_eq!(st, 400);
    assert_eq!(e["error"]["details"]["path"], "platform");
    let (st, e) = post(
        &s,
        "/api/tts/connections",
        json!({"name": "x", "platform": "openai", "model": "m", "baseUrl": "ftp://x"}),
    )
    .await;
    assert_eq!(st, 400);
    assert_eq!(e["error"]["details"]["path"], "baseUrl");
    post(&s, "/api/tts/connections", json!({"name": "bad", "platform": "openai",
        "baseUrl": format!("{}/v1", mock.base()), "model": "tts-1", "apiKey": "bad-key", "options": {"voice": "alloy"}})).await;
    let (cid, chat) = chat_with_character(&s).await;
    let (st, e) = put(
        &s,
        &format!("/api/tts/bindings/characters/{cid}"),
        json!({"connection": "nope", "voice": "v"}),
    )
    .await;
    assert_eq!(st, 404, "{e}");
    let (st, _) = put(
        &s,
        "/api/tts/bindings/characters/999",
        json!({"voice": "v"}),
    )
    .await;
    assert_eq!(st, 404);
    let (st, _) = put(
        &s,
        &format!("/api/tts/bindings/characters/{cid}"),
        json!({"connection": "bad", "voice": "alloy"}),
    )
    .await;
    assert_eq!(st, 200);
    // The refused key: 403 permission_denied, no key and no provider text in the message.
    let (st, e) = post(
        &s,
        &format!("/api/chats/{chat}/tts/play"),
        json!({"text": "\"hi\"", "voice": {"character": cid}}),
    )
    .await;
    assert_eq!(st, 403, "{e}");
    assert_eq!(e["error"]["code"], "permission_denied");
    assert!(
        !e.to_string().contains("bad-key") && !e.to_string().contains("Incorrect"),
        "{e}"
    );
    let (st, e) = post(
        &s,
        "/api/tts/say",
        json!({"text": "FAIL 500", "connection": "bad", "voiceId": "alloy"}),
    )
    .await;
    assert_eq!(st, 403, "{e}");
    // A provider failure: 502.
    put(&s, "/api/tts/connections/bad", json!({"name": "bad", "platform": "openai",
        "baseUrl": format!("{}/v1", mock.base()), "model": "tts-1", "apiKey": "good-key", "options": {"voice": "alloy"}})).await;
    let (st, e) = post(
        &s,
        "/api/tts/say",
        json!({"text": "FAIL 500", "connection": "bad"}),
    )
    .await;
    assert_eq!(st, 502, "{e}");
    assert_eq!(e["error"]["code"], "provider_error");
    let (st, ok) = post(
        &s,
        "/api/tts/say",
        json!({"text": "fine", "connection": "bad"}),
    )
    .await;
    assert_eq!(st, 200, "{ok}");
    assert_eq!(ok["voice"], "alloy", "the connection's voice option");
    // A replace without apiKey keeps the key.
    put(
        &s,
        "/api/tts/connections/bad",
        json!({"name": "bad", "platform": "openai",
        "baseUrl": format!("{}/v1", mock.base()), "model": "tts-1", "options": {"voice": "alloy"}}),
    )
    .await;
    let (st, _) = post(
        &s,
        "/api/tts/say",
        json!({"text": "again", "connection": "bad"}),
    )
    .await;
    assert_eq!(st, 200);
    assert_eq!(
        mock.requests().last().expect("r").headers["authorization"],
        "Bearer good-key"
    );
    let (st, b) = send(
        &s,
        reqwest::Method::DELETE,
        &format!("/api/tts/bindings/characters/{cid}"),
        None,
    )
    .await;
    assert_eq!(st, 200);
    assert_eq!(b["characters"], json!({}));
}

#[tokio::test]
async fn a_user_message_in_a_chat_without_a_persona_speaks_in_the_default_personas_voice() {
    let mock = MockSpeech::start().await.expect("mock");
    let s = TestServer::start().await;
    let (st, _) = post(
        &s,
        "/api/tts/connections",
        json!({"name": "oa", "platform": "openai",
        "baseUrl": format!("{}/v1", mock.base()), "model": "tts-1"}),
    )
    .await;
    assert_eq!(st, 200);
    let (st, p) = post(
        &s,
        "/api/library/persona",
        json!({"name": "Ann", "description": "d", "active": true}),
    )
    .await;
    assert_eq!(st, 201, "{p}");
    let pid = p["id"].as_i64().expect("id");
    put(
        &s,
        &format!("/api/tts/bindings/personas/{pid}"),
        json!({"voice": "shimmer"}),
    )
    .await;
    // The chat names no persona: it follows the default one.
    let (_, chat) = chat_with_character(&s).await;
    let (st, written) = post(
        &s,
        &format!("/api/ops/tavo_message_append?chat={chat}"),
        json!({"message": {"role": "user", "content": "Hi there."}}),
    )
    .await;
    assert_eq!(st, 200, "{written}");
    let id = written["result"]["id"].as_i64().expect("message id");
    let (st, out) = post(
        &s,
        &format!("/api/chats/{chat}/tts/play"),
        json!({"messageId": id}),
    )
    .await;
    assert_eq!(st, 200, "{out}");
    assert_eq!(out["audio"]["voice"], "shimmer", "{out}");
    assert_eq!(mock.requests()[0].body["input"], "Hi there.");
}
