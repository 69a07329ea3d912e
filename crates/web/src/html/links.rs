//! Link targets and code-block languages.

use url::Url;

/// Resolves `href` against `base`, percent-encoding the parentheses Markdown would misread.
pub(crate) fn absolute(base: &Url, href: &str) -> Option<String> {
    let href = href.trim();
    if href.is_empty() {
        return None;
    }
    if let Some(fast) = root_relative(base, href).or_else(|| already_absolute(href)) {
        return Some(fast);
    }
    let url = base.join(href).ok()?;
    // The URL parser drops tabs and newlines, so `java\tscript:` only shows its scheme here.
    if matches!(url.scheme(), "javascript" | "vbscript" | "data") {
        return None;
    }
    let s = url.as_str();
    if s.contains(['(', ')']) {
        Some(s.replace('(', "%28").replace(')', "%29"))
    } else {
        Some(s.to_string())
    }
}

/// `/path?query#fragment` joined by concatenation when the URL parser would return exactly
/// that (a page's internal links are most of its links, and parsing each one was a tenth of
/// the conversion time): only bytes the parser keeps as they are, no dot segments.
fn root_relative(base: &Url, href: &str) -> Option<String> {
    let bytes = href.as_bytes();
    if bytes.first() != Some(&b'/') || bytes.get(1) == Some(&b'/') || href.contains("/.") {
        return None;
    }
    let plain = bytes.iter().all(|&b| plain_path_byte(b));
    if !plain || !base.has_host() {
        return None;
    }
    let origin = &base[..url::Position::BeforePath];
    let mut out = String::with_capacity(origin.len() + href.len());
    out.push_str(origin);
    out.push_str(href);
    Some(out)
}

/// Bytes the URL parser keeps as they are in a path, query or fragment.
fn plain_path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'/' | b'-'
                | b'.'
                | b'_'
                | b'~'
                | b'?'
                | b'='
                | b'&'
                | b':'
                | b';'
                | b','
                | b'+'
                | b'@'
                | b'!'
                | b'$'
                | b'*'
                | b'%'
                | b'#'
        )
}

/// `https://host/path` that the URL parser would return unchanged: lower-case scheme and
/// host name (no port, credentials, IP address or punycode), a path, plain bytes only.
fn already_absolute(href: &str) -> Option<String> {
    let rest = href
        .strip_prefix("https://")
        .or_else(|| href.strip_prefix("http://"))?;
    let slash = rest.find('/')?;
    let host = &rest[..slash];
    let path = &rest[slash..];
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && !host.contains("xn--")
        && !host.starts_with(['.', '-'])
        && !host.contains("..")
        && host
            .rsplit('.')
            .find(|l| !l.is_empty())
            .is_some_and(|tld| tld.bytes().any(|b| b.is_ascii_lowercase()));
    let path_ok = path.bytes().all(plain_path_byte) && !path.contains("/.");
    (host_ok && path_ok).then(|| href.to_string())
}

/// The language of a code block from a class list (`language-rust`, `lang-py`,
/// `highlight-source-js`).
pub(crate) fn class_language(class: &str) -> Option<String> {
    class.split_ascii_whitespace().find_map(|c| {
        ["language-", "lang-", "highlight-source-", "highlight-"]
            .iter()
            .find_map(|prefix| c.strip_prefix(prefix))
            .filter(|l| !l.is_empty())
            .map(clean_language)
    })
}

pub(crate) fn clean_language(lang: &str) -> String {
    lang.trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '-' | '_' | '.'))
        .take(32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The concatenation shortcut gives exactly what the URL parser gives.
        #[test]
        fn root_relative_links_match_the_url_parser(
            href in "/[a-zA-Z0-9/._~?=&:;,+@!$*%#-]{0,40}",
            base in prop::sample::select(vec![
                "https://example.com/a/b.html",
                "http://user:pw@h.test:8080/x?y#z",
                "https://EXAMPLE.com:443/",
            ]),
        ) {
            let base = Url::parse(base).unwrap_or_else(|e| panic!("{e}"));
            if let Some(fast) = root_relative(&base, &href) {
                let slow = base.join(&href).map(|u| u.to_string()).ok();
                prop_assert_eq!(Some(fast), slow);
            }
        }

        /// Absolute links are kept verbatim only when the parser would not change them.
        #[test]
        fn verbatim_absolute_links_match_the_url_parser(
            href in "https?://[a-zA-Z0-9.-]{1,16}(:[0-9]{1,5})?/[a-zA-Z0-9/._~?=&:;,+@!$*%#-]{0,30}",
        ) {
            if let Some(fast) = already_absolute(&href) {
                let slow = Url::parse(&href).map(|u| u.to_string()).ok();
                prop_assert_eq!(Some(fast), slow);
            }
        }
    }
}
