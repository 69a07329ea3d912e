//! `tavo tts` as a user runs it: the real binary against a loopback mock of the three voice
//! platforms (`tavo_testkit::speech`), a library in a scratch directory.

use std::process::Output;

use crate::support::{json as json_of, ok, tavo};
use serde_json::{Value, json};
use tavo_testkit::speech::{MP3_PREFIX, MockSpeech};

fn failed(out: Output) -> String {
    assert!(
        !out.status.success(),
        "expected a failure: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tts_say_writes_audio_for_every_platform_through_connections_and_bindings() {
    let mock = MockSpeech::start().await.expect("mock");
    let root = tempfile::tempdir().expect("dir");
    let data = root.path().join("data");
    let base = mock.base();
    let oa = format!("{base}/v1");
    let gm = format!("{base}/v1beta");
    ok(tavo(
        &data,
        &[
            "tts",
            "connection",
            "add",
            "oa",
            "--platform",
            "openai",
            "--model",
            "gpt-4o-mini-tts",
            "--base-url",
            &oa,
            "--api-key",
            "sk-test-0123456789abcdef",
            "--voice",
            "coral",
        ],
    ));
    ok(tavo(
        &data,
        &[
            "tts",
            "connection",
            "add",
            "gm",
            "--platform",
            "gemini",
            "--model",
            "gemini-2.5-flash-preview-tts",
            "--base-url",
            &gm,
            "--api-key-env",
            "TTS_TEST_KEY_UNSET_x",
        ],
    ));
    ok(tavo(
        &data,
        &[
            "tts",
            "connection",
            "add",
            "el",
            "--platform",
            "elevenlabs",
            "--model",
            "eleven_multilingual_v2",
            "--base-url",
            &base,
            "--api-key",
            "el-key-0123456789abcdef",
        ],
    ));
    let list = json_of(tavo(&data, &["tts", "connection", "list", "--json"]));
    assert_eq!(list["default"], "oa");
    assert!(
        !list.to_string().contains("0123456789"),
        "keys masked: {list}"
    );
    let shown = json_of(tavo(&data, &["tts", "connection", "show", "el"]));
    assert_eq!(shown["hasKey"], true);

    // The issue's contract: `tavo tts say TEXT -o FILE` (the default connection and its voice).
    let out = root.path().join("hello.mp3");
    let printed = ok(tavo(
        &data,
        &["tts", "say", "Hello there.", "-o", &out.to_string_lossy()],
    ));
    assert_eq!(printed, out.to_string_lossy());
    let bytes = std::fs::read(&out).expect("written");
    assert!(bytes.starts_with(MP3_PREFIX));
    let seen = mock.requests();
    assert_eq!(
        seen[0].body,
        json!({"model": "gpt-4o-mini-tts", "input": "Hello there.", "voice": "coral", "response_format": "mp3"})
    );

    // ElevenLabs with an explicit voice, JSON out.
    let out2 = root.path().join("el.mp3");
    let r = json_of(tavo(
        &data,
        &[
            "tts",
            "say",
            "Bonjour.",
            "-o",
            &out2.to_string_lossy(),
            "--connection",
            "el",
            "--voice",
            "JBFqnCBsd6RMkjVDRZzb",
            "--json",
        ],
    ));
    assert_eq!(r["mimeType"], "audio/mpeg");
    assert_eq!(r["cached"], false);
    assert_eq!(
        mock.requests()[1].path,
        "/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=mp3_44100_128"
    );
    assert_eq!(
        mock.requests()[1].headers["xi-api-key"],
        "el-key-0123456789abcdef"
    );
    // Again: from the cache, no request.
    let again = json_of(tavo(
        &data,
        &[
            "tts",
            "say",
            "Bonjour.",
            "-o",
            &out2.to_string_lossy(),
            "--connection",
            "el",
            "--voice",
            "JBFqnCBsd6RMkjVDRZzb",
            "--json",
        ],
    ));
    assert_eq!(again["cached"], true);
    assert_eq!(mock.requests().len(), 2);

    // A missing key variable is named, nothing is sent.
    let err = failed(tavo(
        &data,
        &[
            "tts",
            "say",
            "x",
            "-o",
            "/dev/null",
            "--connection",
            "gm",
            "--voice",
            "Kore",
        ],
    ));
    assert!(err.contains("TTS_TEST_KEY_UNSET_x"), "{err}");
    assert_eq!(mock.requests().len(), 2);
    ok(tavo(
        &data,
        &[
            "tts",
            "connection",
            "update",
            "gm",
            "--api-key",
            "gm-key-0123456789abcdef",
            "--voice",
            "Kore",
        ],
    ));

    // A character's binding (Tavo's 角色语音绑定), with the playback rules.
    let card = root.path().join("card.json");
    std::fs::write(
        &card,
        json!({"spec": "chara_card_v2", "spec_version": "2.0",
        "data": {"name": "Keeper", "description": "d", "first_mes": "Hello."}})
        .to_string(),
    )
    .expect("card");
    ok(tavo(&data, &["import", &card.to_string_lossy()]));
    let err = failed(tavo(
        &data,
        &["tts", "say", "x", "-o", "/dev/null", "--character", "1"],
    ));
    assert!(err.contains("no voice binding"), "{err}");
    ok(tavo(
        &data,
        &[
            "tts",
            "bind",
            "--character",
            "1",
            "--connection",
            "gm",
            "--voice",
            "Puck",
        ],
    ));
    let b = json_of(tavo(&data, &["tts", "bindings", "--json"]));
    assert_eq!(
        b["characters"]["1"],
        json!({"connection": "gm", "voice": "Puck"})
    );
    ok(tavo(
        &data,
        &["tts", "settings", "--set", r#"{"onlyQuotes": true}"#],
    ));
    let wav = root.path().join("keeper.wav");
    let r = json_of(tavo(
        &data,
        &[
            "tts",
            "say",
            "*lights the lamp* \"Welcome back.\"",
            "-o",
            &wav.to_string_lossy(),
            "--character",
            "1",
            "--rules",
            "--json",
        ],
    ));
    assert_eq!(r["mimeType"], "audio/wav");
    assert_eq!(r["text"], "Welcome back.");
    let bytes = std::fs::read(&wav).expect("wav");
    assert_eq!(&bytes[..4], b"RIFF");
    let last = mock.requests().pop().expect("request");
    assert!(
        last.path
            .ends_with("/models/gemini-2.5-flash-preview-tts:generateContent"),
        "{}",
        last.path
    );
    assert_eq!(
        last.body["contents"][0]["parts"][0]["text"],
        "Welcome back."
    );
    assert_eq!(
        last.body["generationConfig"]["speechConfig"]["voiceConfig"]["prebuiltVoiceConfig"]["voiceName"],
        "Puck"
    );
    assert_eq!(last.headers["x-goog-api-key"], "gm-key-0123456789abcdef");

    // Settings errors name the field; nothing is written.
    let err = failed(tavo(
        &data,
        &[
            "tts",
            "settings",
            "--set",
            r#"{"rules": [{"name": "r", "regex": "(", "mode": "exclude"}]}"#,
        ],
    ));
    assert!(err.contains("rules[0].regex"), "{err}");
    let s = json_of(tavo(&data, &["tts", "settings", "--json"]));
    assert_eq!(s["rules"], json!([]));
    assert_eq!(s["onlyQuotes"], true);
    // The switches are ordinary settings.
    ok(tavo(&data, &["settings", "set", "tts.onlyQuotes", "false"]));
    let s = json_of(tavo(&data, &["tts", "settings", "--json"]));
    assert_eq!(s["onlyQuotes"], false);

    // A refused key: a clear error without the key.
    ok(tavo(
        &data,
        &["tts", "connection", "update", "oa", "--api-key", "bad-key"],
    ));
    let err = failed(tavo(
        &data,
        &["tts", "say", "Another text.", "-o", "/dev/null"],
    ));
    assert!(
        err.contains("HTTP 401") && err.contains("permission_denied"),
        "{err}"
    );
    assert!(
        !err.contains("bad-key") && !err.contains("Incorrect"),
        "{err}"
    );

    // The cache.
    let usage: Value = serde_json::from_str(&ok(tavo(&data, &["tts", "cache"]))).expect("json");
    assert_eq!(usage["files"], 3, "{usage}");
    let cleared: Value =
        serde_json::from_str(&ok(tavo(&data, &["tts", "cache", "--clear"]))).expect("json");
    assert_eq!(cleared["removed"], 3);
    ok(tavo(&data, &["tts", "unbind", "--character", "1"]));
    ok(tavo(&data, &["tts", "connection", "remove", "el"]));
    let list = json_of(tavo(&data, &["tts", "connection", "list", "--json"]));
    assert_eq!(list["connections"].as_array().map(Vec::len), Some(2));
}
