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
    /// `true` or `false`.
    Bool,
    /// An integer in `min..=max`.
    Int {
        /// The smallest value allowed.
        min: i64,
        /// The largest value allowed.
        max: i64,
    },
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// A secret string of at least `min_len` characters: stored, never shown by `get` (which
    /// answers [`HIDDEN`] when it is set); [`secret`] reads it for the one door that shows it.
    Secret {
        /// The fewest characters a value may have (16 for the MCP token), so a guessable token
        /// is refused; spaces are refused too.
        min_len: usize,
    },
    /// Free text of at most `max_len` characters (a prompt, a name).
    Text {
        /// The most characters a value may have; blank text is refused too.
        max_len: usize,
    },
}

/// What `get` answers for a secret that is set.
pub const HIDDEN: &str = "(set; hidden)";

/// One documented setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingSpec {
    /// The setting's dotted name, as stored and as typed (`tools.enabled`).
    pub key: &'static str,
    /// What values it takes; `set` refuses any other.
    pub kind: Kind,
    /// One line for the user: what it does and its default. `tavo settings` prints it beside
    /// the value, and the server's settings API answers it with the value.
    pub about: &'static str,
}

/// Every setting `tavo settings` knows.
pub const SETTINGS: [SettingSpec; 36] = [
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
        key: "tools.pageCallTimeoutSeconds",
        kind: Kind::Int { min: 1, max: 3600 },
        about: "seconds a page's function tool (registerFunctionTool) may run in a reply (default 120)",
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
        key: crate::prompt::RECURSIVE_SCAN_SETTING,
        kind: Kind::Bool,
        about: "lorebook entries may activate other entries through their content (SillyTavern's \"Recursive scan\"; default true). A book's own recursive_scanning: false turns it off for that book",
    },
    SettingSpec {
        key: crate::prompt::EJS_SETTING,
        kind: Kind::Bool,
        about: "EJS templates (<% %>) in prompt fields: cards, greetings, lorebooks, presets, regex rules (Tavo's \"启用 EJS 模板\"; default true). Off, tags reach the prompt as written",
    },
    SettingSpec {
        key: AddressPolicy::SETTING,
        kind: Kind::Enum(&AddressPolicy::NAMES),
        about: "addresses tavo_web_fetch may reach: allowAll (default: loopback, private, link-local too) or publicOnly (hosted deployments); read at start",
    },
    SettingSpec {
        key: JAVASCRIPT_SETTING,
        kind: Kind::Enum(&JAVASCRIPT_MODES),
        about: "scripts in chat bubbles (advanced rendering, TavoJS): off (default: shown as HTML without scripts), ask (each card's scripts run once the user allows them), auto (run at once, in a sandboxed frame)",
    },
    SettingSpec {
        key: THEME_SETTING,
        kind: Kind::Int {
            min: 0,
            max: i64::MAX,
        },
        about: "the chat theme the app is styled with, by id (tavo_theme_all lists them); 0 (default) is the app's own look",
    },
    SettingSpec {
        key: MCP_ENABLED,
        kind: Kind::Bool,
        about: "tavo's MCP server at POST /mcp on tavo serve (default false); enabling it without a token generates one",
    },
    SettingSpec {
        key: MCP_TOKEN,
        kind: Kind::Secret { min_len: 16 },
        about: "the bearer token MCP clients send (at least 16 characters); shown only by `tavo mcp info` and the app's MCP settings",
    },
    SettingSpec {
        key: MCP_SCOPE,
        kind: Kind::Enum(&MCP_SCOPES),
        about: "who may reach /mcp: loopback (default: this machine only) or network (any address the server listens on)",
    },
    SettingSpec {
        key: crate::memory::EVERY_SETTING,
        kind: Kind::Int { min: 0, max: 1000 },
        about: "long-term memory: extract automatically after this many new messages when a chat's memory is enabled (default 10; 0 = only `tavo memory extract`)",
    },
    SettingSpec {
        key: crate::memory::CONNECTION_SETTING,
        kind: Kind::Text { max_len: 200 },
        about: "long-term memory: the connection extraction requests use (default: the default connection)",
    },
    SettingSpec {
        key: crate::memory::PROMPT_SETTING,
        kind: Kind::Text { max_len: 20_000 },
        about: "long-term memory: the extraction prompt, with {{char}}, {{user}}, {{memories}} and {{messages}} (default: the built-in prompt `tavo memory prompt` prints)",
    },
    SettingSpec {
        key: crate::translate::LANGUAGE_SETTING,
        kind: Kind::Text { max_len: 100 },
        about: "message translation: the target language (default English; a chat's translation.language and `tavo translate --to` win)",
    },
    SettingSpec {
        key: crate::translate::CONNECTION_SETTING,
        kind: Kind::Text { max_len: 200 },
        about: "message translation: the connection translations use (default: the default connection)",
    },
    SettingSpec {
        key: crate::translate::PROMPT_SETTING,
        kind: Kind::Text { max_len: 20_000 },
        about: "message translation: the prompt template; must keep {{language}} and {{content}} (default: the built-in prompt)",
    },
    SettingSpec {
        key: crate::group::CONNECTION_SETTING,
        kind: Kind::Text { max_len: 200 },
        about: "group chats, contextual-speaker mode: the connection the speaker-selection request uses (default: the reply's connection)",
    },
    SettingSpec {
        key: crate::group::PROMPT_SETTING,
        kind: Kind::Text { max_len: 20_000 },
        about: "group chats, contextual-speaker mode: the speaker-selection prompt, with {{group}}, {{groupNotMuted}}, {{user}} and {{messages}} (default: the built-in prompt)",
    },
    SettingSpec {
        key: crate::speech::config::AUTO_PLAY,
        kind: Kind::Bool,
        about: "voice: play each finished reply aloud in the open app, with the playback rules (Tavo's 自动播放; default false)",
    },
    SettingSpec {
        key: crate::speech::config::BACKGROUND_PLAYBACK,
        kind: Kind::Bool,
        about: "voice: keep speaking while the app's page is hidden (Tavo's 后台播放; off, playback pauses until the page is shown again; default true)",
    },
    SettingSpec {
        key: crate::speech::config::PLAY_NARRATION,
        kind: Kind::Bool,
        about: "voice playback rules: speak narration, the text outside quotes (default true)",
    },
    SettingSpec {
        key: crate::speech::config::ONLY_QUOTES,
        kind: Kind::Bool,
        about: "voice playback rules: speak only quotes (\"…\", “…”, 「…」, 『…』, «…» and > lines) (default false)",
    },
    SettingSpec {
        key: crate::speech::config::PLAY_CODE_BLOCKS,
        kind: Kind::Bool,
        about: "voice playback rules: speak the content of ``` code blocks (default false)",
    },
    SettingSpec {
        key: crate::speech::config::PLAY_TAG_CONTENT,
        kind: Kind::Bool,
        about: "voice playback rules: speak the content of custom <tag>…</tag> elements such as <action> (default false)",
    },
    SettingSpec {
        key: crate::describe::ENABLED_SETTING,
        kind: Kind::Bool,
        about: "image sending: a reply first has the images of the chat's recent user messages (extra.image) described by the image-description connection, and every prompt carries the description (default false)",
    },
    SettingSpec {
        key: crate::describe::CONNECTION_SETTING,
        kind: Kind::Text { max_len: 200 },
        about: "image sending: the chat connection (its model must take images) that describes them (default: the default connection)",
    },
    SettingSpec {
        key: crate::describe::DESCRIBE_PROMPT_SETTING,
        kind: Kind::Text { max_len: 4_000 },
        about: "image sending: the description prompt sent with the image (default: describe it in detail for someone who cannot see it)",
    },
    SettingSpec {
        key: crate::describe::INJECT_PROMPT_SETTING,
        kind: Kind::Text { max_len: 2_000 },
        about: "image sending: how a description enters the conversation, after the message's own text; keeps {{description}} (default [发送了一张图片：{{description}}])",
    },
    SettingSpec {
        key: tavo_llm::media::image::INJECTION_TEMPLATE_KEY,
        kind: Kind::Text { max_len: 2_000 },
        about: "image generation: the text written into the chat with an image /imagine generated, with {{prompt}} and the chat's macros (default [生成了一张图片：{{prompt}}])",
    },
];

/// Tavo's MCP server on or off.
pub const MCP_ENABLED: &str = "mcp.enabled";
/// The MCP bearer token.
pub const MCP_TOKEN: &str = "mcp.token";
/// Who may reach the MCP server.
pub const MCP_SCOPE: &str = "mcp.scope";
/// The values of [`MCP_SCOPE`], the default first.
pub const MCP_SCOPES: [&str; 2] = ["loopback", "network"];

/// The global JavaScript switch of advanced rendering (Tavo's "JavaScript 支持"). Bubble scripts
/// are content from strangers, so the default is `off`; the browser app reads it to decide
/// whether a message's scripts run, and asks once per card under `ask`.
pub const JAVASCRIPT_SETTING: &str = "rendering.javascript";

/// The current chat theme (seed 000: "更新或重新绑定当前主题时，WebView 会实时更新配置"): a library
/// setting, so every door can change it and every open page follows at once (the `setting`
/// library event); `0` is the app's own look, which the app also shows for a theme id that no longer exists.
pub const THEME_SETTING: &str = tavo_tools::theme_store::CURRENT_KEY;

/// The values of [`JAVASCRIPT_SETTING`], the default first.
pub const JAVASCRIPT_MODES: [&str; 3] = ["off", "ask", "auto"];

/// Why a setting was refused.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    /// The key is not in [`SETTINGS`] (a typo, or a setting tavo does not have). The message
    /// lists the known keys.
    #[error("unknown setting {0:?}; known settings: {list}", list = known_keys())]
    Unknown(String),
    /// The value does not fit the setting's [`Kind`]; nothing was stored. The message says
    /// what the setting takes.
    #[error("{key} must be {expected}, got {got:?}")]
    Invalid {
        /// The setting.
        key: &'static str,
        /// What it takes, in words (`an integer from 1 to 100`).
        expected: String,
        /// The refused value as typed; for a secret only its length, so it never shows.
        got: String,
    },
    /// The library could not read or write the setting.
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
        Kind::Secret { min_len } => {
            let text = match &json {
                Some(Value::String(s)) => s.as_str(),
                _ => raw_trim,
            };
            if text.chars().count() >= min_len && !text.chars().any(char::is_whitespace) {
                Ok(Value::String(text.to_owned()))
            } else {
                Err(SettingError::Invalid {
                    key: spec.key,
                    expected: format!("at least {min_len} characters without spaces"),
                    // The refused value is a secret too.
                    got: format!("{} characters", text.chars().count()),
                })
            }
        }
        Kind::Text { max_len } => {
            let text = match &json {
                Some(Value::String(s)) => s.as_str(),
                _ => raw,
            };
            if text.trim().is_empty() || text.chars().count() > max_len {
                return Err(invalid(format!("text of 1 to {max_len} characters")));
            }
            Ok(Value::String(text.to_owned()))
        }
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
        if matches!(spec.kind, Kind::Secret { .. }) {
            return Ok(Value::from(HIDDEN));
        }
        return Ok(v);
    }
    if spec.key == MCP_ENABLED {
        return Ok(Value::Bool(false));
    }
    if spec.key == MCP_SCOPE {
        return Ok(Value::from(MCP_SCOPES[0]));
    }
    if spec.key == AddressPolicy::SETTING {
        return Ok(Value::from(AddressPolicy::default().as_str()));
    }
    if spec.key == crate::prompt::CONVERTER_SETTING {
        return Ok(Value::from("none"));
    }
    if spec.key == crate::prompt::PRESET_SAMPLERS_SETTING || spec.key == crate::prompt::EJS_SETTING
    {
        return Ok(Value::Bool(true));
    }
    if spec.key == JAVASCRIPT_SETTING {
        return Ok(Value::from(JAVASCRIPT_MODES[0]));
    }
    if spec.key == THEME_SETTING {
        return Ok(Value::from(0));
    }
    if spec.key == crate::memory::EVERY_SETTING {
        return Ok(Value::from(crate::memory::DEFAULT_EVERY));
    }
    if spec.key == crate::memory::PROMPT_SETTING {
        return Ok(Value::from(crate::memory::DEFAULT_PROMPT));
    }
    if spec.key == crate::group::PROMPT_SETTING {
        return Ok(Value::from(crate::group::DEFAULT_PROMPT));
    }
    if let Some((_, default)) = crate::speech::config::SWITCHES
        .iter()
        .find(|(k, _)| *k == spec.key)
    {
        return Ok(Value::Bool(*default));
    }
    let defaults = serde_json::to_value(ToolSettings::default()).unwrap_or(Value::Null);
    Ok(spec
        .key
        .strip_prefix("tools.")
        .and_then(|f| defaults.get(f))
        .cloned()
        .unwrap_or(Value::Null))
}

/// Validates and stores `key`; returns the stored value (a secret as [`HIDDEN`]). Enabling the
/// MCP server with no token set generates one, as Tavo does.
pub fn set(store: &Store, key: &str, raw: &str) -> Result<Value, SettingError> {
    let value = parse(key, raw)?;
    store.write(|tx| {
        tx.setting_set(key, &value)?;
        if key == MCP_ENABLED && value == Value::Bool(true) && tx.setting_get(MCP_TOKEN)?.is_none()
        {
            tx.setting_set(MCP_TOKEN, &Value::from(new_token()))?;
        }
        Ok(())
    })?;
    match spec(key).map(|s| s.kind) {
        Some(Kind::Secret { .. }) => Ok(Value::from(HIDDEN)),
        _ => Ok(value),
    }
}

/// The stored value of a secret setting (`None` when unset), for the door that shows it.
pub fn secret(store: &Store, key: &str) -> Result<Option<String>, SettingError> {
    Ok(store
        .setting_get(key)?
        .and_then(|v| v.as_str().map(str::to_owned)))
}

/// A fresh random token: 32 hex digits (122 random bits of two v4 UUIDs' worth).
pub fn new_token() -> String {
    format!(
        "tavo_{}{}",
        uuid::Uuid::new_v4().simple(),
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    )
}

/// A text setting, or `None` when it is unset, not a string, or only whitespace (the
/// one-request features treat an emptied setting as "use the default").
pub(crate) fn text_setting(
    store: &tavo_store::Store,
    key: &str,
) -> Result<Option<String>, tavo_store::StoreError> {
    Ok(store
        .setting_get(key)?
        .and_then(|v| v.as_str().map(str::to_owned))
        .filter(|s| !s.trim().is_empty()))
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
    fn ejs_is_on_by_default_and_reaches_the_prompt_settings() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(get(&store, "ejs.enabled").ok(), Some(Value::Bool(true)));
        let loaded = crate::prompt::PromptSettings::load(&store).unwrap_or_else(|e| panic!("{e}"));
        assert!(loaded.ejs);
        set(&store, "ejs.enabled", "false").unwrap_or_else(|e| panic!("{e}"));
        let loaded = crate::prompt::PromptSettings::load(&store).unwrap_or_else(|e| panic!("{e}"));
        assert!(!loaded.ejs);
        assert!(parse("ejs.enabled", "maybe").is_err());
    }

    #[test]
    fn bubble_javascript_is_off_by_default_and_takes_the_three_modes() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            get(&store, "rendering.javascript").ok(),
            Some(Value::from("off"))
        );
        for mode in ["ask", "auto", "off"] {
            assert_eq!(
                set(&store, "rendering.javascript", mode).ok(),
                Some(Value::from(mode))
            );
            assert_eq!(
                get(&store, "rendering.javascript").ok(),
                Some(Value::from(mode))
            );
        }
        let refused = set(&store, "rendering.javascript", "always");
        assert!(
            refused.is_err_and(|e| e.to_string().contains("one of off, ask, auto")),
            "a bad mode names the values"
        );
        assert_eq!(
            get(&store, "rendering.javascript").ok(),
            Some(Value::from("off")),
            "a refused value changes nothing"
        );
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
