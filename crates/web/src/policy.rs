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
    /// The settings key that holds the policy (`tavo settings set web.fetchAddresses
    /// publicOnly`). Read when a fetcher is built: by each `tavo fetch`, and once at start by
    /// `tavo serve` and the other long-running commands.
    pub const SETTING: &'static str = "web.fetchAddresses";

    /// Every value [`AddressPolicy::SETTING`] accepts, default first.
    pub const NAMES: [&'static str; 2] = ["allowAll", "publicOnly"];

    /// The policy named `name` (as stored in settings), if it is one.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "allowAll" => Some(AddressPolicy::AllowAll),
            "publicOnly" => Some(AddressPolicy::PublicOnly),
            _ => None,
        }
    }

    /// The policy a stored setting value selects: the default when unset. A value that is
    /// set but unreadable selects [`AddressPolicy::PublicOnly`]: a narrowing that cannot be
    /// read must not widen (the settings catalogue refuses such values on the way in).
    pub fn from_setting(value: Option<&serde_json::Value>) -> Self {
        match value {
            None | Some(serde_json::Value::Null) => Self::default(),
            Some(v) => v
                .as_str()
                .and_then(Self::from_name)
                .unwrap_or(AddressPolicy::PublicOnly),
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setting_names_round_trip() {
        for name in AddressPolicy::NAMES {
            let policy = AddressPolicy::from_name(name);
            assert_eq!(policy.map(AddressPolicy::as_str), Some(name));
            assert_eq!(
                serde_json::to_value(policy).ok(),
                Some(serde_json::Value::String(name.into()))
            );
        }
        assert_eq!(AddressPolicy::NAMES[0], AddressPolicy::default().as_str());
        let stored = serde_json::json!("publicOnly");
        assert_eq!(
            AddressPolicy::from_setting(Some(&stored)),
            AddressPolicy::PublicOnly
        );
        assert_eq!(AddressPolicy::from_setting(None), AddressPolicy::AllowAll);
        assert_eq!(
            AddressPolicy::from_setting(Some(&serde_json::json!("publiconly"))),
            AddressPolicy::PublicOnly
        );
    }
}
