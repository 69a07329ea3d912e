//! "Say" is the engine's (`Speech::say`), so `tavo tts say` and `POST /api/tts/say` refuse the
//! same texts the same way: an empty text is refused at `text` before any voice is looked
//! for. (Before, HTTP checked the text itself and the CLI went on to look for a connection.)

use crate::support::{Http, tavo};
use serde_json::json;

#[test]
fn an_empty_text_is_refused_the_same_way_by_both_doors() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path();
    let out_file = data.join("out.mp3");
    let out = tavo(
        data,
        &["tts", "say", "  ", "-o", &out_file.to_string_lossy()],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    assert!(!out_file.exists(), "nothing was written");

    let server = Http::start(data);
    let (status, answer) = server.post("/api/tts/say", &json!({"text": "  "}));
    assert_eq!(status, 400, "{answer}");
    let error = &answer["error"];
    assert_eq!(error["details"]["path"], "text", "{answer}");
    assert_eq!(
        said,
        format!(
            "error: {} ({})",
            error["message"].as_str().unwrap_or_default(),
            error["code"].as_str().unwrap_or_default()
        ),
        "the CLI words the HTTP refusal"
    );
}
