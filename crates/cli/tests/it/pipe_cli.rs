//! A reader that stops reading (`tavo show lorebook 1 | head -1`) ends the command quietly:
//! exit code 0, no panic message — whether the result is printed line by line or written whole.

use crate::support::tavo;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn corpus() -> PathBuf {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus"
    ));
    assert!(
        dir.is_dir(),
        "the shared corpus is missing: {}",
        dir.display()
    );
    dir
}

/// Runs `tavo args…` with a stdout whose reading end is already closed; returns the exit code
/// and stderr.
fn with_closed_stdout(data: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tavo"))
        .args(args)
        .env("TAVO_DATA_DIR", data)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run tavo: {e}"));
    drop(child.stdout.take());
    let mut err = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        let _ = stderr.read_to_string(&mut err);
    }
    let status = child.wait().unwrap_or_else(|e| panic!("wait: {e}"));
    (status.code(), err)
}

#[test]
fn a_closed_stdout_ends_every_kind_of_output_quietly() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path();
    let book = corpus().join("lorebooks/mgb-skyrim.json");
    let imported = tavo(data, &["import", &book.to_string_lossy()]);
    assert!(imported.status.success(), "{imported:?}");
    let id = String::from_utf8_lossy(&imported.stdout)
        .split_whitespace()
        .last()
        .unwrap_or_default()
        .to_owned();
    let cases: &[&[&str]] = &[
        // println! of a large JSON document.
        &["show", "lorebook", &id],
        // Line after line.
        &["list", "lorebooks"],
        &["tool", "list"],
        // One write_all of the exported bytes.
        &["export", "lorebook", &id, "-o", "-"],
        &["data-dir"],
    ];
    for args in cases {
        let (code, err) = with_closed_stdout(data, args);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
        assert_eq!(code, Some(0), "{args:?}: {err}");
    }
}

#[test]
fn an_open_stdout_still_gets_the_whole_result() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = tavo(dir.path(), &["data-dir"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        dir.path().to_string_lossy()
    );
}
