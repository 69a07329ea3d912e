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
use tavo_web::{
    AddressPolicy, FetchArgs, FetchCache, FetchError, FetchPolicy, FetchResult, WebFetcher,
};

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

pub(crate) fn fetch_error(e: FetchError) -> ToolError {
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

/// One page of a `tavo_web_fetch` call, with the size of what was fetched.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchedPage {
    /// The page as the model reads it.
    pub page: FetchResult,
    /// The decompressed body of a downloaded document, or this page's Markdown for a
    /// continuation (nothing is downloaded again).
    pub content_bytes: u64,
}

impl FetchedPage {
    /// The JSON the model receives: the page plus `contentBytes`. The audit log's projection
    /// of `tavo_web_fetch` keeps that count beside the final URL, status, MIME, time and
    /// warnings (seed 000: the result audit keeps the content byte count); to the model it is
    /// one more piece of metadata about the page.
    pub fn to_json(&self) -> Value {
        let mut value = serde_json::to_value(&self.page).unwrap_or_else(|_| json!({}));
        if let Value::Object(m) = &mut value {
            m.insert("contentBytes".into(), json!(self.content_bytes));
        }
        value
    }
}

fn lock_cache(
    cache: &Mutex<FetchCache>,
) -> Result<std::sync::MutexGuard<'_, FetchCache>, FetchError> {
    cache
        .lock()
        .map_err(|_| FetchError::Internal("the fetch cache lock was poisoned".into()))
}

/// Runs one `tavo_web_fetch` over `cache`: downloads a URL into its first page, or reads a
/// cursor's page from the cache. `tavo fetch` and the model's tool both come here.
pub async fn fetch_page(
    fetcher: &WebFetcher,
    cache: &Mutex<FetchCache>,
    args: FetchArgs,
) -> Result<FetchedPage, FetchError> {
    match args {
        FetchArgs::Url(request) => {
            let doc = fetcher.fetch(request).await?;
            let content_bytes = doc.content_bytes;
            let page = lock_cache(cache)?.first_page(doc);
            Ok(FetchedPage {
                page,
                content_bytes,
            })
        }
        FetchArgs::Cursor(cursor) => {
            let page = lock_cache(cache)?.page(&cursor)?;
            Ok(FetchedPage {
                content_bytes: page.content_bytes,
                page,
            })
        }
    }
}

impl WebTools for WebAdapter {
    fn fetch(&self, args: Value) -> BoxFuture<Result<Value, ToolError>> {
        let fetcher = Arc::clone(&self.fetcher);
        let cache = Arc::clone(&self.cache);
        Box::pin(async move {
            let args = FetchArgs::from_json(&args).map_err(fetch_error)?;
            let page = fetch_page(&fetcher, &cache, args)
                .await
                .map_err(fetch_error)?;
            Ok(page.to_json())
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
