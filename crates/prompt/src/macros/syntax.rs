//! Lexical helpers of the `{{…}}` syntax: finding the matching close, splitting `::`
//! arguments at the top level, escapes and the legacy `<USER>`-style tokens.

/// Index of the `}}` that closes the `{{` at `open`, honouring nesting and escapes.
///
/// Single braces inside the macro are balanced first, so a JSON argument such as
/// `{{setvar::s::{"a":{"b":1}}}}` closes after the JSON, while `{"hp": {{getvar::hp}}}`
/// still closes the macro at the first `}}`.
pub fn find_close(src: &str, open: usize) -> Option<usize> {
    let bytes = src.as_bytes();
    // One single-brace balance per nesting level.
    let mut singles: Vec<usize> = vec![0];
    let mut i = open + 2;
    while i < bytes.len() {
        if bytes[i] == b'\\' && (src[i..].starts_with("\\{\\{") || src[i..].starts_with("\\}\\}")) {
            i += 4;
            continue;
        }
        let next = bytes.get(i + 1).copied();
        match bytes[i] {
            b'{' if next == Some(b'{') => {
                singles.push(0);
                i += 2;
            }
            b'{' => {
                if let Some(top) = singles.last_mut() {
                    *top += 1;
                }
                i += 1;
            }
            b'}' => {
                let top = singles.last_mut()?;
                if *top > 0 {
                    *top -= 1;
                    i += 1;
                } else if next == Some(b'}') {
                    singles.pop();
                    if singles.is_empty() {
                        return Some(i);
                    }
                    i += 2;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// Splits `a::b::{{x::y}}` into `["a", "b", "{{x::y}}"]`: only top-level separators count.
pub fn split_args(src: &str) -> Vec<&str> {
    let bytes = src.as_bytes();
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut i = 0;
    while i + 1 < bytes.len() {
        match (bytes[i], bytes[i + 1]) {
            (b'{', b'{') => {
                depth += 1;
                i += 2;
            }
            (b'}', b'}') if depth > 0 => {
                depth -= 1;
                i += 2;
            }
            (b':', b':') if depth == 0 => {
                parts.push(&src[start..i]);
                i += 2;
                start = i;
            }
            _ => i += 1,
        }
    }
    parts.push(&src[start..]);
    parts
}

/// Length of the macro name at the start of `src`: `[A-Za-z_][A-Za-z0-9_-]*`.
pub fn name_len(src: &str) -> usize {
    let mut len = 0;
    for (i, c) in src.char_indices() {
        let ok = if i == 0 {
            c.is_ascii_alphabetic() || c == '_'
        } else {
            c.is_ascii_alphanumeric() || c == '_' || c == '-'
        };
        if !ok {
            break;
        }
        len = i + c.len_utf8();
    }
    len
}

/// Rewrites the legacy angle-bracket tokens (`<USER>`, `<BOT>`, `<CHAR>`, `<GROUP>`,
/// `<CHARIFNOTGROUP>`, case-insensitive) to their macro forms before parsing.
pub fn rewrite_legacy_tokens(src: &str) -> std::borrow::Cow<'_, str> {
    const TOKENS: [(&str, &str); 5] = [
        ("<user>", "{{user}}"),
        ("<bot>", "{{char}}"),
        ("<char>", "{{char}}"),
        ("<group>", "{{group}}"),
        ("<charifnotgroup>", "{{charIfNotGroup}}"),
    ];
    if !src.contains('<') {
        return std::borrow::Cow::Borrowed(src);
    }
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    let mut changed = false;
    while let Some(pos) = rest.find('<') {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos..];
        let hit = TOKENS.iter().find(|(token, _)| {
            tail.len() >= token.len()
                && tail.is_char_boundary(token.len())
                && tail[..token.len()].eq_ignore_ascii_case(token)
        });
        match hit {
            Some((token, replacement)) => {
                out.push_str(replacement);
                rest = &tail[token.len()..];
                changed = true;
            }
            None => {
                out.push('<');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    if changed {
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(src)
    }
}

/// Splits a `{{random}}` comma list, honouring `\,` as a literal comma.
pub fn split_commas(src: &str) -> Vec<String> {
    let mut items = vec![String::new()];
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&',') => {
                chars.next();
                if let Some(last) = items.last_mut() {
                    last.push(',');
                }
            }
            ',' => items.push(String::new()),
            other => {
                if let Some(last) = items.last_mut() {
                    last.push(other);
                }
            }
        }
    }
    items.into_iter().map(|s| s.trim().to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_respects_nesting() {
        let src = "{{a::{{b}}::c}} tail";
        assert_eq!(find_close(src, 0), Some(13));
        assert_eq!(find_close("{{open", 0), None);
    }

    #[test]
    fn args_split_top_level_only() {
        assert_eq!(split_args("a::b::{{x::y}}"), vec!["a", "b", "{{x::y}}"]);
        assert_eq!(split_args("x::{\"k\":1}"), vec!["x", "{\"k\":1}"]);
        assert_eq!(split_args("url::http://a:b"), vec!["url", "http://a:b"]);
    }

    #[test]
    fn legacy_tokens() {
        assert_eq!(
            rewrite_legacy_tokens("<USER> meets <Bot> in <group>, <b>x</b>"),
            "{{user}} meets {{char}} in {{group}}, <b>x</b>"
        );
        assert_eq!(rewrite_legacy_tokens("é<ü"), "é<ü");
    }

    #[test]
    fn comma_lists() {
        assert_eq!(split_commas("a, b\\,c ,d"), vec!["a", "b,c", "d"]);
    }
}
