//! The saved web-search APIs (`web.searchApis`, what `tavo search-api add|list|remove|default`
//! edits), as the app's Settings edits them. Keys are write-only: every view masks them, and a
//! save of an existing API without `apiKey` keeps the stored key. Validation is `tavo_web`'s
//! (`SearchApi::validate`), one read-modify-write per change.

use serde::Deserialize;
use serde_json::{Value, json};
use tavo_store::Store;
use tavo_web::search::{SearchApi, SearchDepth, SearchError, SearchSettings};

use crate::context::store_error;
use crate::error::{ErrorCode, ToolError};
use crate::web::load_search_settings;

/// What a save carries (camelCase; `id` absent → a new API with a fresh id).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchApiInput {
    /// The API to replace; absent for a new one.
    #[serde(default)]
    pub id: Option<String>,
    /// The user's label.
    pub name: String,
    /// The key; absent (or empty on an existing API) keeps the stored one.
    #[serde(default)]
    pub api_key: Option<String>,
    /// `basic` (default), `advanced`, `fast` or `ultra-fast`.
    #[serde(default)]
    pub search_depth: Option<String>,
    /// 1–3 (default 3).
    #[serde(default)]
    pub chunks_per_source: Option<u8>,
    /// 1–20 (default 5).
    #[serde(default)]
    pub max_results: Option<u8>,
    /// Make it the default.
    #[serde(default)]
    pub default: bool,
}

fn search_error(e: SearchError) -> ToolError {
    match e {
        SearchError::NotFound(id) => ToolError::not_found("search API", id),
        SearchError::InvalidSetting { field, message } => {
            ToolError::new(ErrorCode::InvalidArguments, format!("{field}: {message}"))
                .with_details(json!({"path": field, "expected": message}))
        }
        other => ToolError::new(ErrorCode::InvalidArguments, other.to_string()),
    }
}

/// The settings as every door shows them (`tavo search-api list --json`): `{defaultId, apis:
/// [{id, name, provider, searchDepth, chunksPerSource, maxResults, complete, apiKey (masked)}]}`.
pub fn view(settings: &SearchSettings) -> Value {
    let apis: Vec<Value> = settings
        .apis
        .iter()
        .map(|a| {
            json!({
                "id": a.id,
                "name": a.name,
                "provider": a.provider,
                "searchDepth": a.search_depth,
                "chunksPerSource": a.chunks_per_source,
                "maxResults": a.max_results,
                "complete": a.is_complete(),
                "apiKey": a.masked_key(),
            })
        })
        .collect();
    json!({ "defaultId": settings.default_id, "apis": apis })
}

/// The saved APIs, keys masked.
pub fn list(store: &Store) -> Value {
    view(&load_search_settings(store))
}

fn change(
    store: &Store,
    f: impl FnOnce(&mut SearchSettings) -> Result<(), ToolError>,
) -> Result<Value, ToolError> {
    let mut settings = load_search_settings(store);
    f(&mut settings)?;
    settings.normalise();
    let value = serde_json::to_value(&settings)
        .map_err(|_| ToolError::internal("saving the search APIs"))?;
    store
        .setting_set(SearchSettings::SETTINGS_KEY, &value)
        .map_err(|e| store_error("saving the search APIs", e))?;
    Ok(view(&settings))
}

/// Adds or replaces one API (see [`SearchApiInput`]); answers the new view.
pub fn save(store: &Store, input: SearchApiInput) -> Result<Value, ToolError> {
    change(store, |settings| {
        let existing = input
            .id
            .as_deref()
            .and_then(|id| settings.apis.iter().find(|a| a.id == id))
            .cloned();
        if let (Some(id), None) = (&input.id, &existing) {
            return Err(ToolError::not_found("search API", id));
        }
        let id = input.id.clone().unwrap_or_else(|| settings.next_id());
        let mut api = existing.unwrap_or_else(|| SearchApi::tavily(id.clone(), "", ""));
        api.name = input.name.trim().to_owned();
        if let Some(key) = input
            .api_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
        {
            key.clone_into(&mut api.api_key);
        }
        if let Some(depth) = &input.search_depth {
            api.search_depth = SearchDepth::parse(depth).ok_or_else(|| {
                ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!("searchDepth {depth:?}: use basic, advanced, fast or ultra-fast"),
                )
                .with_details(json!({"path": "searchDepth"}))
            })?;
        }
        if let Some(n) = input.chunks_per_source {
            api.chunks_per_source = n;
        }
        if let Some(n) = input.max_results {
            api.max_results = n;
        }
        settings.save(api).map_err(search_error)?;
        if input.default {
            settings.set_default(&id).map_err(search_error)?;
        }
        Ok(())
    })
}

/// Removes one API (the first remaining one becomes the default).
pub fn remove(store: &Store, id: &str) -> Result<Value, ToolError> {
    change(store, |settings| {
        settings.remove(id).map(drop).map_err(search_error)
    })
}

/// Makes one API the default.
pub fn set_default(store: &Store, id: &str) -> Result<Value, ToolError> {
    change(store, |settings| {
        settings.set_default(id).map_err(search_error)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(name: &str, key: Option<&str>) -> SearchApiInput {
        SearchApiInput {
            name: name.into(),
            api_key: key.map(Into::into),
            ..SearchApiInput::default()
        }
    }

    #[test]
    fn keys_are_write_only_and_the_first_api_is_the_default() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Store::open(dir.path()).expect("store");
        let v = save(&store, input("Main", Some("tvly-secret-0123"))).expect("save");
        assert_eq!(v["defaultId"], "tavily-1");
        assert_eq!(v["apis"][0]["complete"], true);
        assert!(!v.to_string().contains("tvly-secret-0123"), "{v}");
        // A save without a key keeps the stored one.
        let v = save(
            &store,
            SearchApiInput {
                id: Some("tavily-1".into()),
                max_results: Some(9),
                ..input("Renamed", None)
            },
        )
        .expect("replace");
        assert_eq!(v["apis"][0]["name"], "Renamed");
        assert_eq!(v["apis"][0]["maxResults"], 9);
        assert_eq!(
            load_search_settings(&store).apis[0].api_key,
            "tvly-secret-0123"
        );
        let v = save(
            &store,
            SearchApiInput {
                default: true,
                ..input("Second", None)
            },
        )
        .expect("second");
        assert_eq!(v["defaultId"], "tavily-2");
        assert_eq!(v["apis"][1]["complete"], false, "no key: saved, cannot run");
        let v = set_default(&store, "tavily-1").expect("default");
        assert_eq!(v["defaultId"], "tavily-1");
        let v = remove(&store, "tavily-1").expect("remove");
        assert_eq!(v["defaultId"], "tavily-2");
    }

    #[test]
    fn refusals_name_the_field() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Store::open(dir.path()).expect("store");
        let e = save(
            &store,
            SearchApiInput {
                chunks_per_source: Some(7),
                ..input("X", None)
            },
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert!(e.message.contains("chunksPerSource"), "{}", e.message);
        let e = save(&store, input(" ", None)).unwrap_err();
        assert!(e.message.contains("name"), "{}", e.message);
        let e = remove(&store, "nope").unwrap_err();
        assert_eq!(e.code, ErrorCode::ResourceNotFound);
        let e = save(
            &store,
            SearchApiInput {
                id: Some("nope".into()),
                ..input("X", None)
            },
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::ResourceNotFound);
    }
}
