//! Which tools a request carries (seed 000 "启用工具", seed 001 generation types).
//!
//! Pure functions of settings: tools are off by default; with dynamic loading on, the first
//! request carries the resident tools only (`tavo_tool_search`, `tavo_ask_user`,
//! `tavo_web_fetch`, and `tavo_web_search` when a complete default search API exists;
//! `extension_tool_search` when any extension tool is registered); with it off, every built-in
//! tool goes in the first request. Continue, impersonate and quiet generations carry no tools.
//! The engine owns one [`ExposedSet`] per reply; discovery adds to it.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tavo_store::Store;

use crate::error::{ErrorCode, ToolError};
use crate::operation::Residency;
use crate::registry::{Registry, ToolDeclaration};

/// The short generic hint sent with every round that carries tools, and with no other round.
/// Tool-specific guidance lives only in each tool's description (seed 000).
pub const TOOL_USE_HINT: &str = "You can call tools in this conversation. When a visible tool can directly do what \
the user asks, call that tool instead of describing what you would do or asking the user to do it.";

/// What kind of generation a reply is (SillyTavern's `canPerformToolCalls(type)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum GenerationKind {
    /// A normal reply to the user.
    #[default]
    Normal,
    /// Another answer to the same turn.
    Regenerate,
    /// An alternative answer (swipe).
    Swipe,
    /// Continue the last message.
    Continue,
    /// Write as the user.
    Impersonate,
    /// A background (quiet) prompt.
    Quiet,
}

impl GenerationKind {
    /// Whether this kind of generation may call tools. The others still see earlier tool calls
    /// in the history, they just cannot make new ones.
    pub fn can_perform_tool_calls(self) -> bool {
        matches!(
            self,
            GenerationKind::Normal | GenerationKind::Regenerate | GenerationKind::Swipe
        )
    }
}

/// Interleaved-reasoning mode for tool rounds (seed 001, "交替思考").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum ReasoningMode {
    /// No reasoning context in tool-call requests (default, most compatible).
    #[default]
    Disabled,
    /// Reasoning of every tool round since the last user message.
    SinceLastUserMessage,
    /// Reasoning only while the current tool chain is unfinished.
    ActiveToolChain,
}

/// The tool settings (`tools.*` keys of the settings store). Every limit is adjustable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ToolSettings {
    /// `tools.enabled`: tool use on or off (default off).
    pub enabled: bool,
    /// `tools.dynamicLoading`: start with the resident tools and discover the rest (default on).
    pub dynamic_loading: bool,
    /// `tools.recursionLimit`: model rounds that may call tools in one reply (default 5, seed 001).
    pub recursion_limit: u32,
    /// `tools.maxCalls`: tool calls in one reply (default 50).
    pub max_calls: u32,
    /// `tools.callTimeoutSeconds`: per-call time-out, waiting for the user excluded (default 60).
    pub call_timeout_seconds: u32,
    /// `tools.pageCallTimeoutSeconds`: time-out of a page's function tool in a reply (default
    /// 120, Tavo's JavaScript tool time-out).
    pub page_call_timeout_seconds: u32,
    /// `tools.reasoningMode`: interleaved reasoning mode (default disabled).
    pub reasoning_mode: ReasoningMode,
}

impl Default for ToolSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            dynamic_loading: true,
            recursion_limit: 5,
            max_calls: 50,
            call_timeout_seconds: 60,
            page_call_timeout_seconds: 120,
            reasoning_mode: ReasoningMode::Disabled,
        }
    }
}

impl ToolSettings {
    /// Setting keys, in the order of the struct.
    pub const KEYS: [&'static str; 7] = [
        "tools.enabled",
        "tools.dynamicLoading",
        "tools.recursionLimit",
        "tools.maxCalls",
        "tools.callTimeoutSeconds",
        "tools.pageCallTimeoutSeconds",
        "tools.reasoningMode",
    ];

    /// Reads `tools.*` from the settings store; missing or malformed keys keep their defaults
    /// (a malformed value is logged, never fatal for a reply).
    pub fn load(store: &Store) -> Result<Self, tavo_store::StoreError> {
        let mut map = serde_json::Map::new();
        for (key, value) in store.setting_list("tools.")? {
            if let Some(field) = key.strip_prefix("tools.")
                && Self::KEYS.contains(&key.as_str())
            {
                map.insert(field.to_owned(), value);
            }
        }
        let defaults = Self::default();
        let mut merged = match serde_json::to_value(&defaults) {
            Ok(Value::Object(m)) => m,
            _ => return Ok(defaults),
        };
        for (k, v) in map {
            let mut probe = merged.clone();
            probe.insert(k.clone(), v.clone());
            if serde_json::from_value::<Self>(Value::Object(probe)).is_ok() {
                merged.insert(k, v);
            } else {
                tracing::warn!(key = %k, "ignoring a malformed tools setting");
            }
        }
        Ok(serde_json::from_value(Value::Object(merged)).unwrap_or(defaults))
    }
}

/// What decides the first request's tools besides the settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Availability {
    /// A complete default web-search API exists.
    pub web_search: bool,
    /// Any extension tool is registered.
    pub extensions: bool,
}

/// Tool names of the first request of a reply, in declaration order.
pub fn initial_tools(
    registry: &Registry,
    settings: &ToolSettings,
    kind: GenerationKind,
    avail: Availability,
) -> Vec<String> {
    if !settings.enabled || !kind.can_perform_tool_calls() {
        return Vec::new();
    }
    registry
        .operations()
        .filter(|op| match op.tool_name() {
            "tavo_web_search" => avail.web_search,
            "extension_tool_search" => avail.extensions,
            "tavo_tool_search" => settings.dynamic_loading,
            _ => !settings.dynamic_loading || op.residency() == Residency::Resident,
        })
        .map(|op| op.tool_name().to_owned())
        .collect()
}

/// The generic hint for a round: `Some` exactly when the round carries tools.
pub fn hint_for_round(tool_count: usize) -> Option<&'static str> {
    (tool_count > 0).then_some(TOOL_USE_HINT)
}

/// The tools the model may call in the current reply: the initial set plus everything
/// discovery exposed since. Owned by the engine, one per reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExposedSet {
    order: Vec<String>,
    names: BTreeSet<String>,
}

impl ExposedSet {
    /// The set for a reply's first request.
    pub fn initial(
        registry: &Registry,
        settings: &ToolSettings,
        kind: GenerationKind,
        avail: Availability,
    ) -> Self {
        let mut set = Self::default();
        set.expose(initial_tools(registry, settings, kind, avail));
        set
    }

    /// Adds tools (found by a search); they stay for the rest of the reply.
    pub fn expose(&mut self, names: impl IntoIterator<Item = String>) {
        for name in names {
            if self.names.insert(name.clone()) {
                self.order.push(name);
            }
        }
    }

    /// Whether the model may call `name` now.
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// `unknown_tool` for a call to a tool that exists but was not exposed (or does not exist).
    pub fn check_callable(&self, name: &str) -> Result<(), ToolError> {
        if self.contains(name) {
            Ok(())
        } else {
            Err(ToolError::new(
                ErrorCode::UnknownTool,
                format!(
                    "{name} is not available in this step; call tavo_tool_search to find and enable the right tool first"
                ),
            ))
        }
    }

    /// Names in the order they were exposed.
    pub fn names(&self) -> &[String] {
        &self.order
    }

    /// A snapshot for discovery (`OpContext::shown`).
    pub fn snapshot(&self) -> std::sync::Arc<BTreeSet<String>> {
        std::sync::Arc::new(self.names.clone())
    }

    /// Provider declarations of the built-in tools in the set (extension tools are declared by
    /// the engine from the extension registry).
    pub fn declarations(&self, registry: &Registry) -> Vec<ToolDeclaration> {
        self.order
            .iter()
            .filter_map(|n| registry.declaration(n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_load_defaults_and_ignore_malformed_values() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            ToolSettings::load(&store).ok(),
            Some(ToolSettings::default())
        );
        store
            .setting_set("tools.enabled", &json!(true))
            .unwrap_or_else(|e| panic!("{e}"));
        store
            .setting_set("tools.recursionLimit", &json!("many"))
            .unwrap_or_else(|e| panic!("{e}"));
        store
            .setting_set("tools.reasoningMode", &json!("activeToolChain"))
            .unwrap_or_else(|e| panic!("{e}"));
        let s = ToolSettings::load(&store).unwrap_or_default();
        assert!(s.enabled);
        assert_eq!(s.recursion_limit, 5, "a malformed value keeps the default");
        assert_eq!(s.reasoning_mode, ReasoningMode::ActiveToolChain);
        assert!(s.dynamic_loading);
    }

    #[test]
    fn only_normal_generations_call_tools() {
        assert!(GenerationKind::Normal.can_perform_tool_calls());
        assert!(GenerationKind::Swipe.can_perform_tool_calls());
        assert!(!GenerationKind::Continue.can_perform_tool_calls());
        assert!(!GenerationKind::Impersonate.can_perform_tool_calls());
        assert!(!GenerationKind::Quiet.can_perform_tool_calls());
    }
}
