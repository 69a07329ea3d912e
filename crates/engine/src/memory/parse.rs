//! Reading an extraction answer into short memories, and telling new memories from ones
//! already kept. Pure functions: what models really answer is messy (a JSON array in a code
//! fence, an object with a `memories` list, a bulleted list, numbered lines, "NONE"), and each
//! shape must give the same memories.

use serde_json::Value;

/// Longest memory kept, in characters; longer ones are cut at a word boundary.
pub const MAX_MEMORY_CHARS: usize = 300;

/// Most memories one extraction adds.
pub const MAX_PER_EXTRACTION: usize = 20;

/// Answers that mean "nothing new".
const NOTHING: [&str; 8] = [
    "none",
    "nothing",
    "n/a",
    "no new memories",
    "nothing new",
    "无",
    "没有",
    "[]",
];

/// The memories an extraction answer names, in order, cleaned and without repeats among
/// themselves (not yet compared with the stored ones; see [`new_memories`]).
pub fn parse_answer(answer: &str) -> Vec<String> {
    let text = strip_fence(answer.trim());
    let mut items = match json_items(text) {
        Some(items) => items,
        None => text.lines().filter_map(clean_line).collect(),
    };
    items.retain(|s| !is_nothing(s));
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let item = cut(&item);
        if !out.iter().any(|o| same(o, &item)) {
            out.push(item);
        }
        if out.len() == MAX_PER_EXTRACTION {
            break;
        }
    }
    out
}

/// `candidates` that are not already in `existing` (nor contained in one of them), in order.
pub fn new_memories(existing: &[String], candidates: &[String]) -> Vec<String> {
    let kept: Vec<String> = existing.iter().map(|s| normalize(s)).collect();
    let mut out: Vec<String> = Vec::new();
    for c in candidates {
        let n = normalize(c);
        if n.is_empty() {
            continue;
        }
        let known = kept
            .iter()
            .any(|k| k == &n || (n.len() >= 8 && k.contains(&n)))
            || out.iter().any(|o| normalize(o) == n);
        if !known {
            out.push(c.clone());
        }
    }
    out
}

/// Whether two memories say the same once case, spacing and punctuation are ignored.
pub fn same(a: &str, b: &str) -> bool {
    normalize(a) == normalize(b)
}

/// Lower case, letters and digits only (any script), single spaces.
pub fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for ch in s.chars() {
        if ch.is_alphanumeric() {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.extend(ch.to_lowercase());
        } else {
            space = true;
        }
    }
    out
}

fn is_nothing(s: &str) -> bool {
    let n = s.trim().trim_end_matches(['.', '。', '!']).to_lowercase();
    n.is_empty() || NOTHING.contains(&n.as_str())
}

/// The body of a Markdown code fence, when the answer is one (or holds one).
fn strip_fence(text: &str) -> &str {
    let Some(start) = text.find("```") else {
        return text;
    };
    let after = &text[start + 3..];
    // Skip the info string (`json`).
    let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
    let body = &after[body_start..];
    match body.find("```") {
        Some(end) => body[..end].trim(),
        None => body.trim(),
    }
}

/// Items of a JSON answer: an array of strings (or of objects with a text field), or an
/// object holding such an array under `memories` (or any one array). `None` when the text is
/// not JSON; a JSON array embedded in prose is found too.
fn json_items(text: &str) -> Option<Vec<String>> {
    let value: Value = serde_json::from_str(text).ok().or_else(|| {
        let start = text.find('[')?;
        let end = text.rfind(']')?;
        (end > start)
            .then(|| serde_json::from_str(&text[start..=end]).ok())
            .flatten()
    })?;
    let list = match &value {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o
            .get("memories")
            .or_else(|| o.values().find(|v| v.is_array()))
            .and_then(Value::as_array)
            .cloned()?,
        Value::String(s) => return Some(vec![s.trim().to_owned()]),
        _ => return None,
    };
    Some(
        list.iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s.trim().to_owned()),
                Value::Object(o) => ["text", "memory", "content", "fact"]
                    .iter()
                    .find_map(|k| o.get(*k).and_then(Value::as_str))
                    .map(|s| s.trim().to_owned()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .filter(|s| !s.is_empty())
            .collect(),
    )
}

/// One line of a plain-text answer without its list marker and quotes; `None` for blank
/// lines and headings ("Memories:").
fn clean_line(line: &str) -> Option<String> {
    let mut s = line.trim();
    for marker in ["- ", "* ", "• ", "· ", "+ ", "– ", "— "] {
        if let Some(rest) = s.strip_prefix(marker) {
            s = rest.trim_start();
            break;
        }
    }
    // "1. ", "2) ", "(3) "
    let digits = s
        .trim_start_matches('(')
        .chars()
        .take_while(char::is_ascii_digit)
        .count();
    if digits > 0 {
        let offset = usize::from(s.starts_with('('));
        let rest = &s[offset + digits..];
        if let Some(r) = rest
            .strip_prefix(". ")
            .or_else(|| rest.strip_prefix(") "))
            .or_else(|| rest.strip_prefix("、"))
        {
            s = r.trim_start();
        }
    }
    let s = s.trim_matches(|c: char| c == '"' || c == '“' || c == '”' || c == '\'');
    let s = s.trim().trim_end_matches(',').trim();
    if s.is_empty() || (s.ends_with(':') && s.chars().count() < 40) || s.starts_with('#') {
        return None;
    }
    Some(s.to_owned())
}

/// `s` cut to [`MAX_MEMORY_CHARS`], at a space when there is one near the end.
fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_MEMORY_CHARS {
        return s.to_owned();
    }
    let head: String = s.chars().take(MAX_MEMORY_CHARS).collect();
    match head.rfind(' ') {
        Some(i) if i > MAX_MEMORY_CHARS / 2 => format!("{}…", head[..i].trim_end()),
        _ => format!("{head}…"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_arrays_objects_and_fences_give_the_same_memories() {
        let want = vec![
            "The cat is named Biscuit.".to_owned(),
            "The user likes tea.".to_owned(),
        ];
        for answer in [
            r#"["The cat is named Biscuit.", "The user likes tea."]"#,
            "```json\n[\"The cat is named Biscuit.\", \"The user likes tea.\"]\n```",
            r#"{"memories": ["The cat is named Biscuit.", "The user likes tea."]}"#,
            r#"[{"text": "The cat is named Biscuit."}, {"memory": "The user likes tea."}]"#,
            "Here you go: [\"The cat is named Biscuit.\", \"The user likes tea.\"] Done.",
            "- The cat is named Biscuit.\n- The user likes tea.\n",
            "Memories:\n1. The cat is named Biscuit.\n2) The user likes tea.",
            "* \"The cat is named Biscuit.\"\n\n• The user likes tea.",
        ] {
            assert_eq!(parse_answer(answer), want, "{answer}");
        }
    }

    #[test]
    fn nothing_answers_give_nothing() {
        for answer in ["NONE", "none.", "[]", "", "  \n ", "```\n[]\n```", "无"] {
            assert!(parse_answer(answer).is_empty(), "{answer:?}");
        }
    }

    #[test]
    fn a_plain_answer_is_one_memory_and_repeats_collapse() {
        assert_eq!(parse_answer("NO_TOOLS_OFFERED"), vec!["NO_TOOLS_OFFERED"]);
        assert_eq!(
            parse_answer("- Likes tea\n- likes TEA!\n- Likes coffee"),
            vec!["Likes tea", "Likes coffee"]
        );
        let long = "word ".repeat(200);
        let cut = &parse_answer(&long)[0];
        assert!(cut.chars().count() <= MAX_MEMORY_CHARS + 1 && cut.ends_with('…'));
    }

    #[test]
    fn known_memories_are_not_added_again() {
        let existing = vec!["The user's cat is named Biscuit.".to_owned()];
        let candidates = vec![
            "the user's cat is named biscuit".to_owned(),
            "cat is named Biscuit".to_owned(),
            "The user lives by the sea.".to_owned(),
            "The user lives by the sea".to_owned(),
        ];
        assert_eq!(
            new_memories(&existing, &candidates),
            vec!["The user lives by the sea."]
        );
        assert_eq!(normalize("用户喜欢 茶。"), "用户喜欢 茶");
    }
}
