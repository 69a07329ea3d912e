//! The web tools of Tavo: `tavo_web_fetch` (any HTTP(S) page to model-ready Markdown, within
//! every limit of the seed) and `tavo_web_search` (Tavily).
//!
//! Plain async Rust with no dependency on the rest of the workspace: the tool registry calls
//! [`WebFetcher::call`] with one [`FetchCache`] per reply, and [`search::TavilyClient::search`]
//! with the default saved search API. Errors carry stable codes ([`FetchError::code`],
//! [`search::SearchError::code`]) for the tool envelope.
//!
//! ```no_run
//! # async fn demo() -> Result<(), tavo_web::FetchError> {
//! use std::sync::Mutex;
//! use tavo_web::{FetchArgs, FetchPolicy, WebFetcher};
//! let fetcher = WebFetcher::new(FetchPolicy::default())?;
//! let cache = Mutex::new(fetcher.new_cache()); // one per reply
//! let args = FetchArgs::from_json(&serde_json::json!({"url": "https://example.com/"}))?;
//! let page = fetcher.call(&cache, args).await?;
//! println!("{}", page.markdown);
//! # Ok(()) }
//! ```

mod cache;
mod charset;
mod content;
mod document;
mod download;
mod error;
mod fetcher;
pub mod html;
mod paging;
mod policy;
mod resolver;
pub mod schema;
pub mod search;
mod warning;

pub use cache::FetchCache;
pub use content::Kind;
pub use document::{
    FetchRequest, FetchRequestAudit, FetchResult, FetchResultAudit, FetchedDocument,
};
pub use error::{BodyLimit, FetchError};
pub use fetcher::{DownloadedFile, FetchArgs, WebFetcher, parse_url};
pub use paging::page_starts;
pub use policy::{AddressPolicy, FetchLimits, FetchPolicy};
pub use resolver::{is_allowed, is_public};
pub use warning::Warning;

/// Entry points for the cargo-fuzz targets in `crates/web/fuzz` (not a stable API).
#[doc(hidden)]
pub mod fuzz_support {
    /// Runs `body` through sniffing, charset decoding and conversion as every declared type.
    pub fn document(body: &[u8], charset: Option<&str>) {
        let Ok(url) = url::Url::parse("https://fuzz.example/dir/page.html") else {
            return;
        };
        for essence in [
            Some("text/html"),
            Some("text/plain"),
            Some("application/json"),
            Some("application/xml"),
            None,
        ] {
            let download = crate::download::Download {
                final_url: url.clone(),
                status: 200,
                content_type: crate::content::ContentType {
                    essence: essence.map(str::to_string),
                    charset: charset.map(str::to_string),
                },
                body: body.to_vec(),
                warnings: Vec::new(),
            };
            let _ =
                crate::fetcher::process(url.to_string(), download, &crate::FetchLimits::default());
        }
    }
}
