//! What `tavo image` and `tavo tts` share: the `--option KEY=VALUE` flags of their connection
//! commands.

use anyhow::anyhow;
use serde_json::{Map, Value};

/// The `--option KEY=VALUE` flags as a connection's options: VALUE as JSON when it parses
/// (`speed=1.2`, `voiceSettings={"stability":0.5}`), else as text (`voice=alloy`).
pub fn parse_options(raw: &[String]) -> anyhow::Result<Map<String, Value>> {
    let mut out = Map::new();
    for kv in raw {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| anyhow!("--option {kv:?}: expected KEY=VALUE"))?;
        let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_owned()));
        out.insert(k.trim().to_owned(), value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_json_when_they_parse_and_text_otherwise() {
        let raw = [
            "speed=1.2".to_owned(),
            " voice =alloy".to_owned(),
            r#"voiceSettings={"stability":0.5}"#.to_owned(),
            "note=a=b".to_owned(),
        ];
        let options = parse_options(&raw).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            Value::Object(options),
            json!({"speed": 1.2, "voice": "alloy", "voiceSettings": {"stability": 0.5}, "note": "a=b"})
        );
        let e = parse_options(&["speed".to_owned()]).expect_err("no =");
        assert!(e.to_string().contains("expected KEY=VALUE"), "{e}");
    }
}
