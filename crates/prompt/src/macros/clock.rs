//! Date and time macros: `{{time}}`, `{{date}}`, `{{weekday}}`, `{{isotime}}`,
//! `{{isodate}}`, `{{time::UTC±N}}` and `{{idleDuration}}`.
//!
//! Formats follow SillyTavern (moment.js `LT`, `LL`, `dddd`) because Tavo documents only the
//! ISO forms; the UTC-offset form is `HH:mm` as Tavo's macro page states.

use chrono::{DateTime, FixedOffset, TimeDelta};

/// `{{time}}`: `8:37 PM`.
pub fn time(now: &DateTime<FixedOffset>) -> String {
    now.format("%-I:%M %p").to_string()
}

/// `{{date}}`: `November 29, 2026`.
pub fn date(now: &DateTime<FixedOffset>) -> String {
    now.format("%B %-d, %Y").to_string()
}

/// `{{weekday}}`: `Sunday`.
pub fn weekday(now: &DateTime<FixedOffset>) -> String {
    now.format("%A").to_string()
}

/// `{{isotime}}`: `20:37`.
pub fn isotime(now: &DateTime<FixedOffset>) -> String {
    now.format("%H:%M").to_string()
}

/// `{{isodate}}`: `2026-11-29`.
pub fn isodate(now: &DateTime<FixedOffset>) -> String {
    now.format("%Y-%m-%d").to_string()
}

/// `{{time::UTC+9}}`: `HH:mm` at a whole-hour (or `+5:30`-style) UTC offset; `None` for an
/// argument that is not `UTC±N` within ±14 hours.
pub fn time_at_offset(now: &DateTime<FixedOffset>, argument: &str) -> Option<String> {
    let spec = argument.trim();
    let rest = spec
        .strip_prefix("UTC")
        .or_else(|| spec.strip_prefix("utc"))
        .or_else(|| spec.strip_prefix("GMT"))?;
    let (sign, body) = match rest.chars().next()? {
        '+' => (1, &rest[1..]),
        '-' => (-1, &rest[1..]),
        _ => return None,
    };
    let (hours, minutes) = match body.split_once(':') {
        Some((h, m)) => (h.parse::<i32>().ok()?, m.parse::<i32>().ok()?),
        None => (body.parse::<i32>().ok()?, 0),
    };
    if hours > 14 || !(0..60).contains(&minutes) {
        return None;
    }
    let offset = FixedOffset::east_opt(sign * (hours * 3600 + minutes * 60))?;
    Some(now.with_timezone(&offset).format("%H:%M").to_string())
}

/// `{{idleDuration}}`: moment.js-style humanised duration (`a few seconds`, `5 minutes`,
/// `2 hours`, `a day`, …); `just now` when there is no previous message.
pub fn idle_duration(now: &DateTime<FixedOffset>, since: Option<&DateTime<FixedOffset>>) -> String {
    match since {
        None => "just now".to_owned(),
        Some(since) => humanize(now.signed_duration_since(*since)),
    }
}

/// moment.js `humanize()` thresholds (45 s, 45 min, 22 h, 26 d, 11 months).
pub fn humanize(delta: TimeDelta) -> String {
    let seconds = delta.num_seconds().abs() as f64;
    let minutes = seconds / 60.0;
    let hours = minutes / 60.0;
    let days = hours / 24.0;
    let plural = |n: f64, one: &str, unit: &str| {
        let n = n.round() as i64;
        if n <= 1 {
            one.to_owned()
        } else {
            format!("{n} {unit}")
        }
    };
    if seconds < 45.0 {
        "a few seconds".to_owned()
    } else if seconds < 90.0 {
        "a minute".to_owned()
    } else if minutes < 45.0 {
        plural(minutes, "a minute", "minutes")
    } else if minutes < 90.0 {
        "an hour".to_owned()
    } else if hours < 22.0 {
        plural(hours, "an hour", "hours")
    } else if hours < 36.0 {
        "a day".to_owned()
    } else if days < 26.0 {
        plural(days, "a day", "days")
    } else if days < 45.0 {
        "a month".to_owned()
    } else if days < 320.0 {
        plural(days / 30.4, "a month", "months")
    } else if days < 548.0 {
        "a year".to_owned()
    } else {
        plural(days / 365.25, "a year", "years")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at() -> DateTime<FixedOffset> {
        let tz = FixedOffset::east_opt(3600).unwrap_or_else(|| unreachable!());
        tz.with_ymd_and_hms(2026, 11, 29, 20, 7, 5)
            .single()
            .unwrap_or_else(|| unreachable!())
    }

    #[test]
    fn formats() {
        let now = at();
        assert_eq!(time(&now), "8:07 PM");
        assert_eq!(date(&now), "November 29, 2026");
        assert_eq!(weekday(&now), "Sunday");
        assert_eq!(isotime(&now), "20:07");
        assert_eq!(isodate(&now), "2026-11-29");
    }

    #[test]
    fn utc_offsets() {
        let now = at();
        assert_eq!(time_at_offset(&now, "UTC+9").as_deref(), Some("04:07"));
        assert_eq!(time_at_offset(&now, "UTC-5").as_deref(), Some("14:07"));
        assert_eq!(time_at_offset(&now, "UTC+5:30").as_deref(), Some("00:37"));
        assert_eq!(time_at_offset(&now, "UTC+99"), None);
        assert_eq!(time_at_offset(&now, "Mars"), None);
    }

    #[test]
    fn humanized() {
        let cases = [
            (10, "a few seconds"),
            (60, "a minute"),
            (600, "10 minutes"),
            (3600, "an hour"),
            (3 * 3600, "3 hours"),
            (26 * 3600, "a day"),
            (5 * 86400, "5 days"),
            (40 * 86400, "a month"),
            (400 * 86400, "a year"),
            (800 * 86400, "2 years"),
        ];
        for (secs, expected) in cases {
            assert_eq!(humanize(TimeDelta::seconds(secs)), expected, "{secs}s");
        }
        assert_eq!(idle_duration(&at(), None), "just now");
    }
}
