//! Which parts of the source are shipped code, for the checks that read source text.
//!
//! Test code is what `#[cfg(test)]` governs and nothing more: the item under the attribute — in
//! this code base a `mod tests { … }` block, its braces matched — and the files a
//! `#[cfg(test)] mod name;` line declares (`name.rs`, `name/mod.rs` and everything under
//! `name/`). Whatever follows such a line or such a block is shipped code and is checked, so no
//! code escapes the checks by its place in a file.
//!
//! The lexer knows what matching braces needs in this code base: line and nested block
//! comments, string, byte-string and raw-string literals, character literals told apart from
//! lifetimes. It is not a parser. An attribute counts when written `#[cfg(test)]` (spaces
//! allowed) outside comments and literals — `cfg(all(test, …))` is not recognised, and the code
//! base has none; `#![cfg(test)]` makes the whole file test code. The governed item ends at the
//! first `;` outside brackets, or at the `}` that closes its brackets (with a `;` right after it),
//! or before a closing bracket of the code around it; a field, a variant, a match arm or an
//! argument also ends at a comma outside brackets.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// A significant character of the source: not whitespace, not inside a comment, and for a
/// literal only its first character (`"` for every string, `'` for a character).
#[derive(Debug, Clone, Copy)]
struct Token {
    at: usize,
    c: char,
}

impl Token {
    fn end(self) -> usize {
        self.at + self.c.len_utf8()
    }
}

/// The significant characters of `text`, in order.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let at = |i: usize| chars.get(i).map(|&(_, c)| c);
    let mut out = Vec::new();
    let mut i = 0;
    while let Some((pos, c)) = chars.get(i).copied() {
        let next = at(i + 1);
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while at(i).is_some_and(|c| c != '\n') {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i = block_comment_end(&chars, i);
        } else if c == '"' {
            out.push(Token { at: pos, c: '"' });
            i = string_end(&chars, i + 1);
        } else if let Some(end) = raw_string_end(&chars, i) {
            out.push(Token { at: pos, c: '"' });
            i = end;
        } else if c == '\'' {
            match char_literal_end(&chars, i) {
                Some(end) => {
                    out.push(Token { at: pos, c: '\'' });
                    i = end;
                }
                // A lifetime or a label: the name that follows is ordinary code.
                None => i += 1,
            }
        } else {
            out.push(Token { at: pos, c });
            i += 1;
        }
    }
    out
}

/// The index after the block comment that opens at `start` (`/*`, nested ones included).
fn block_comment_end(chars: &[(usize, char)], start: usize) -> usize {
    let at = |i: usize| chars.get(i).map(|&(_, c)| c);
    let mut depth = 0usize;
    let mut i = start;
    while let Some(c) = at(i) {
        if c == '/' && at(i + 1) == Some('*') {
            depth += 1;
            i += 2;
        } else if c == '*' && at(i + 1) == Some('/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// The index after the closing quote of a string whose text starts at `i`.
fn string_end(chars: &[(usize, char)], mut i: usize) -> usize {
    while let Some(&(_, c)) = chars.get(i) {
        i += if c == '\\' { 2 } else { 1 };
        if c == '"' {
            break;
        }
    }
    i
}

/// The index after a raw string (`r"…"`, `r#"…"#`, `br…`, `cr…`) that starts at `i`, if one does.
fn raw_string_end(chars: &[(usize, char)], i: usize) -> Option<usize> {
    let at = |i: usize| chars.get(i).map(|&(_, c)| c);
    let starts_word = i == 0 || at(i - 1).is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
    let mut j = match (at(i), at(i + 1)) {
        (Some('r'), _) => i + 1,
        (Some('b' | 'c'), Some('r')) => i + 2,
        _ => return None,
    };
    if !starts_word {
        return None;
    }
    let hashes = (j..).take_while(|&k| at(k) == Some('#')).count();
    j += hashes;
    if at(j) != Some('"') {
        return None;
    }
    j += 1;
    while let Some(c) = at(j) {
        j += 1;
        if c == '"' && (j..j + hashes).all(|k| at(k) == Some('#')) {
            return Some(j + hashes);
        }
    }
    Some(j)
}

/// The index after the character literal that starts at `i` (`'a'`, `'\n'`, `'\u{1F600}'`),
/// or `None` when the quote starts a lifetime or a label.
fn char_literal_end(chars: &[(usize, char)], i: usize) -> Option<usize> {
    let at = |i: usize| chars.get(i).map(|&(_, c)| c);
    if at(i + 1) == Some('\\') {
        let mut j = i + 3;
        while at(j).is_some_and(|c| c != '\'') {
            j += 1;
        }
        return Some(j + 1);
    }
    (at(i + 2) == Some('\'')).then_some(i + 3)
}

/// One item under `#[cfg(test)]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestItem {
    /// From the attribute's `#` to the item's last character.
    pub region: Range<usize>,
    /// The item alone, after its attributes.
    pub item: Range<usize>,
}

const CFG_TEST: &str = "#[cfg(test)]";
const INNER_CFG_TEST: &str = "#![cfg(test)]";

/// Whether the significant characters from `i` on spell `word`.
fn spells(tokens: &[Token], i: usize, word: &str) -> bool {
    word.chars()
        .enumerate()
        .all(|(n, c)| tokens.get(i + n).is_some_and(|t| t.c == c))
}

/// The items under `#[cfg(test)]` in `text`, in order; the whole text under `#![cfg(test)]`.
pub fn test_items(text: &str) -> Vec<TestItem> {
    let tokens = tokens(text);
    if (0..tokens.len()).any(|i| spells(&tokens, i, INNER_CFG_TEST)) {
        return vec![TestItem {
            region: 0..text.len(),
            item: 0..text.len(),
        }];
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if !spells(&tokens, i, CFG_TEST) {
            i += 1;
            continue;
        }
        let start = tokens[i].at;
        let mut j = skip_attributes(&tokens, i + CFG_TEST.len());
        let Some(first) = tokens.get(j) else { break };
        let last = item_end(&tokens, j, !is_item(&text[first.at..]));
        out.push(TestItem {
            region: start..tokens[last].end(),
            item: first.at..tokens[last].end(),
        });
        j = last + 1;
        i = j;
    }
    out
}

/// The index of the first token after the attributes (`#[…]`) that start at `i`.
fn skip_attributes(tokens: &[Token], mut i: usize) -> usize {
    while tokens.get(i).is_some_and(|t| t.c == '#') && tokens.get(i + 1).is_some_and(|t| t.c == '[')
    {
        let mut depth = 0usize;
        i += 1;
        while let Some(t) = tokens.get(i) {
            i += 1;
            match t.c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    i
}

/// Words that start an item (or a `let`), whose end is a `;` or a closing brace — never a
/// comma, which may sit at depth 0 in its generics (`fn f<K, V>`). What starts otherwise is a
/// field, a variant, a match arm or an argument, and a comma ends it.
const ITEM_WORDS: &[&str] = &[
    "fn",
    "async",
    "const",
    "unsafe",
    "extern",
    "impl",
    "mod",
    "struct",
    "enum",
    "union",
    "trait",
    "type",
    "static",
    "use",
    "macro_rules!",
    "let",
];

/// Whether `text` starts with an item (after a `pub`, `pub(crate)`, …).
fn is_item(text: &str) -> bool {
    let mut rest = text.trim_start();
    if let Some(after) = rest.strip_prefix("pub") {
        rest = after.trim_start();
        if rest.starts_with('(') {
            rest = rest
                .find(')')
                .map_or("", |close| &rest[close + 1..])
                .trim_start();
        }
    }
    let word: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '!')
        .collect();
    ITEM_WORDS.contains(&word.as_str())
}

/// The index of the last token of the item that starts at `start`; with `comma_ends`, a comma
/// outside brackets ends it too.
fn item_end(tokens: &[Token], start: usize, comma_ends: bool) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while let Some(t) = tokens.get(i) {
        match t.c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return i.saturating_sub(1).max(start),
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 && t.c == '}' {
                    let semicolon = tokens.get(i + 1).is_some_and(|t| t.c == ';');
                    return if semicolon { i + 1 } else { i };
                }
            }
            ';' if depth == 0 => return i,
            ',' if depth == 0 && comma_ends => return i,
            _ => {}
        }
        i += 1;
    }
    tokens.len().saturating_sub(1)
}

/// `text` with its test items blanked — every character but a newline becomes a space — so
/// that what is left is the shipped code, at the lines and columns it has in the file.
pub fn shipped_code(text: &str) -> String {
    let items = test_items(text);
    let mut out = String::with_capacity(text.len());
    let mut items = items.iter().peekable();
    for (at, c) in text.char_indices() {
        while items.peek().is_some_and(|item| item.region.end <= at) {
            items.next();
        }
        let in_test = items.peek().is_some_and(|item| item.region.contains(&at));
        out.push(if in_test && c != '\n' { ' ' } else { c });
    }
    out
}

/// The modules `text` declares as test-only files: `name` of each `#[cfg(test)] mod name;`.
pub fn test_module_files(text: &str) -> Vec<String> {
    test_items(text)
        .into_iter()
        .filter_map(|item| {
            let words: Vec<&str> = text[item.item].split_whitespace().collect();
            let words = match words.first() {
                Some(w) if w.starts_with("pub") => &words[1..],
                _ => &words[..],
            };
            match words {
                ["mod", name] => name.strip_suffix(';').map(str::to_owned),
                ["mod", name, ";"] => Some((*name).to_owned()),
                _ => None,
            }
        })
        .collect()
}

/// Every `.rs` file under `dir`.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `.rs` files of a crate's `src` that are shipped code: all of them but the files of
/// modules declared `#[cfg(test)] mod name;` (and the files below those) — unless the crate's
/// build script compiles one (`#[path = "src/slim.rs"]`: the server's unit tests declare the
/// module, its build script runs it).
pub fn shipped_files(src: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut test_paths = Vec::new();
    for path in &files {
        let text = read(path);
        let dir = module_dir(src, path);
        for name in test_module_files(&text) {
            test_paths.push(dir.join(format!("{name}.rs")));
            test_paths.push(dir.join(name));
        }
    }
    let krate = src.parent().unwrap_or(src);
    let build = krate.join("build.rs");
    let built: Vec<PathBuf> = if build.is_file() {
        path_attributes(&read(&build))
            .into_iter()
            .map(|p| krate.join(p))
            .collect()
    } else {
        Vec::new()
    };
    files.retain(|f| built.contains(f) || !test_paths.iter().any(|t| f.starts_with(t)));
    files
}

/// The files named by the `#[path = "…"]` attributes of `text`.
fn path_attributes(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let rest = l
                .trim()
                .strip_prefix("#[path")?
                .trim_start()
                .strip_prefix('=')?;
            let quoted = rest.trim().strip_suffix(']')?.trim();
            Some(quoted.strip_prefix('"')?.strip_suffix('"')?.to_owned())
        })
        .collect()
}

/// The folder where the modules a file declares live: its own for a crate root or a `mod.rs`,
/// else a folder named after it.
fn module_dir(src: &Path, path: &Path) -> PathBuf {
    let parent = path.parent().unwrap_or(src);
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let root = parent == src && (stem == "lib" || stem == "main") || parent == src.join("bin");
    if root || stem == "mod" {
        parent.to_path_buf()
    } else {
        parent.join(stem)
    }
}

/// A source file's text.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn code_after_a_test_module_line_is_shipped_code() {
    let text = "mod a;\n#[cfg(test)]\nmod tests;\n\npub fn shipped() {\n    x.unwrap();\n}\n";
    let blank = |s: &str| " ".repeat(s.len());
    let want = format!(
        "mod a;\n{}\n{}\n\npub fn shipped() {{\n    x.unwrap();\n}}\n",
        blank("#[cfg(test)]"),
        blank("mod tests;")
    );
    assert_eq!(shipped_code(text), want);
    assert_eq!(test_module_files(text), ["tests"]);
}

#[test]
fn a_test_block_ends_at_its_closing_brace_whatever_its_text_holds() {
    let text = r###"fn before() {}

#[cfg(test)]
#[allow(clippy::x)]
mod tests {
    // a } in a comment, /* and a nested /* } */ block */
    const S: &str = "} \" }";
    const R: &str = r##"} "# }"##;
    const C: char = '}';
    const Q: char = '\'';
    fn f<'a>(x: &'a str) -> [u8; 2] { [b'}', 0] }
}

fn after() {
    y.unwrap();
}
"###;
    let code = shipped_code(text);
    assert_eq!(code.lines().count(), text.lines().count());
    assert!(code.starts_with("fn before() {}\n"));
    assert!(
        code.ends_with("fn after() {\n    y.unwrap();\n}\n"),
        "{code}"
    );
    assert!(
        !code.contains("mod tests") && !code.contains("const"),
        "{code}"
    );
    assert!(test_module_files(text).is_empty());
}

#[test]
fn a_test_module_file_the_build_script_compiles_is_shipped_code() {
    assert_eq!(
        path_attributes("#[allow(dead_code)]\n#[path = \"src/slim.rs\"]\nmod slim;\n"),
        ["src/slim.rs"]
    );
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/src");
    let shipped = shipped_files(&server);
    assert!(
        shipped.iter().any(|f| f.ends_with("slim.rs")),
        "{shipped:?}"
    );
    let prompt = Path::new(env!("CARGO_MANIFEST_DIR")).join("../prompt/src");
    let shipped = shipped_files(&prompt);
    assert!(shipped.iter().any(|f| f.ends_with("regex/mod.rs")));
    assert!(!shipped.iter().any(|f| f.ends_with("regex/tests.rs")));
}

#[test]
fn an_item_ends_at_its_semicolon_and_an_inner_attribute_takes_the_file() {
    let text = "#[cfg(test)]\nconst N: [u8; 2] = [1, 2];\nfn shipped() {}\n#[cfg(test)]\nuse a::{b, c};\nfn also() {}\n";
    let code = shipped_code(text);
    assert!(code.contains("fn shipped() {}") && code.contains("fn also() {}"));
    assert!(!code.contains("const") && !code.contains("use"));
    let whole = "//! Tests.\n#![cfg(test)]\nfn f() {}\n";
    assert!(shipped_code(whole).trim().is_empty());
    let field = "struct S {\n    #[cfg(test)]\n    probe: u8,\n    kept: u8,\n}\nfn g() {}\n";
    let code = shipped_code(field);
    assert!(!code.contains("probe") && code.contains("kept: u8,\n}\nfn g() {}"));
    let arm = "match k {\n    #[cfg(test)]\n    K::Probe => a(),\n    K::Real => b.unwrap(),\n}\n";
    assert!(shipped_code(arm).contains("K::Real => b.unwrap(),"));
    let generic =
        "#[cfg(test)]\npub(crate) fn helper<K, V>(k: K) -> V {\n    k.unwrap()\n}\nfn f() {}\n";
    let code = shipped_code(generic);
    assert!(!code.contains("unwrap") && code.contains("fn f() {}"));
}
