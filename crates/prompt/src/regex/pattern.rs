//! Parsing the `findRegex` field and lorebook regex keys: `/pattern/flags` or a bare pattern.

/// JavaScript regex flags accepted in the literal form.
const VALID_FLAGS: &str = "dgimsuyv";

/// A pattern split into JavaScript `RegExp` source and flags.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JsPattern {
    /// Source between the slashes (or the whole string for a bare pattern).
    pub source: String,
    /// Flags after the closing slash (empty for a bare pattern).
    pub flags: String,
}

/// `findRegex` as SillyTavern's `regexFromString` reads it: `/pattern/flags` when the flags
/// are valid, otherwise the whole string is the pattern (with no flags, so only the first
/// match is replaced — as in SillyTavern).
pub fn parse_find_regex(text: &str) -> JsPattern {
    literal(text).unwrap_or_else(|| JsPattern {
        source: text.to_owned(),
        flags: String::new(),
    })
}

/// A lorebook key is a regex only when the whole key is a `/pattern/flags` literal
/// (SillyTavern `parseRegexFromString`); otherwise it is plain text.
pub fn parse_regex_key(key: &str) -> Option<JsPattern> {
    let pattern = literal(key)?;
    // An unescaped `/` inside the source means the key is not one literal.
    let bytes = pattern.source.as_bytes();
    let mut escaped = false;
    for &b in bytes {
        match b {
            b'\\' if !escaped => escaped = true,
            b'/' if !escaped => return None,
            _ => escaped = false,
        }
    }
    Some(pattern)
}

fn literal(text: &str) -> Option<JsPattern> {
    let rest = text.strip_prefix('/')?;
    let close = rest.rfind('/')?;
    let (source, flags) = (&rest[..close], &rest[close + 1..]);
    if source.is_empty() {
        return None;
    }
    let mut seen = String::new();
    for flag in flags.chars() {
        if !VALID_FLAGS.contains(flag) || seen.contains(flag) {
            return None;
        }
        seen.push(flag);
    }
    Some(JsPattern {
        source: source.to_owned(),
        flags: flags.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(source: &str, flags: &str) -> JsPattern {
        JsPattern {
            source: source.into(),
            flags: flags.into(),
        }
    }

    #[test]
    fn find_regex_forms() {
        assert_eq!(
            parse_find_regex("/<status>(.*?)<\\/status>/gim"),
            p("<status>(.*?)<\\/status>", "gim")
        );
        assert_eq!(
            parse_find_regex("^\\[系统提示\\]：(.+)$"),
            p("^\\[系统提示\\]：(.+)$", "")
        );
        assert_eq!(parse_find_regex("/a/b/g"), p("a/b", "g"));
        assert_eq!(parse_find_regex("/abc/zz"), p("/abc/zz", ""));
        assert_eq!(parse_find_regex("/abc/gg"), p("/abc/gg", ""));
        assert_eq!(parse_find_regex("//"), p("//", ""));
    }

    #[test]
    fn regex_keys() {
        assert_eq!(
            parse_regex_key("/drag(on|ons)/i"),
            Some(p("drag(on|ons)", "i"))
        );
        assert_eq!(parse_regex_key("/a\\/b/"), Some(p("a\\/b", "")));
        assert_eq!(parse_regex_key("/a/b/"), None);
        assert_eq!(parse_regex_key("dragon"), None);
        assert_eq!(parse_regex_key("/x/q"), None);
    }
}
