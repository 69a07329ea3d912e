//! The knobs of a [`crate::WebFetcher`]: limits, redirects, address policy, timeouts.
//!
//! Defaults are the seed's numbers. They are plain data so a deployment can narrow them from
//! its settings; tests shrink them to exercise every limit with small bodies.

use std::time::Duration;

use serde::{Deserialize, Serialize};

const MIB: u64 = 1024 * 1024;

/// Which destination addresses a fetch may connect to.
///
/// The seed allows everything (public, localhost, loopback, private, link-local, internal host
/// names, custom ports): on a personal device the user's own network is a legitimate target. A
/// hosted deployment serving other people narrows this to [`AddressPolicy::PublicOnly`], which
/// is checked on the resolved address at connect time (so DNS rebinding cannot slip a private
/// address past a check made earlier on the name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AddressPolicy {
    /// Every address (the seed's behaviour).
    #[default]
    AllowAll,
    /// Only globally routable unicast addresses.
    PublicOnly,
}

impl AddressPolicy {
    /// The name used in settings and error messages.
    pub fn as_str(self) -> &'static str {
        match self {
            AddressPolicy::AllowAll => "allowAll",
            AddressPolicy::PublicOnly => "publicOnly",
        }
    }
}

/// Size limits, each enforced while streaming, before the memory is spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FetchLimits {
    /// Bytes on the wire (compressed). Default 20 MiB.
    pub wire_bytes: u64,
    /// Bytes after decompression. Default 40 MiB.
    pub decompressed_bytes: u64,
    /// Bytes of HTML handed to the converter; longer HTML is cut (with a warning). Default 25 MiB.
    pub html_input_bytes: u64,
    /// Bytes of Markdown kept per document; longer output is cut (with a warning). Default 10 MiB.
    pub markdown_bytes: u64,
    /// Redirects followed before failing. Default 5.
    pub max_redirects: usize,
    /// Target size of one page returned to the model. Default 24 KiB.
    pub page_bytes: usize,
    /// Bytes of Markdown the per-reply cache may hold. Default 24 MiB.
    pub cache_bytes: u64,
}

impl Default for FetchLimits {
    fn default() -> Self {
        Self {
            wire_bytes: 20 * MIB,
            decompressed_bytes: 40 * MIB,
            html_input_bytes: 25 * MIB,
            markdown_bytes: 10 * MIB,
            max_redirects: 5,
            page_bytes: 24 * 1024,
            cache_bytes: 24 * MIB,
        }
    }
}

/// Everything a [`crate::WebFetcher`] needs besides the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchPolicy {
    /// Size and redirect limits.
    pub limits: FetchLimits,
    /// Which addresses may be contacted.
    pub addresses: AddressPolicy,
    /// TCP + TLS connect timeout per hop.
    pub connect_timeout: Duration,
    /// Whole fetch, all hops and the body. Kept below the 60 s named-tool timeout so the tool
    /// reports a fetch timeout rather than being cut by the registry.
    pub total_timeout: Duration,
    /// `User-Agent` sent unless the caller supplies one.
    pub user_agent: String,
}

impl Default for FetchPolicy {
    fn default() -> Self {
        Self {
            limits: FetchLimits::default(),
            addresses: AddressPolicy::default(),
            connect_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(50),
            user_agent: concat!("tavo/", env!("CARGO_PKG_VERSION"), " (web_fetch)").to_string(),
        }
    }
}
