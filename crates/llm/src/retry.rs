//! When to send the same request again: only before any output arrived, only for connection
//! failures, 429 and 5xx/529, and only with the very same bytes (never "without tools", never
//! with other parameters — seed 000: a provider that rejects tools is an error to show).

use std::time::{Duration, SystemTime};

/// Retry limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Further attempts after the first.
    pub max_retries: u32,
    /// First backoff; doubled each time when the provider gives no `retry-after`.
    pub base_delay: Duration,
    /// A `retry-after` longer than this is not waited for: the error goes to the caller, who
    /// can show the user when to try again.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(500),
            max_wait: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// Whether an HTTP status is worth another identical attempt.
    pub fn retryable_status(status: u16) -> bool {
        status == 429 || status == 529 || (500..=599).contains(&status) && status != 501
    }

    /// How long to wait before attempt `attempt` (1-based retry count), or `None` to give up.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if attempt > self.max_retries {
            return None;
        }
        match retry_after {
            Some(d) if d > self.max_wait => None,
            Some(d) => Some(d),
            None => {
                let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
                Some(self.base_delay.saturating_mul(factor).min(self.max_wait))
            }
        }
    }
}

/// Reads `retry-after-ms` (OpenAI) or `retry-after` as seconds or an HTTP date.
pub fn parse_retry_after(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now: SystemTime,
) -> Option<Duration> {
    let ms = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok());
    if let Some(ms) = ms.filter(|ms| ms.is_finite() && *ms >= 0.0) {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let v = retry_after?.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_ms_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_696_004_900);
        assert_eq!(
            parse_retry_after(None, Some("30"), now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after(Some("1500"), Some("30"), now),
            Some(Duration::from_millis(1500))
        );
        // Fri, 29 Sep 2023 16:28:37 GMT = 1696004917
        assert_eq!(
            parse_retry_after(None, Some("Fri, 29 Sep 2023 16:28:37 GMT"), now),
            Some(Duration::from_secs(17))
        );
        // A date in the past means "now".
        let later = now + Duration::from_secs(3600);
        assert_eq!(
            parse_retry_after(None, Some("Fri, 29 Sep 2023 16:28:37 GMT"), later),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after(None, Some("soon"), now), None);
    }

    #[test]
    fn backoff_doubles_and_gives_up() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay(1, None), Some(Duration::from_millis(500)));
        assert_eq!(p.delay(2, None), Some(Duration::from_secs(1)));
        assert_eq!(p.delay(3, None), None);
        assert_eq!(p.delay(1, Some(Duration::from_secs(120))), None);
    }

    #[test]
    fn which_statuses_retry() {
        assert!(RetryPolicy::retryable_status(429));
        assert!(RetryPolicy::retryable_status(529));
        assert!(RetryPolicy::retryable_status(503));
        assert!(!RetryPolicy::retryable_status(400));
        assert!(!RetryPolicy::retryable_status(501));
    }
}
