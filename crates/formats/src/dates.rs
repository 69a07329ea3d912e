//! SillyTavern's date strings.
//!
//! Chat headers write `create_date` as `2024-6-14@08h18m03s` or `2026-1-15 @10h 46m 53s 397ms`;
//! messages write `send_date` humanized (`June 14, 2024 8:43am`) or as ISO-8601, and some tools
//! write Unix milliseconds. The strings are kept verbatim in the model (for lossless export);
//! this parser gives the instant when one is needed (sorting, a chat's `creationDate`).

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};

/// Parses any of SillyTavern's date styles; `None` when the text is not a date. Times without a
/// zone are taken as UTC (SillyTavern writes local time without saying which zone).
pub fn parse_st_date(text: &str) -> Option<DateTime<Utc>> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return Some(d.with_timezone(&Utc));
    }
    if let Ok(n) = t.parse::<i64>() {
        // Unix milliseconds (SillyTavern's `Date.now()`), or seconds when small.
        return if n.abs() > 100_000_000_000 {
            Utc.timestamp_millis_opt(n).single()
        } else {
            Utc.timestamp_opt(n, 0).single()
        };
    }
    for fmt in [
        "%B %d, %Y %I:%M%P",
        "%B %d, %Y %I:%M %P",
        "%b %d, %Y %I:%M%P",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S",
    ] {
        if let Ok(d) = NaiveDateTime::parse_from_str(t, fmt) {
            return Some(Utc.from_utc_datetime(&d));
        }
        if let Ok(d) = NaiveDateTime::parse_from_str(&t.to_ascii_lowercase(), fmt) {
            return Some(Utc.from_utc_datetime(&d));
        }
    }
    // `2024-6-14@08h18m03s`, `2026-1-15 @10h 46m 53s 397ms`: the numbers in order.
    let nums: Vec<u32> = t
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    if nums.len() >= 3 && nums[0] >= 1000 && t.contains('-') {
        let date = NaiveDate::from_ymd_opt(i32::try_from(nums[0]).ok()?, nums[1], nums[2])?;
        let get = |i: usize| nums.get(i).copied().unwrap_or(0);
        let ms = if t.contains("ms") { get(6) } else { 0 };
        let dt = date.and_hms_milli_opt(get(3), get(4), get(5), ms)?;
        return Some(Utc.from_utc_datetime(&dt));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iso(s: &str) -> String {
        parse_st_date(s)
            .map(|d| d.format("%Y-%m-%dT%H:%M:%S%.3f").to_string())
            .unwrap_or_default()
    }

    #[test]
    fn sillytavern_styles() {
        assert_eq!(iso("2024-6-14@08h18m03s"), "2024-06-14T08:18:03.000");
        assert_eq!(
            iso("2026-1-15 @10h 46m 53s 397ms"),
            "2026-01-15T10:46:53.397"
        );
        assert_eq!(iso("June 14, 2024 8:43am"), "2024-06-14T08:43:00.000");
        assert_eq!(iso("June 14, 2024 8:43pm"), "2024-06-14T20:43:00.000");
        assert_eq!(iso("2024-06-14T08:44:00.000Z"), "2024-06-14T08:44:00.000");
        assert_eq!(iso("1718354640000"), "2024-06-14T08:44:00.000");
        assert_eq!(parse_st_date("unused"), None);
        assert_eq!(parse_st_date("2024-13-40@99h"), None);
    }
}
