//! Address-policy enforcement at connect time.
//!
//! reqwest asks a [`reqwest::dns::Resolve`] for the addresses of every host name it connects
//! to, on every hop. Filtering there (rather than resolving once up front and checking) means
//! the address we check is the address we connect to: a DNS rebinding answer cannot swap a
//! private address in between. IP-literal hosts never reach a resolver, so
//! [`check_literal_host`] covers them before each hop.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::error::FetchError;
use crate::policy::AddressPolicy;

/// Raised inside the resolver; recovered from reqwest's error chain by [`find_blocked`].
#[derive(Debug, Clone)]
pub(crate) struct BlockedAddress {
    pub host: String,
    pub address: String,
}

impl fmt::Display for BlockedAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} resolves only to non-public addresses ({})",
            self.host, self.address
        )
    }
}

impl std::error::Error for BlockedAddress {}

/// A resolver that drops addresses the policy forbids.
pub(crate) struct PolicyResolver {
    pub policy: AddressPolicy,
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let resolved: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let first = resolved
                .first()
                .map(|a| a.ip().to_string())
                .unwrap_or_default();
            let allowed: Vec<SocketAddr> = resolved
                .into_iter()
                .filter(|a| is_allowed(policy, a.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(Box::new(BlockedAddress {
                    host,
                    address: first,
                })
                    as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// Checks a URL host that is an IP literal (those bypass the resolver).
pub(crate) fn check_literal_host(policy: AddressPolicy, url: &url::Url) -> Result<(), FetchError> {
    let ip = match url.host() {
        Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
        Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
        _ => return Ok(()),
    };
    if is_allowed(policy, ip) {
        Ok(())
    } else {
        Err(FetchError::AddressNotAllowed {
            host: url.host_str().unwrap_or_default().to_string(),
            address: ip.to_string(),
            policy: policy.as_str(),
        })
    }
}

/// Walks an error's source chain looking for a policy refusal.
pub(crate) fn find_blocked(err: &(dyn std::error::Error + 'static)) -> Option<BlockedAddress> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = current {
        if let Some(blocked) = e.downcast_ref::<BlockedAddress>() {
            return Some(blocked.clone());
        }
        current = e.source();
    }
    None
}

/// Whether `ip` may be contacted under `policy`.
pub fn is_allowed(policy: AddressPolicy, ip: IpAddr) -> bool {
    match policy {
        AddressPolicy::AllowAll => true,
        AddressPolicy::PublicOnly => is_public(ip),
    }
}

/// Globally routable unicast (what a hosted deployment may reach on behalf of a user).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..=127).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let seg = ip.segments();
    // NAT64 well-known prefix 64:ff9b::/96 embeds an IPv4 address.
    if seg[0] == 0x64 && seg[1] == 0xff9b && seg[2..6] == [0, 0, 0, 0] {
        let v4 = Ipv4Addr::new(
            (seg[6] >> 8) as u8,
            seg[6] as u8,
            (seg[7] >> 8) as u8,
            seg[7] as u8,
        );
        return is_public_v4(v4);
    }
    let global_unicast = (seg[0] & 0xe000) == 0x2000; // 2000::/3
    let documentation = seg[0] == 0x2001 && seg[1] == 0x0db8;
    global_unicast && !documentation
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_only_rejects_every_private_range() {
        for blocked in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "64:ff9b::a00:1",
            "2001:db8::1",
        ] {
            let ip: IpAddr = blocked.parse().unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
            assert!(!is_public(ip), "{blocked} should not be public");
            assert!(is_allowed(AddressPolicy::AllowAll, ip));
        }
        for public in [
            "93.184.216.34",
            "2606:2800:220:1:248:1893:25c8:1946",
            "64:ff9b::5db8:d822",
        ] {
            let ip: IpAddr = public.parse().unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
            assert!(is_public(ip), "{public} should be public");
        }
    }

    #[test]
    fn literal_hosts_are_checked_before_connecting() {
        let url = url::Url::parse("http://127.0.0.1:8080/x").unwrap_or_else(|_| unreachable!());
        assert!(check_literal_host(AddressPolicy::AllowAll, &url).is_ok());
        let err = check_literal_host(AddressPolicy::PublicOnly, &url).err();
        assert_eq!(err.map(|e| e.code()), Some("address_not_allowed"));
        let named = url::Url::parse("http://localhost/").unwrap_or_else(|_| unreachable!());
        assert!(check_literal_host(AddressPolicy::PublicOnly, &named).is_ok());
    }
}
