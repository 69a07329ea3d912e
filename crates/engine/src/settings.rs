//! The settings catalogue behind `tavo settings get|set`: every key a user may set, its type,
//! default and bounds, so that a bad value is refused with the reason instead of being stored
//! and silently ignored later.

use serde_json::Value;
use tavo_store::{Store, StoreError};
use tavo_tools::ToolSettings;
use tavo_web::AddressPolicy;

/// The type and bounds of one setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    /// An integer in `min..=max`.
    Int {
        min: i64,
        max: i64,
    },
    /// One of these strings.
    Enum(&'static [&'static str]),
}

/// One documented setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingSpec {
    pub key: &'static str,
    pub kind: Kind,
    pub about: &'static str,
}

/// Every setting `tavo settings` knows.
pub const SETTINGS: [SettingSpec; 9] = [
    SettingSpec {
        key: "tools.enabled",
        kind: Kind::Bool,
        about: "tool use on or off (default false)",
    },
    SettingSpec {
        key: "tools.dynamicLoading",
        kind: Kind::Bool,
        about: "start with the resident tools and let the model find the rest with tavo_tool_search (default true)",
    },
    SettingSpec {
        key: "tools.recursionLimit",
        kind: Kind::Int { min: 1, max: 100 },
        about: "model rounds that may call tools in one reply (default 5)",
    },
    SettingSpec {
        key: "tools.maxCalls",
        kind: Kind::Int { min: 1, max: 1000 },
        about: "tool calls executed in one reply (default 50)",
    },
    SettingSpec {
        key: "tools.callTimeoutSeconds",
        kind: Kind::Int { min: 1, max: 3600 },
        about: "seconds one tool call may run, waiting for the user excluded (default 60)",
    },
    SettingSpec {
        key: "tools.reasoningMode",
        kind: Kind::Enum(&["disabled", "sinceLastUserMessage", "activeToolChain"]),
        about: "which earlier reasoning goes back with tool rounds (default disabled)",
    },
    SettingSpec {
        key: crate::prompt::CONVERTER_SETTING,
        kind: Kind::Enum(&["none", "mergeConsecutive", "singleSystem", "systemThenUser"]),
        about: "provider prompt converter applied to every reply's messages and to `tavo prompt` (default none)",
    },
    SettingSpec {
        key: crate::prompt::PRESET_SAMPLERS_SETTING,
        kind: Kind::Bool,
        about: "a chat preset's SillyTavern sampler and context values (temperature, top_p, top_k, openai_max_context, openai_max_tokens) win over the connection's (default true)",
    },
    SettingSpec {
        key: AddressPolicy::SETTING,
        kind: Kind::Enum(&AddressPolicy::NAMES),
        about: "addresses tavo_web_fetch may reach: allowAll (default: loopback, private, link-local too) or publicOnly (hosted deployments); read at start",
    },
];

/// Why a setting was refused.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    #[error("unknown setting {0:?}; known settings: {list}", list = known_keys())]
    Unknown(String),
    #[error("{key} must be {expected}, got {got:?}")]
    Invalid {
        key: &'static str,
        expected: String,
        got: String,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn known_keys() -> String {
    SETTINGS
        .iter()
        .map(|s| s.key)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The spec of `key`.
pub fn spec(key: &str) -> Option<&'static SettingSpec> {
    SETTINGS.iter().find(|s| s.key == key)
}

/// Parses a command-line value for `key` (`true`, `5`, `activeToolChain`; JSON accepted).
pub fn parse(key: &str, raw: &str) -> Result<Value, SettingError> {
    let spec = spec(key).ok_or_else(|| SettingError::Unknown(key.to_owned()))?;
    let raw_trim = raw.trim();
    let json: Option<Value> = serde_json::from_str(raw_trim).ok();
    let invalid = |expected: String| SettingError::Invalid {
        key: spec.key,
        expected,
        got: raw.to_owned(),
    };
    match spec.kind {
        Kind::Bool => match json {
            Some(Value::Bool(b)) => Ok(Value::Bool(b)),
            _ => Err(invalid("true or false".into())),
        },
        Kind::Int { min, max } => match json.as_ref().and_then(Value::as_i64) {
            Some(n) if (min..=max).contains(&n) => Ok(Value::from(n)),
            _ => Err(invalid(format!("an integer from {min} to {max}"))),
        },
        Kind::Enum(names) => {
            let text = match &json {
                Some(Value::String(s)) => s.as_str(),
                _ => raw_trim,
            };
            if names.contains(&text) {
                Ok(Value::String(text.to_owned()))
            } else {
                Err(invalid(format!("one of {}", names.join(", "))))
            }
        }
    }
}

/// The effective value of `key`: the stored one, else the default.
pub fn get(store: &Store, key: &str) -> Result<Value, SettingError> {
    let spec = spec(key).ok_or_else(|| SettingError::Unknown(key.to_owned()))?;
    if let Some(v) = store.setting_get(spec.key)? {
        return Ok(v);
    }
    if spec.key == AddressPolicy::SETTING {
        return Ok(Value::from(AddressPolicy::default().as_str()));
    }
    if spec.key == crate::prompt::CONVERTER_SETTING {
        return Ok(Value::from("none"));
    }
    if spec.key == crate::prompt::PRESET_SAMPLERS_SETTING {
        return Ok(Value::Bool(true));
    }
    let defaults = serde_json::to_value(ToolSettings::default()).unwrap_or(Value::Null);
    Ok(spec
        .key
        .strip_prefix("tools.")
        .and_then(|f| defaults.get(f))
        .cloned()
        .unwrap_or(Value::Null))
}

/// Validates and stores `key`; returns the stored value.
pub fn set(store: &Store, key: &str, raw: &str) -> Result<Value, SettingError> {
    let value = parse(key, raw)?;
    store.setting_set(key, &value)?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_against_the_catalogue() {
        assert_eq!(parse("tools.enabled", "true").ok(), Some(Value::Bool(true)));
        assert!(parse("tools.enabled", "yes").is_err());
        assert_eq!(
            parse("tools.recursionLimit", "7").ok(),
            Some(Value::from(7))
        );
        assert!(
            parse("tools.recursionLimit", "0")
                .is_err_and(|e| e.to_string().contains("from 1 to 100"))
        );
        assert_eq!(
            parse("tools.reasoningMode", "activeToolChain").ok(),
            Some(Value::from("activeToolChain"))
        );
        assert_eq!(
            parse("tools.reasoningMode", "\"disabled\"").ok(),
            Some(Value::from("disabled"))
        );
        assert!(parse("tools.reasoningMode", "sometimes").is_err());
        assert!(parse("tools.nope", "1").is_err_and(|e| e.to_string().contains("tools.enabled")));
    }

    #[test]
    fn every_catalogued_key_is_a_tool_settings_field_and_round_trips() {
        let tool_keys: Vec<&str> = SETTINGS
            .iter()
            .map(|s| s.key)
            .filter(|k| k.starts_with("tools."))
            .collect();
        assert_eq!(tool_keys, ToolSettings::KEYS);
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            get(&store, "tools.recursionLimit").ok(),
            Some(Value::from(5))
        );
        assert_eq!(get(&store, "tools.enabled").ok(), Some(Value::Bool(false)));
        assert_eq!(
            get(&store, "web.fetchAddresses").ok(),
            Some(Value::from("allowAll"))
        );
        assert!(parse("web.fetchAddresses", "everything").is_err());
        assert_eq!(
            get(&store, "prompt.converter").ok(),
            Some(Value::from("none"))
        );
        assert_eq!(
            get(&store, "prompt.presetSamplers").ok(),
            Some(Value::Bool(true))
        );
        set(&store, "prompt.converter", "singleSystem").unwrap_or_else(|e| panic!("{e}"));
        set(&store, "prompt.presetSamplers", "false").unwrap_or_else(|e| panic!("{e}"));
        let prompt = crate::prompt::PromptSettings::load(&store).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(prompt.converter, tavo_prompt::PromptConverter::SingleSystem);
        assert!(!prompt.preset_samplers);
        assert!(parse("prompt.converter", "merge").is_err());
        set(&store, "web.fetchAddresses", "publicOnly").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            tavo_tools::web::load_fetch_policy(&store).addresses,
            AddressPolicy::PublicOnly
        );
        set(&store, "tools.callTimeoutSeconds", "3").unwrap_or_else(|e| panic!("{e}"));
        set(&store, "tools.reasoningMode", "sinceLastUserMessage")
            .unwrap_or_else(|e| panic!("{e}"));
        let loaded = ToolSettings::load(&store).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(loaded.call_timeout_seconds, 3);
        assert_eq!(
            loaded.reasoning_mode,
            tavo_tools::exposure::ReasoningMode::SinceLastUserMessage
        );
    }
}
