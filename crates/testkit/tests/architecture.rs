//! The architecture invariants of ARCHITECTURE.md ("Dependency rules"), checked against
//! `cargo metadata`, so that a door that grows a second stack, or a room that learns about
//! HTTP, fails the build instead of drifting quietly.
//!
//! Two lists: edges that must never exist, and edges that exist today but are on the way out
//! (debts). A debt that is paid must leave the list — the test fails on a stale debt too, so
//! the list stays the truth about the code.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

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

fn normal_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo metadata: {e}"));
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("cargo metadata is not JSON: {e}"));
    let mut graph = BTreeMap::new();
    for package in meta["packages"].as_array().into_iter().flatten() {
        let name = package["name"].as_str().unwrap_or_default().to_owned();
        let deps = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            // Normal and build dependencies ship; dev-dependencies only build tests.
            .filter(|d| d["kind"].as_str() != Some("dev"))
            .filter_map(|d| d["name"].as_str().map(str::to_owned))
            .collect();
        graph.insert(name, deps);
    }
    graph
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

/// Every function of every crate's `src/` (unit tests after `#[cfg(test)]` aside) fits in
/// [`MAX_FUNCTION_LINES`]. The code is rustfmt-formatted, so a function ends at the first
/// line that is its own indentation followed by `}`.
#[test]
fn no_function_of_shipped_code_is_over_150_lines() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(&crates).expect("crates/") {
        let src = krate.expect("entry").path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    assert!(files.len() > 100, "found only {} source files", files.len());
    let mut long = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read a source file");
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

fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read a source folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `(line, name, length)` of each function over the limit, before the file's `#[cfg(test)]`.
fn long_functions(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let end_of_code = lines
        .iter()
        .position(|l| l.trim() == "#[cfg(test)]")
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    for (i, line) in lines[..end_of_code].iter().enumerate() {
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
    let tests_only = format!("#[cfg(test)]\n{long}");
    assert!(long_functions(&tests_only).is_empty());
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
/// `read fn` / `write fn` shorthands of `delegate.rs`), generic names aside.
fn store_method_names() -> BTreeSet<String> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../store/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut names = BTreeSet::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read a store source file");
        for line in text.lines() {
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

/// `(line, method)` of each call in `text` (before its `#[cfg(test)]`) of a name in `names`.
fn store_calls(text: &str, names: &BTreeSet<String>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim() == "#[cfg(test)]" {
            break;
        }
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
        let mut files = Vec::new();
        rust_files(&crates.join(door).join("src"), &mut files);
        for path in files {
            let text = std::fs::read_to_string(&path).expect("read a door source file");
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
    let text = "let c = store.chat_get(id)?;\n// store.chat_get(id)\nlet x = s.read(|tx| f(tx));\nmap.get(k);\n#[cfg(test)]\nstore.chat_get(1);\n";
    assert_eq!(
        store_calls(text, &names),
        vec![(1, "chat_get".to_owned()), (3, "read".to_owned())]
    );
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
        rust_files(&crates.join(door).join("src"), &mut files);
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
