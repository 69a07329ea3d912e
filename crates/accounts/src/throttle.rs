//! Failed-login throttling, per account and per address.
//!
//! - **Per account**: after [`ACCOUNT_FREE_FAILURES`] failures in a row, each further attempt
//!   waits 30 s, doubling with each failure up to 15 min. A success clears the count. (An
//!   attacker can make a user wait, never lock them out for good.)
//! - **Per address**: at most [`ADDRESS_FAILURES`] failures within [`ADDRESS_WINDOW`] from one
//!   address (whatever names it tries), then it waits for the window to pass.
//!
//! Kept in memory: a restart forgets the counts, which costs an attacker a restart they cannot
//! cause.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Failures an account may have before attempts wait.
pub const ACCOUNT_FREE_FAILURES: u32 = 5;
/// The first wait after them.
pub const ACCOUNT_FIRST_WAIT: Duration = Duration::from_secs(30);
/// The longest wait.
pub const ACCOUNT_MAX_WAIT: Duration = Duration::from_secs(15 * 60);
/// Failures one address may have within [`ADDRESS_WINDOW`].
pub const ADDRESS_FAILURES: usize = 20;
/// The address window.
pub const ADDRESS_WINDOW: Duration = Duration::from_secs(10 * 60);

/// A login refused before the password was even checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many failed logins; try again in {retry_after_secs} s")]
pub struct Throttled {
    /// Seconds until the next attempt is heard.
    pub retry_after_secs: u64,
}

#[derive(Default)]
struct AccountState {
    failures: u32,
    until: Option<Instant>,
}

/// The counts.
#[derive(Default)]
pub struct Throttle {
    accounts: HashMap<String, AccountState>,
    addresses: HashMap<IpAddr, Vec<Instant>>,
}

fn wait_for(failures: u32) -> Duration {
    let over = failures.saturating_sub(ACCOUNT_FREE_FAILURES);
    let factor = 1u32.checked_shl(over.min(16)).unwrap_or(u32::MAX);
    ACCOUNT_FIRST_WAIT
        .saturating_mul(factor)
        .min(ACCOUNT_MAX_WAIT)
}

fn secs_until(t: Instant, now: Instant) -> u64 {
    let d = t.saturating_duration_since(now);
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

impl Throttle {
    /// Whether an attempt for `account` from `address` may be checked now.
    pub fn admit(&mut self, account: &str, address: IpAddr, now: Instant) -> Result<(), Throttled> {
        if let Some(times) = self.addresses.get_mut(&address) {
            times.retain(|t| now.duration_since(*t) < ADDRESS_WINDOW);
            if times.len() >= ADDRESS_FAILURES
                && let Some(oldest) = times.first()
            {
                return Err(Throttled {
                    retry_after_secs: secs_until(*oldest + ADDRESS_WINDOW, now).max(1),
                });
            }
        }
        if let Some(until) = self.accounts.get(account).and_then(|a| a.until)
            && until > now
        {
            return Err(Throttled {
                retry_after_secs: secs_until(until, now).max(1),
            });
        }
        Ok(())
    }

    /// Records a failed attempt.
    pub fn failed(&mut self, account: &str, address: IpAddr, now: Instant) {
        self.addresses.entry(address).or_default().push(now);
        let a = self.accounts.entry(account.to_owned()).or_default();
        a.failures += 1;
        if a.failures >= ACCOUNT_FREE_FAILURES {
            a.until = Some(now + wait_for(a.failures));
        }
        // Bounded: an attacker spraying names cannot grow the map without limit.
        if self.accounts.len() > 100_000 {
            self.accounts
                .retain(|_, s| s.until.is_some_and(|u| u > now));
        }
    }

    /// Records a success: the account's count starts again.
    pub fn succeeded(&mut self, account: &str) {
        self.accounts.remove(account);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const A: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));

    #[test]
    fn an_account_waits_after_five_failures_doubling_up_to_fifteen_minutes() {
        let mut t = Throttle::default();
        let now = Instant::now();
        for _ in 0..4 {
            assert!(t.admit("ann", A, now).is_ok());
            t.failed("ann", A, now);
        }
        assert!(t.admit("ann", A, now).is_ok());
        t.failed("ann", A, now);
        assert_eq!(
            t.admit("ann", B, now),
            Err(Throttled {
                retry_after_secs: 30
            }),
            "from another address too"
        );
        assert!(
            t.admit("bob", A, now).is_ok(),
            "other accounts are not held"
        );
        let later = now + Duration::from_secs(31);
        assert!(t.admit("ann", A, later).is_ok());
        t.failed("ann", A, later);
        assert_eq!(
            t.admit("ann", A, later).map_err(|e| e.retry_after_secs),
            Err(60)
        );
        assert_eq!(wait_for(40), ACCOUNT_MAX_WAIT);
        t.succeeded("ann");
        assert!(t.admit("ann", A, later).is_ok());
    }

    #[test]
    fn an_address_spraying_names_waits_for_its_window() {
        let mut t = Throttle::default();
        let now = Instant::now();
        for i in 0..ADDRESS_FAILURES {
            assert!(t.admit(&format!("u{i}"), A, now).is_ok());
            t.failed(&format!("u{i}"), A, now);
        }
        let e = t.admit("fresh", A, now);
        assert_eq!(e.map_err(|e| e.retry_after_secs), Err(600));
        assert!(t.admit("fresh", B, now).is_ok());
        assert!(t.admit("fresh", A, now + ADDRESS_WINDOW).is_ok());
    }
}
