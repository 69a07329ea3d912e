//! Web fetch and search for a door that runs one call per process and so has no reply to hold
//! a fetch cache (`tavo fetch`, `tavo search`, `tavo search-api`).
//!
//! `fetch` gives exactly what the model receives. A reply's cursor cache lives in memory; here
//! it is kept in a file the door names (the CLI: `<data-dir>/cache/web-fetch.json`) for 30
//! minutes, so that a cursor works across calls with the same semantics (no re-download,
//! evicted or stale cursors fail, foreign cursors are invalid). Listing, removing and choosing
//! the default saved search API are [`crate::search_apis`]'s, as at every door; adding one
//! under an id of the caller's choosing is here.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tavo_store::Store;
use tavo_web::search::{
    SearchApi, SearchArgs, SearchDepth, SearchOutput, SearchSettings, TavilyClient,
};
use tavo_web::{FetchArgs, FetchCache, FetchError, FetchRequest, WebFetcher};

use crate::web::{FetchedPage, fetch_page, load_fetch_policy};

/// How long the saved fetch cache (and so its cursors) stays valid.
pub const SAVED_CACHE_TTL: Duration = Duration::from_secs(30 * 60);

/// A web call's failure as the door shows it: the message and its code in parentheses
/// (`the cursor has expired (cursor_expired)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebError(pub String);

impl std::fmt::Display for WebError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WebError {}

fn fetch_failed(err: FetchError) -> WebError {
    WebError(format!("{} ({})", err, err.code()))
}

/// What to fetch: a URL with request headers, or the next page of a previous fetch (its
/// cursor wins over the URL and headers).
#[derive(Debug, Clone, Default)]
pub struct FetchInput {
    /// The http:// or https:// URL.
    pub url: Option<String>,
    /// Request headers as `(name, value)`.
    pub headers: Vec<(String, String)>,
    /// A previous page's `nextCursor`.
    pub cursor: Option<String>,
}

/// A fetched page, and a warning when the cache could not be saved for the next call.
#[derive(Debug)]
pub struct SessionFetch {
    /// The page as the model reads it.
    pub fetched: FetchedPage,
    /// Why `--cursor` will not work for this page's next one, if the cache was not saved.
    pub save_warning: Option<String>,
}

/// Fetches one page with the cache kept in `cache_path` between calls.
pub async fn fetch_with_saved_cache(
    store: &Store,
    cache_path: &Path,
    input: FetchInput,
) -> Result<SessionFetch, WebError> {
    let args = match input.cursor {
        Some(cursor) => FetchArgs::Cursor(cursor),
        None => FetchArgs::Url(FetchRequest {
            url: input
                .url
                .ok_or_else(|| WebError("give a URL or a cursor".into()))?,
            headers: input.headers,
        }),
    };
    let fetcher = WebFetcher::new(load_fetch_policy(store)).map_err(fetch_failed)?;
    let (cache, stale) = load_cache(cache_path, &fetcher);
    let is_cursor = matches!(args, FetchArgs::Cursor(_));
    if let (true, FetchArgs::Cursor(cursor)) = (stale, &args) {
        // A cursor of the stale cache has expired; anything else was never valid.
        return Err(fetch_failed(match cache.page(cursor) {
            Ok(_) | Err(FetchError::CursorExpired) => FetchError::CursorExpired,
            Err(other) => other,
        }));
    }
    let cache = if stale { fetcher.new_cache() } else { cache };
    let cache = Mutex::new(cache);
    let fetched = fetch_page(&fetcher, &cache, args)
        .await
        .map_err(fetch_failed)?;
    let mut save_warning = None;
    if !is_cursor && fetched.page.next_cursor.is_some() {
        let saved = cache
            .into_inner()
            .map_err(|_| "the fetch cache lock was poisoned".to_owned())
            .and_then(|cache| save_cache(cache_path, &cache));
        if let Err(e) = saved {
            save_warning = Some(format!(
                "could not save the page cache ({e}); --cursor will not work"
            ));
        }
    }
    Ok(SessionFetch {
        fetched,
        save_warning,
    })
}

/// The saved cache: a reply's cache plus when it was saved.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SavedCache {
    saved_at_ms: u64,
    cache: FetchCache,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The saved cache and whether it is stale; a fresh cache when none is readable.
fn load_cache(path: &Path, fetcher: &WebFetcher) -> (FetchCache, bool) {
    let saved = std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<SavedCache>(&bytes).ok());
    match saved {
        Some(saved) => {
            let age = now_ms().saturating_sub(saved.saved_at_ms);
            (saved.cache, u128::from(age) > SAVED_CACHE_TTL.as_millis())
        }
        None => (fetcher.new_cache(), false),
    }
}

fn save_cache(path: &Path, cache: &FetchCache) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let tmp: PathBuf = path.with_extension("json.tmp");
    let saved = SavedCache {
        saved_at_ms: now_ms(),
        cache: cache.clone(),
    };
    let bytes = serde_json::to_vec(&saved).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, bytes).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The saved search APIs; a saved value that does not parse is an error here (a door that
/// edits the list must not overwrite it), unlike [`crate::web::load_search_settings`].
pub fn saved_search_settings(store: &Store) -> Result<SearchSettings, WebError> {
    let value = store
        .setting_get(SearchSettings::SETTINGS_KEY)
        .map_err(|e| WebError(e.to_string()))?;
    let mut settings: SearchSettings = match value {
        Some(v) => serde_json::from_value(v).map_err(|e| {
            WebError(format!(
                "the saved setting {} is not valid: {e}",
                SearchSettings::SETTINGS_KEY
            ))
        })?,
        None => SearchSettings::default(),
    };
    settings.normalise();
    Ok(settings)
}

fn save_search_settings(store: &Store, settings: &SearchSettings) -> Result<(), WebError> {
    let value = serde_json::to_value(settings).map_err(|e| WebError(e.to_string()))?;
    store
        .setting_set(SearchSettings::SETTINGS_KEY, &value)
        .map_err(|e| WebError(e.to_string()))
}

/// Searches with the default saved API. `args` are `tavo_web_search`'s arguments;
/// `loopback_base_url` points the client at a local Tavily mock (loopback addresses only).
pub async fn search_with_saved_api(
    store: &Store,
    args: &Value,
    loopback_base_url: Option<&str>,
) -> Result<SearchOutput, WebError> {
    let args = SearchArgs::from_json(args).map_err(|e| WebError(format!("{e} ({})", e.code())))?;
    let settings = saved_search_settings(store)?;
    let Some(api) = settings.runnable() else {
        return Err(WebError(
            "no complete default search API; add one with `tavo search-api add --name NAME --api-key-env VAR` (search_not_configured)".into(),
        ));
    };
    let client = match loopback_base_url {
        Some(url) => TavilyClient::with_loopback_base_url(url),
        None => TavilyClient::new(),
    }
    .map_err(|e| WebError(e.to_string()))?;
    client
        .search(api, &args)
        .await
        .map_err(|e| WebError(format!("{e} ({})", e.code())))
}

/// A Tavily API to save.
#[derive(Debug, Clone)]
pub struct NewSearchApi {
    /// Its label.
    pub name: String,
    /// The id to save under (replaces an API with the same id); `None`: a new `tavily-N`.
    pub id: Option<String>,
    /// The key; empty saves the API as incomplete.
    pub api_key: String,
    /// `basic`, `advanced`, `fast` or `ultra-fast`.
    pub depth: String,
    /// Chunks per source, 1–3.
    pub chunks: u8,
    /// Default number of results, 1–20.
    pub max_results: u8,
    /// Also make it the default.
    pub default: bool,
}

/// Saves a search API (validated locally; no request is made). Returns its id and whether it
/// is complete (has a key).
pub fn add_search_api(store: &Store, new: NewSearchApi) -> Result<(String, bool), WebError> {
    let mut settings = saved_search_settings(store)?;
    let depth = SearchDepth::parse(&new.depth).ok_or_else(|| {
        WebError(format!(
            "--depth {:?}: use basic, advanced, fast or ultra-fast",
            new.depth
        ))
    })?;
    let id = new.id.clone().unwrap_or_else(|| settings.next_id());
    let api = SearchApi {
        search_depth: depth,
        chunks_per_source: new.chunks,
        max_results: new.max_results,
        ..SearchApi::tavily(id.clone(), new.name.clone(), new.api_key.trim().to_owned())
    };
    let complete = api.is_complete();
    settings.save(api).map_err(|e| WebError(e.to_string()))?;
    if new.default {
        settings
            .set_default(&id)
            .map_err(|e| WebError(e.to_string()))?;
    }
    save_search_settings(store, &settings)?;
    Ok((id, complete))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        (dir, store)
    }

    #[test]
    fn search_apis_are_added_under_the_callers_id() {
        let (_dir, store) = store();
        let new = |id: &str, key: &str| NewSearchApi {
            name: format!("api {id}"),
            id: Some(id.into()),
            api_key: key.into(),
            depth: "advanced".into(),
            chunks: 2,
            max_results: 7,
            default: false,
        };
        assert_eq!(
            add_search_api(&store, new("a", "tvly-0123456789abcdef")),
            Ok(("a".into(), true))
        );
        assert_eq!(
            add_search_api(&store, new("b", "")),
            Ok(("b".into(), false))
        );
        let bad = NewSearchApi {
            depth: "deep".into(),
            ..new("c", "")
        };
        assert!(add_search_api(&store, bad).is_err_and(|e| e.0.contains("ultra-fast")));
        let listed = crate::search_apis::list(&store);
        assert_eq!(listed["apis"][0]["searchDepth"], "advanced");
        assert_eq!(listed["apis"][0]["chunksPerSource"], 2);
        assert_eq!(listed["apis"][1]["complete"], false);
        assert_ne!(listed["apis"][0]["apiKey"], "tvly-0123456789abcdef");
    }

    #[test]
    fn a_stale_cache_expires_its_cursors() {
        let (dir, store) = store();
        let path = dir.path().join("cache").join("web-fetch.json");
        let fetcher = WebFetcher::new(load_fetch_policy(&store)).unwrap_or_else(|e| panic!("{e}"));
        let old = SavedCache {
            saved_at_ms: now_ms() - SAVED_CACHE_TTL.as_millis() as u64 - 1,
            cache: fetcher.new_cache(),
        };
        std::fs::create_dir_all(dir.path().join("cache")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&path, serde_json::to_vec(&old).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}"));
        let (_, stale) = load_cache(&path, &fetcher);
        assert!(stale);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let input = FetchInput {
            cursor: Some("not-a-real-cursor".into()),
            ..FetchInput::default()
        };
        let err = rt
            .block_on(fetch_with_saved_cache(&store, &path, input))
            .err()
            .map(|e| e.0)
            .unwrap_or_default();
        assert!(err.ends_with(')'), "{err}");
    }
}
