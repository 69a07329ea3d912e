//! The web tools of `crates/web` behind the [`WebTools`] seam.
//!
//! One [`WebAdapter`] per reply: it owns the reply's fetch cache (cursors are valid only within
//! the reply, seed 000) and the default search API chosen when the reply started. Web and
//! search error codes are folded into the envelope's codes; the specific code stays in
//! `details.reason`.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tavo_store::Store;
use tavo_web::search::{SearchApi, SearchArgs, SearchError, SearchSettings, TavilyClient};
use tavo_web::{AddressPolicy, FetchArgs, FetchCache, FetchError, FetchPolicy, WebFetcher};

use crate::context::WebTools;
use crate::error::{ErrorCode, ToolError};
use crate::operation::BoxFuture;

/// The search settings saved by `tavo search-api …` (empty when never saved or unreadable).
pub fn load_search_settings(store: &Store) -> SearchSettings {
    let mut settings: SearchSettings = store
        .setting_get(SearchSettings::SETTINGS_KEY)
        .ok()
        .flatten()
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    settings.normalise();
    settings
}

/// The fetch policy with the saved address policy (`web.fetchAddresses`; seed default
/// `allowAll`). An unreadable setting narrows to `publicOnly` rather than widening.
pub fn load_fetch_policy(store: &Store) -> FetchPolicy {
    let addresses = match store.setting_get(AddressPolicy::SETTING) {
        Ok(value) => AddressPolicy::from_setting(value.as_ref()),
        Err(_) => AddressPolicy::PublicOnly,
    };
    FetchPolicy {
        addresses,
        ..FetchPolicy::default()
    }
}

/// Web fetch and search for one reply.
pub struct WebAdapter {
    fetcher: Arc<WebFetcher>,
    cache: Arc<Mutex<FetchCache>>,
    search: Option<(TavilyClient, SearchApi)>,
}

impl std::fmt::Debug for WebAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebAdapter")
            .field("search", &self.search.is_some())
            .finish_non_exhaustive()
    }
}

impl WebAdapter {
    /// An adapter with a fresh cache; search is available when `settings` has a complete
    /// default API and a client is given.
    pub fn new(
        fetcher: Arc<WebFetcher>,
        client: Option<TavilyClient>,
        settings: &SearchSettings,
    ) -> Self {
        let cache = Arc::new(Mutex::new(fetcher.new_cache()));
        let search = client.zip(settings.runnable().cloned());
        Self {
            fetcher,
            cache,
            search,
        }
    }
}

fn fetch_error(e: FetchError) -> ToolError {
    let reason = e.code();
    let code = match reason {
        "invalid_arguments" | "invalid_url" | "invalid_cursor" | "cursor_expired" => {
            ErrorCode::InvalidArguments
        }
        "address_not_allowed" => ErrorCode::PermissionDenied,
        "timeout" => ErrorCode::Timeout,
        "internal_error" => ErrorCode::InternalError,
        _ => ErrorCode::Unavailable,
    };
    let mut details = e.details().unwrap_or_else(|| json!({}));
    if let Value::Object(m) = &mut details {
        m.insert("reason".into(), Value::String(reason.into()));
    }
    ToolError::new(code, e.to_string()).with_details(details)
}

fn search_error(e: SearchError) -> ToolError {
    let reason = e.code();
    let code = match reason {
        "invalid_arguments" => ErrorCode::InvalidArguments,
        "search_not_configured" | "resource_not_found" => ErrorCode::ResourceNotFound,
        "permission_denied" => ErrorCode::PermissionDenied,
        _ => ErrorCode::Unavailable,
    };
    let mut details = e
        .to_json()
        .get("details")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Value::Object(m) = &mut details {
        m.insert("reason".into(), Value::String(reason.into()));
    }
    ToolError::new(code, e.to_string()).with_details(details)
}

impl WebTools for WebAdapter {
    fn fetch(&self, args: Value) -> BoxFuture<Result<Value, ToolError>> {
        let fetcher = Arc::clone(&self.fetcher);
        let cache = Arc::clone(&self.cache);
        Box::pin(async move {
            let args = FetchArgs::from_json(&args).map_err(fetch_error)?;
            let page = fetcher.call(&cache, args).await.map_err(fetch_error)?;
            serde_json::to_value(page).map_err(|_| ToolError::internal("reading the page"))
        })
    }

    fn search(&self, args: Value) -> Option<BoxFuture<Result<Value, ToolError>>> {
        let (client, api) = self.search.clone()?;
        Some(Box::pin(async move {
            let args = SearchArgs::from_json(&args).map_err(search_error)?;
            let out = client.search(&api, &args).await.map_err(search_error)?;
            serde_json::to_value(out).map_err(|_| ToolError::internal("reading the search results"))
        }))
    }

    fn search_available(&self) -> bool {
        self.search.is_some()
    }
}
