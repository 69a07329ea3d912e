//! The architecture invariants of ARCHITECTURE.md, checked so that a door that grows a second
//! stack, a crate that learns about HTTP, or a map that no longer matches the code fails the
//! build instead of drifting quietly.
//!
//! - Dependency rules, against `cargo metadata`: edges that must never exist, and edges that
//!   exist today but are on the way out (debts). A debt that is paid must leave the list — the
//!   test fails on a stale debt too, so the list stays the truth about the code.
//! - The map ([`map`]): ARCHITECTURE.md's edge list is exactly the Cargo.toml files' edges.
//! - Rules about the shipped code's text: no function over 150 lines, no door calls the store.
//!   What is shipped code and what is test code is [`scan`]'s business: only what
//!   `#[cfg(test)]` governs is test code, never "the rest of the file".

use std::collections::{BTreeMap, BTreeSet};

// The test's own modules, in a folder beside it (a test target's root looks in `tests/`).
#[path = "architecture/map.rs"]
mod map;
#[path = "architecture/scan.rs"]
mod scan;

use scan::{read, shipped_code, shipped_files};

/// `(crate, dependency, why it must not depend on it)`. Crate names as in Cargo.toml.
///
/// The doors do depend on `tavo-store`, for the handle only: they open the `Store`, pass it to
/// the operations they call and map its error to their own format. That they do nothing else
/// with it — no query, no write, no transaction — is not a dependency edge, so
/// [`no_door_calls_the_store_itself`] checks it in their sources.
const FORBIDDEN: &[(&str, &str, &str)] = &[
    ("tavo-model", "tavo-store", "model does no I/O"),
    ("tavo-model", "tokio", "model does no I/O"),
    ("tavo-model", "rusqlite", "model does no I/O"),
    ("tavo-model", "reqwest", "model does no I/O"),
    ("tavo-formats", "tavo-store", "formats touches no database"),
    ("tavo-formats", "rusqlite", "formats touches no database"),
    (
        "tavo-formats",
        "tokio",
        "formats is pure: bytes in, model values out",
    ),
    (
        "tavo-store",
        "tavo-formats",
        "the store knows nothing of file formats",
    ),
    ("tavo-store", "axum", "the store knows nothing of HTTP"),
    (
        "tavo-store",
        "reqwest",
        "the store knows nothing of providers",
    ),
    (
        "tavo-store",
        "tavo-llm",
        "the store knows nothing of providers",
    ),
    (
        "tavo-prompt",
        "tavo-llm",
        "prompt assembly calls no network",
    ),
    ("tavo-prompt", "reqwest", "prompt assembly calls no network"),
    (
        "tavo-prompt",
        "tavo-tools",
        "prompt sits below the operation layer",
    ),
    (
        "tavo-llm",
        "tavo-store",
        "llm knows nothing of chats or characters",
    ),
    (
        "tavo-llm",
        "tavo-model",
        "llm knows nothing of chats or characters",
    ),
    (
        "tavo-tools",
        "axum",
        "tools does not know which door called it",
    ),
    (
        "tavo-tools",
        "tavo-engine",
        "tools does not know which door called it",
    ),
    (
        "tavo-tools",
        "tavo-server",
        "tools does not know which door called it",
    ),
    ("tavo-engine", "axum", "engine does not depend on axum"),
    (
        "tavo-engine",
        "tavo-server",
        "engine does not know its doors",
    ),
    (
        "tavo-server",
        "tavo-web",
        "a door reaches the web tools through the engine's dispatcher",
    ),
    (
        "tavo-server",
        "tavo-prompt",
        "a door builds prompts through the engine",
    ),
    (
        "tavo",
        "tavo-web",
        "a door reaches the web tools through the operation layer",
    ),
    (
        "tavo",
        "tavo-prompt",
        "a door builds prompts through the engine",
    ),
    (
        "tavo",
        "tavo-formats",
        "a door imports and exports through tools::library",
    ),
    (
        "tavo-server",
        "tavo-formats",
        "a door imports and exports through tools::library",
    ),
];

/// Forbidden edges that still exist, each with what keeps it. Paying one off means deleting
/// it here (the test says so).
const DEBTS: &[(&str, &str, &str)] = &[];

/// Package → the packages (workspace crates and outside ones) its shipped code depends on:
/// normal and build dependencies; dev-dependencies only build tests.
fn normal_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    map::workspace()
        .into_iter()
        .map(|p| {
            let deps = p
                .deps
                .into_iter()
                .filter(|(_, u)| *u == map::Use::Shipped)
                .map(|(name, _)| name)
                .collect();
            (p.name, deps)
        })
        .collect()
}

#[test]
fn no_room_depends_on_what_architecture_md_rules_out() {
    let graph = normal_dependencies();
    assert!(graph.contains_key("tavo-tools"), "not the tavo workspace");
    let debts: BTreeSet<(&str, &str)> = DEBTS.iter().map(|(c, d, _)| (*c, *d)).collect();
    let mut broken = Vec::new();
    for (krate, dep, why) in FORBIDDEN {
        let has = graph.get(*krate).is_some_and(|deps| deps.contains(*dep));
        let owed = debts.contains(&(*krate, *dep));
        match (has, owed) {
            (true, false) => broken.push(format!("{krate} depends on {dep}: {why}")),
            (false, true) => broken.push(format!(
                "{krate} no longer depends on {dep}: delete the debt from DEBTS and ARCHITECTURE.md"
            )),
            _ => {}
        }
    }
    for (krate, dep, _) in DEBTS {
        assert!(
            FORBIDDEN.iter().any(|(c, d, _)| c == krate && d == dep),
            "debt {krate} → {dep} is not a forbidden edge"
        );
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The longest a function of shipped code may be, in lines (signature to closing brace). A
/// longer one usually holds several concepts (STYLE: "a function over ~150 lines is usually
/// two"); split it along them.
const MAX_FUNCTION_LINES: usize = 150;

/// Every function of the shipped code of every crate's `src/` (test code as [`scan`] finds it
/// aside) fits in [`MAX_FUNCTION_LINES`]. The code is rustfmt-formatted, so a function ends at
/// the first line that is its own indentation followed by `}`.
#[test]
fn no_function_of_shipped_code_is_over_150_lines() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(&crates).expect("crates/") {
        let src = krate.expect("entry").path().join("src");
        if src.is_dir() {
            files.extend(shipped_files(&src));
        }
    }
    assert!(files.len() > 100, "found only {} source files", files.len());
    let mut long = Vec::new();
    for path in &files {
        let text = read(path);
        long.extend(
            long_functions(&text)
                .into_iter()
                .map(|(line, name, n)| format!("{}:{line} fn {name}: {n} lines", path.display())),
        );
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// `(line, name, length)` of each function of the shipped code of `text` over the limit.
fn long_functions(text: &str) -> Vec<(usize, String, usize)> {
    let code = shipped_code(text);
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((indent, name)) = function_start(line) else {
            continue;
        };
        if line.trim_end().ends_with('}') || line.trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        let Some(end) = lines[i..].iter().position(|l| l.trim_end() == close) else {
            continue;
        };
        if end + 1 > MAX_FUNCTION_LINES {
            out.push((i + 1, name, end + 1));
        }
    }
    out
}

/// The indentation and name of a line that starts a function (`pub(crate) async fn name`).
fn function_start(line: &str) -> Option<(&str, String)> {
    let body = line.trim_start();
    let indent = &line[..line.len() - body.len()];
    let mut rest = body;
    for prefix in ["pub(crate) ", "pub(super) ", "pub "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    for prefix in ["const ", "async ", "unsafe "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let name: String = rest
        .strip_prefix("fn ")?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some((indent, name))
}

#[test]
fn the_function_length_check_sees_a_long_function_and_its_end() {
    let long = format!(
        "fn short() {{\n    1;\n}}\n\npub(crate) async fn long() {{\n{}}}\n",
        "    x();\n".repeat(MAX_FUNCTION_LINES)
    );
    assert_eq!(
        long_functions(&long),
        vec![(5, "long".to_owned(), MAX_FUNCTION_LINES + 2)]
    );
    let tests_only = format!("#[cfg(test)]\nmod tests {{\n{long}}}\n");
    assert!(long_functions(&tests_only).is_empty());
    // Code after a `#[cfg(test)] mod tests;` line is shipped code, and checked.
    let after_a_test_module = format!("#[cfg(test)]\nmod tests;\n{long}");
    assert_eq!(
        long_functions(&after_a_test_module),
        vec![(7, "long".to_owned(), MAX_FUNCTION_LINES + 2)]
    );
}

/// Names of store methods that are also common names elsewhere (a map's `get`, a string's
/// `as_str`), so a door calling them is no evidence of a store call. Leaving them out opens no
/// hole: those of `Tx` are reachable only inside `read`/`write`, and those of `FileStore` only
/// through `files()`, which are checked; the two of `Store` itself are the handle's own —
/// `open` and `data_dir`, which a door may call.
const GENERIC_NAMES: &[&str] = &[
    "open",
    "open_in_memory",
    "clone",
    "new",
    "get",
    "set",
    "len",
    "is_empty",
    "data_dir",
    "load",
    "save",
    "list",
    "remove",
    "delete",
    "insert",
    "as_str",
    "find",
    "code",
    "parse",
    "update",
    "merge",
];

/// The method names of `tavo_store::Store` and its transaction `Tx` (`pub fn`, and the
/// `read fn` / `write fn` shorthands of `delegate.rs`) in the store's shipped code, generic
/// names aside.
fn store_method_names() -> BTreeSet<String> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../store/src");
    let mut names = BTreeSet::new();
    for path in shipped_files(&src) {
        for line in shipped_code(&read(&path)).lines() {
            let body = line.trim_start();
            let rest = ["pub fn ", "read fn ", "write fn "]
                .iter()
                .find_map(|p| body.strip_prefix(p));
            if let Some(rest) = rest {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && !GENERIC_NAMES.contains(&name.as_str()) {
                    names.insert(name);
                }
            }
        }
    }
    names
}

/// `(line, method)` of each call in the shipped code of `text` of a name in `names`.
fn store_calls(text: &str, names: &BTreeSet<String>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in shipped_code(text).lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(dot) = rest.find('.') {
            rest = &rest[dot + 1..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = &rest[name.len()..];
            if (after.starts_with('(') || after.starts_with("::<")) && names.contains(&name) {
                out.push((i + 1, name));
            }
        }
    }
    out
}

/// The doors (`cli`, `server`) read and write the library only through operations (`tools`,
/// `engine`): no door calls a method of the store or opens a transaction on it. What a door
/// still does with the store — open the handle and pass it on — is the debt above.
#[test]
fn no_door_calls_the_store_itself() {
    let names = store_method_names();
    assert!(names.len() > 80, "found only {} store methods", names.len());
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut calls = Vec::new();
    for door in ["cli", "server"] {
        for path in shipped_files(&crates.join(door).join("src")) {
            let text = read(&path);
            calls.extend(
                store_calls(&text, &names)
                    .into_iter()
                    .map(|(line, name)| format!("{}:{line} .{name}(…)", path.display())),
            );
        }
    }
    assert!(
        calls.is_empty(),
        "the doors call the store themselves; call an operation of tools or engine instead:\n{}",
        calls.join("\n")
    );
}

#[test]
fn the_store_call_check_sees_a_store_call_and_not_a_comment() {
    let names: BTreeSet<String> = ["chat_get".to_owned(), "read".to_owned()].into();
    let text = "let c = store.chat_get(id)?;\n// store.chat_get(id)\nlet x = s.read(|tx| f(tx));\nmap.get(k);\n#[cfg(test)]\nmod tests {\n    store.chat_get(1);\n}\n";
    assert_eq!(
        store_calls(text, &names),
        vec![(1, "chat_get".to_owned()), (3, "read".to_owned())]
    );
    // A `#[cfg(test)] mod tests;` line does not hide the code after it.
    let after = "#[cfg(test)]\nmod tests;\nfn door(store: &Store) {\n    store.chat_get(1);\n}\n";
    assert_eq!(store_calls(after, &names), vec![(4, "chat_get".to_owned())]);
}

/// The `.unwrap()` and `.expect(…)` calls shipped code may make, each `(file, the call's line
/// contains, why it cannot fail)`. Anything else panics on a value that came from outside —
/// a file, a request, the store — and must become an error the caller sees.
const ALLOWED_PANICS: &[(&str, &str, &str)] = &[(
    "formats/src/plugin/manifest.rs",
    "Version::parse(TAVO_COMPAT_VERSION)",
    "parses the crate's own constant (`1.0.0`); every `minAppVersion` test of the plugin reader runs it",
)];

/// `(line, text)` of each `.unwrap()` / `.expect(` in the shipped code of `text`, comments aside.
fn panicking_calls(text: &str) -> Vec<(usize, String)> {
    shipped_code(text)
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .filter(|(_, l)| l.contains(".unwrap()") || l.contains(".expect("))
        .map(|(i, l)| (i + 1, l.trim().to_owned()))
        .collect()
}

/// Shipped code does not `unwrap()` or `expect()`: tests may (and do, with
/// `unwrap_or_else(|e| panic!(…))` where the message matters), the product returns errors.
#[test]
fn shipped_code_neither_unwraps_nor_expects() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut allowed_used = BTreeSet::new();
    for krate in std::fs::read_dir(&crates).expect("crates/") {
        let src = krate.expect("entry").path().join("src");
        if !src.is_dir() {
            continue;
        }
        for path in shipped_files(&src) {
            for (line, call) in panicking_calls(&read(&path)) {
                let allowed = ALLOWED_PANICS
                    .iter()
                    .position(|(file, text, _)| path.ends_with(file) && call.contains(text));
                match allowed {
                    Some(i) => {
                        allowed_used.insert(i);
                    }
                    None => found.push(format!("{}:{line}: {call}", path.display())),
                }
            }
        }
    }
    let stale: Vec<&str> = (0..ALLOWED_PANICS.len())
        .filter(|i| !allowed_used.contains(i))
        .map(|i| ALLOWED_PANICS[i].0)
        .collect();
    assert!(
        stale.is_empty(),
        "ALLOWED_PANICS lists calls that are gone: {stale:?}"
    );
    assert!(
        found.is_empty(),
        "shipped code unwraps or expects; return an error instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_panic_check_sees_an_unwrap_after_a_test_module_line() {
    let text = "fn a() {\n    // x.unwrap()\n}\n#[cfg(test)]\nmod tests;\nfn b() {\n    v.expect(\"y\");\n    w.unwrap_or(1);\n}\n#[cfg(test)]\nmod more {\n    z.unwrap();\n}\n";
    assert_eq!(
        panicking_calls(text),
        vec![(7, "v.expect(\"y\");".to_owned())]
    );
}

/// What no I/O looks like in source: the standard library's ways out of the process.
const IO_PATHS: &[&str] = &["std::fs", "std::net", "std::io", "std::process", "std::env"];

/// `model` does no I/O: besides its dependency edges (no store, tokio, rusqlite, reqwest,
/// checked above), its shipped code names none of [`IO_PATHS`]. Domain types that read a
/// file or the environment would be a second store hidden in the bottom crate.
#[test]
fn model_does_no_io_in_its_source() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../model/src");
    let files = shipped_files(&src);
    assert!(files.len() > 5, "found only {} model files", files.len());
    let mut found = Vec::new();
    for path in files {
        for (i, line) in shipped_code(&read(&path)).lines().enumerate() {
            if let Some(io) = IO_PATHS.iter().find(|p| line.contains(*p)) {
                found.push(format!("{}:{}: {io}", path.display(), i + 1));
            }
        }
    }
    assert!(found.is_empty(), "model does I/O:\n{}", found.join("\n"));
}

/// Every door builds its engine with `Engine::builder` (crates/engine/src/builder.rs), so what
/// a command can do never depends on which construction it took: no door source puts an
/// engine together by hand from its parts.
#[test]
fn doors_build_the_engine_with_the_builder() {
    const BY_HAND: [&str; 4] = [
        "Engine::with_client(",
        ".with_web()",
        ".with_hooks(",
        "Engine::new(",
    ];
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for door in ["cli", "server"] {
        let mut files = Vec::new();
        scan::rust_files(&crates.join(door).join("src"), &mut files);
        for path in files {
            let text = std::fs::read_to_string(&path).expect("read a door source file");
            for (i, line) in text.lines().enumerate() {
                if line.trim_start().starts_with("//") {
                    continue;
                }
                for part in BY_HAND.iter().filter(|p| line.contains(*p)) {
                    found.push(format!("{}:{} {part}", path.display(), i + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a door builds the engine by hand; use Engine::builder:\n{}",
        found.join("\n")
    );
}
