//! `tavo import PATH... [--kind K] [--json]`: files or folders (recursively) into the library.
//!
//! Each file goes through `tavo_tools::library::import_file`, the import every door shares, and
//! is stored in one transaction, so a file that fails changes nothing; a folder import reports
//! the failure and keeps going; the exit code is 1 if any file failed. stdout carries only
//! results: per file one line naming the main object's kind and id (`character 3`), or with
//! `--json` one object per file and line: `path`, then the shared result object (`kind`,
//! `name`, the created ids under the seed's names, `warnings`). A file that creates several
//! objects (a SillyTavern `settings.json`: one persona each) gives one line per object.
//!
//! A SillyTavern group definition (`groups/<id>.json`) is imported with its chat files: each
//! chat it lists is looked for among the files given (by file name, `<chat>.jsonl`) and else in
//! `group chats/<chat>.jsonl` beside the `groups` folder, as SillyTavern lays them out; those
//! files are imported as the group's chats (members, reply mode, muted members) and not again
//! on their own.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::{Map, Value, json};
use tavo_model::AssetKind;
use tavo_store::Store;
use tavo_tools::library::{
    ChatFilesAt, GivenFile, ImportedFile, import_file_all, pair_group_chats,
};

use crate::context::Context;
use crate::library::open_store;

/// Extensions a folder import picks up (a file named explicitly is always tried).
const IMPORTABLE: [&str; 4] = ["json", "jsonl", "png", "charx"];

/// Show a progress bar from this many files on (and only when stderr is a terminal).
const PROGRESS_FROM: usize = 10;

/// Import character cards, personas, presets, lorebooks, regex scripts and chats.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Files or folders; folders are searched recursively for .json, .jsonl, .png and .charx.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Force the kind instead of detecting it: character, persona, preset, lorebook, regex, chat.
    #[arg(long, value_parser = parse_import_kind)]
    pub kind: Option<AssetKind>,
    /// Print one JSON object per file: path, kind, name, the created ids, warnings.
    #[arg(long)]
    pub json: bool,
}

fn parse_import_kind(value: &str) -> Result<AssetKind, String> {
    value
        .parse()
        .map_err(|e: tavo_model::UnknownKind| e.to_string())
}

pub fn run(args: ImportArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let files = collect_files(&args.paths);
    if files.is_empty() {
        eprintln!("error: no importable files (.json, .jsonl, .png, .charx) under the given paths");
        return Ok(ExitCode::FAILURE);
    }
    let store = open_store(ctx)?;
    let progress = (files.len() >= PROGRESS_FROM && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(files.len() as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {wide_msg}")
        {
            bar.set_style(style);
        }
        bar
    });
    let say = |line: String| match &progress {
        Some(bar) => bar.suspend(|| eprintln!("{line}")),
        None => eprintln!("{line}"),
    };
    // The group definitions' chat files, paired as every door pairs them (`tavo_tools::
    // library::pair_group_chats`); on disk they may also sit in `group chats/` beside `groups/`.
    let given: Vec<GivenFile> = files
        .iter()
        .map(|f| GivenFile {
            name: f.display().to_string(),
            path: f.clone(),
            size: std::fs::metadata(f).map_or(u64::MAX, |m| m.len()),
        })
        .collect();
    let paired = pair_group_chats(&given, ChatFilesAt::GivenOrBeside);
    let (mut imported, mut failed, mut warned) = (0usize, 0usize, 0usize);
    let mut by_kind: std::collections::BTreeMap<&'static str, usize> = Default::default();
    for (index, file) in files.iter().enumerate() {
        if let Some(bar) = &progress {
            bar.set_message(file.display().to_string());
        }
        let shown = file.display().to_string();
        if paired.claimed.contains(&index) {
            if let Some(bar) = &progress {
                bar.inc(1);
            }
            continue;
        }
        let companions = paired
            .chats
            .get(&index)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let results = match import_file(&store, file, &shown, args.kind, companions) {
            Ok(results) => results,
            Err(err) => {
                failed += 1 + companions.len();
                say(format!("error: {err}"));
                if let Some(bar) = &progress {
                    bar.inc(1);
                }
                continue;
            }
        };
        imported += 1 + companions.len();
        for created in results {
            warned += created.warnings.len();
            *by_kind.entry(created.kind.as_str()).or_default() += 1;
            if args.json {
                println!("{}", result_line(&shown, &created));
            } else {
                let created_ids = created.created();
                if let Some((kind, id)) = created_ids.first() {
                    println!("{kind} {id}");
                }
                for warning in &created.warnings {
                    say(format!("warning: {shown}: {warning}"));
                }
                let others: Vec<String> = created_ids
                    .iter()
                    .skip(1)
                    .map(|(kind, id)| format!("{kind} {id}"))
                    .collect();
                if !others.is_empty() {
                    say(format!("{shown}: also created {}", others.join(", ")));
                }
            }
        }
        if let Some(bar) = &progress {
            bar.inc(1);
        }
    }
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    let kinds: Vec<String> = by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
    eprintln!(
        "imported {imported} of {} file(s){}{}{}",
        files.len(),
        if kinds.is_empty() {
            String::new()
        } else {
            format!(" ({})", kinds.join(", "))
        },
        if warned > 0 {
            format!(", {warned} warning(s)")
        } else {
            String::new()
        },
        if failed > 0 {
            format!(", {failed} failed")
        } else {
            String::new()
        },
    );
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The `--json` line of one file: `path`, then the result object every door shows.
fn result_line(path: &str, created: &ImportedFile) -> Value {
    let mut line = Map::new();
    line.insert("path".into(), json!(path));
    line.extend(created.to_json());
    Value::Object(line)
}

/// Reads one file and imports it; the error message names the file (and, from the reader,
/// the JSON path).
fn import_file(
    store: &Store,
    file: &Path,
    shown: &str,
    kind: Option<AssetKind>,
    companions: &[(String, PathBuf)],
) -> anyhow::Result<Vec<ImportedFile>> {
    let bytes =
        std::fs::read(file).map_err(|e| anyhow::anyhow!("{shown}: cannot read the file: {e}"))?;
    let mut chats = Vec::new();
    for (shown, c) in companions {
        let b =
            std::fs::read(c).map_err(|e| anyhow::anyhow!("{shown}: cannot read the file: {e}"))?;
        chats.push((shown.clone(), b));
    }
    Ok(import_file_all(store, &bytes, shown, kind, &chats)?)
}

/// The files to import, in a stable order: each PATH as given; a folder's importable files
/// recursively, sorted by path. Unreadable folders are reported and skipped.
fn collect_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut found);
            found.sort();
            out.extend(found);
        } else {
            out.push(path.clone());
        }
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            eprintln!("warning: {}: cannot list the folder: {e}", dir.display());
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if hidden {
            continue;
        }
        if path.is_dir() {
            walk(&path, out);
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| IMPORTABLE.iter().any(|i| e.eq_ignore_ascii_case(i)))
        {
            out.push(path);
        }
    }
}
