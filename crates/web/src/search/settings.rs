//! Saved web-search APIs: several may be saved, exactly one is the default whenever the list is
//! non-empty, and only the default runs. An incomplete default hides the tool; there is no
//! fallback to another saved API. Saving validates fields locally and makes no request.

use serde::{Deserialize, Serialize};

use super::SearchError;

/// Tavily search depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SearchDepth {
    /// `basic`.
    #[default]
    Basic,
    /// `advanced`.
    Advanced,
    /// `fast`.
    Fast,
    /// `ultra-fast`: chunks per source are not sent.
    UltraFast,
}

impl SearchDepth {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchDepth::Basic => "basic",
            SearchDepth::Advanced => "advanced",
            SearchDepth::Fast => "fast",
            SearchDepth::UltraFast => "ultra-fast",
        }
    }

    /// Parses a wire value.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "basic" => Some(SearchDepth::Basic),
            "advanced" => Some(SearchDepth::Advanced),
            "fast" => Some(SearchDepth::Fast),
            "ultra-fast" => Some(SearchDepth::UltraFast),
            _ => None,
        }
    }
}

/// The provider of a saved search API. Tavily only, at its fixed official address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchProvider {
    /// api.tavily.com.
    #[default]
    Tavily,
}

/// One saved search API.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchApi {
    /// Stable id within the settings.
    pub id: String,
    /// The user's label.
    pub name: String,
    /// The provider.
    #[serde(default)]
    pub provider: SearchProvider,
    /// The user's own API key. Empty means incomplete (saved, but cannot run).
    #[serde(default)]
    pub api_key: String,
    /// Search depth.
    #[serde(default)]
    pub search_depth: SearchDepth,
    /// Chunks per source, 1–3 (not sent with `ultra-fast`).
    #[serde(default = "default_chunks")]
    pub chunks_per_source: u8,
    /// Results when the model does not ask for a number, 1–20.
    #[serde(default = "default_results")]
    pub max_results: u8,
}

fn default_chunks() -> u8 {
    3
}

fn default_results() -> u8 {
    5
}

impl SearchApi {
    /// A Tavily API with default depth, chunks and result count.
    pub fn tavily(
        id: impl Into<String>,
        name: impl Into<String>,
        api_key: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            provider: SearchProvider::Tavily,
            api_key: api_key.into(),
            search_depth: SearchDepth::Basic,
            chunks_per_source: default_chunks(),
            max_results: default_results(),
        }
    }

    /// Local validation of every field (no network), naming the field on error.
    pub fn validate(&self) -> Result<(), SearchError> {
        if self.id.trim().is_empty() {
            return Err(SearchError::invalid_setting("id", "must not be empty"));
        }
        if self.name.trim().is_empty() {
            return Err(SearchError::invalid_setting("name", "must not be empty"));
        }
        if self
            .api_key
            .chars()
            .any(|c| c.is_control() || c.is_whitespace())
        {
            return Err(SearchError::invalid_setting(
                "apiKey",
                "must not contain spaces or control characters",
            ));
        }
        if !(1..=3).contains(&self.chunks_per_source) {
            return Err(SearchError::invalid_setting(
                "chunksPerSource",
                "must be between 1 and 3",
            ));
        }
        if !(1..=20).contains(&self.max_results) {
            return Err(SearchError::invalid_setting(
                "maxResults",
                "must be between 1 and 20",
            ));
        }
        Ok(())
    }

    /// Whether this API can run: valid and with a key.
    pub fn is_complete(&self) -> bool {
        !self.api_key.is_empty() && self.validate().is_ok()
    }

    /// The key shown in lists: the first four characters and the length only.
    pub fn masked_key(&self) -> String {
        if self.api_key.is_empty() {
            return String::new();
        }
        let prefix: String = self.api_key.chars().take(4).collect();
        format!("{prefix}… ({} chars)", self.api_key.chars().count())
    }
}

/// All saved search APIs and which one is the default.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchSettings {
    /// Saved APIs in the user's order.
    #[serde(default)]
    pub apis: Vec<SearchApi>,
    /// The id of the default API; `None` only when `apis` is empty.
    #[serde(default)]
    pub default_id: Option<String>,
}

impl SearchSettings {
    /// The settings key under which the CLI and server store these settings.
    pub const SETTINGS_KEY: &'static str = "web.searchApis";

    /// Adds or replaces (by id) an API after validating it. The first API becomes the default.
    pub fn save(&mut self, api: SearchApi) -> Result<(), SearchError> {
        api.validate()?;
        match self.apis.iter_mut().find(|a| a.id == api.id) {
            Some(existing) => *existing = api,
            None => self.apis.push(api),
        }
        self.normalise();
        Ok(())
    }

    /// Removes an API; if it was the default, the first remaining one becomes the default.
    pub fn remove(&mut self, id: &str) -> Result<SearchApi, SearchError> {
        let pos = self
            .apis
            .iter()
            .position(|a| a.id == id)
            .ok_or_else(|| SearchError::NotFound(id.to_string()))?;
        let removed = self.apis.remove(pos);
        self.normalise();
        Ok(removed)
    }

    /// Makes `id` the default.
    pub fn set_default(&mut self, id: &str) -> Result<(), SearchError> {
        if !self.apis.iter().any(|a| a.id == id) {
            return Err(SearchError::NotFound(id.to_string()));
        }
        self.default_id = Some(id.to_string());
        Ok(())
    }

    /// The default API, whether complete or not.
    pub fn default_api(&self) -> Option<&SearchApi> {
        let id = self.default_id.as_deref()?;
        self.apis.iter().find(|a| a.id == id)
    }

    /// The API `tavo_web_search` runs with: the default, only if complete. `None` hides the tool.
    pub fn runnable(&self) -> Option<&SearchApi> {
        self.default_api().filter(|a| a.is_complete())
    }

    /// Restores the invariant after loading or editing: exactly one default when non-empty,
    /// none when empty.
    pub fn normalise(&mut self) {
        let valid_default = self
            .default_id
            .as_deref()
            .is_some_and(|id| self.apis.iter().any(|a| a.id == id));
        if !valid_default {
            self.default_id = self.apis.first().map(|a| a.id.clone());
        }
    }

    /// A fresh id not used by any saved API.
    pub fn next_id(&self) -> String {
        (1..)
            .map(|n| format!("tavily-{n}"))
            .find(|id| !self.apis.iter().any(|a| &a.id == id))
            .unwrap_or_else(|| "tavily".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_default_whenever_non_empty() {
        let mut s = SearchSettings::default();
        assert!(s.default_api().is_none());
        assert!(s.save(SearchApi::tavily("a", "A", "tvly-a")).is_ok());
        assert!(s.save(SearchApi::tavily("b", "B", "tvly-b")).is_ok());
        assert_eq!(s.default_id.as_deref(), Some("a"));
        assert!(s.set_default("b").is_ok());
        assert!(s.remove("b").is_ok());
        assert_eq!(s.default_id.as_deref(), Some("a"));
        assert!(s.remove("a").is_ok());
        assert_eq!(s.default_id, None);
        assert_eq!(
            s.remove("zzz").err().map(|e| e.code()),
            Some("resource_not_found")
        );
    }

    #[test]
    fn incomplete_default_hides_the_tool_without_fallback() {
        let mut s = SearchSettings::default();
        assert!(s.save(SearchApi::tavily("draft", "Draft", "")).is_ok());
        assert!(s.save(SearchApi::tavily("full", "Full", "tvly-x")).is_ok());
        assert!(s.runnable().is_none());
        assert!(s.set_default("full").is_ok());
        assert_eq!(s.runnable().map(|a| a.id.as_str()), Some("full"));
    }

    #[test]
    fn saving_validates_ranges_and_names_the_field() {
        let mut s = SearchSettings::default();
        let mut api = SearchApi::tavily("a", "A", "k");
        api.chunks_per_source = 4;
        let err = s
            .save(api.clone())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("chunksPerSource"), "{err}");
        api.chunks_per_source = 1;
        api.max_results = 21;
        assert!(s.save(api.clone()).is_err());
        api.max_results = 20;
        api.api_key = "tvly bad".into();
        assert!(s.save(api).is_err());
        assert!(s.apis.is_empty());
    }

    #[test]
    fn depth_round_trips_in_kebab_case_and_key_is_masked() {
        let v = serde_json::to_value(SearchDepth::UltraFast).ok();
        assert_eq!(v, Some(serde_json::json!("ultra-fast")));
        assert_eq!(
            SearchDepth::parse("ultra-fast"),
            Some(SearchDepth::UltraFast)
        );
        let api = SearchApi::tavily("a", "A", "tvly-secret-key");
        assert!(!api.masked_key().contains("secret"));
    }
}
