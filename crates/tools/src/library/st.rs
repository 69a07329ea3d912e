//! SillyTavern group definitions with their chat files (see [`super::import_file_all`]).

use tavo_formats::{Imported, Warning};
use tavo_model::AssetKind;
use tavo_store::Store;

use super::{ImportError, ImportedFile, chat_warnings};

/// The chat file names (without `.jsonl`) a SillyTavern group definition lists, `None` when the
/// bytes are not one: for the doors that look for a group's chat files before [`import_file_all`].
pub fn group_chat_file_names(bytes: &[u8]) -> Option<Vec<String>> {
    tavo_formats::st_group::chat_file_names(bytes)
}

/// A file name without its folders and extension (how a group names its chat files).
pub fn file_stem(name: &str) -> String {
    tavo_formats::text::file_stem(name)
}

/// A file a door was given for an import: the name it came under (a path on the user's disk,
/// an upload's file name) and where its bytes are (that path, or the upload's spool file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenFile {
    /// The name it was given under.
    pub name: String,
    /// Where its bytes are.
    pub path: std::path::PathBuf,
    /// Its size in bytes.
    pub size: u64,
}

/// Where a group definition's chat files are looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatFilesAt {
    /// Among the files given only (an upload: the names are not places on a disk).
    Given,
    /// Among the files given, else in `group chats/<chat>.jsonl` beside the definition's
    /// `groups` folder, as SillyTavern lays its data out (the names are paths: the CLI).
    GivenOrBeside,
}

/// What [`pair_group_chats`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct GroupChatFiles {
    /// Per group definition (its index among the files given): its chat files, (name, path).
    pub chats: std::collections::HashMap<usize, Vec<(String, std::path::PathBuf)>>,
    /// The given files taken as a group's chats, which are not imported on their own.
    pub claimed: std::collections::HashSet<usize>,
}

/// Group definitions are small; larger `.json` files are not looked into.
const GROUP_PEEK_LIMIT: u64 = 1024 * 1024;

/// The import's pairing of SillyTavern group definitions with their chat files, for every
/// door: each `.json` file (at most 1 MiB) that is a group definition gets, for each chat it
/// lists, the given `.jsonl` file of that name (by file stem), else — with
/// [`ChatFilesAt::GivenOrBeside`] — `group chats/<chat>.jsonl` beside its `groups` folder.
pub fn pair_group_chats(files: &[GivenFile], at: ChatFilesAt) -> GroupChatFiles {
    let mut found = GroupChatFiles::default();
    let has_extension = |name: &str, ext: &str| {
        std::path::Path::new(name)
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case(ext))
    };
    for (i, file) in files.iter().enumerate() {
        if file.size > GROUP_PEEK_LIMIT || !has_extension(&file.name, "json") {
            continue;
        }
        let Some(names) = std::fs::read(&file.path)
            .ok()
            .and_then(|b| group_chat_file_names(&b))
        else {
            continue;
        };
        let beside = (at == ChatFilesAt::GivenOrBeside)
            .then(|| std::path::Path::new(&file.name).parent()?.parent())
            .flatten()
            .map(|d| d.join("group chats"));
        let mut chats = Vec::new();
        for name in names {
            let given = files.iter().enumerate().find(|(j, c)| {
                *j != i && has_extension(&c.name, "jsonl") && file_stem(&c.name) == name
            });
            if let Some((j, c)) = given {
                found.claimed.insert(j);
                chats.push((c.name.clone(), c.path.clone()));
                continue;
            }
            let on_disk = beside
                .as_ref()
                .map(|d| d.join(format!("{name}.jsonl")))
                .filter(|p| p.is_file());
            if let Some(p) = on_disk {
                chats.push((p.display().to_string(), p));
            }
        }
        found.chats.insert(i, chats);
    }
    found
}

/// A group definition with the chat files found for it (see [`import_file_all`]), all in one
/// transaction.
pub(super) fn import_group(
    store: &Store,
    file_name: &str,
    group: tavo_formats::st_group::ImportedGroup,
    warnings: Vec<Warning>,
    group_chats: &[(String, Vec<u8>)],
) -> Result<Vec<ImportedFile>, ImportError> {
    let mut chats = Vec::new();
    let mut missing = Vec::new();
    for listed in &group.chat_files {
        match group_chats
            .iter()
            .find(|(n, _)| &tavo_formats::text::file_stem(n) == listed)
        {
            Some((name, bytes)) => {
                let read = tavo_formats::import_bytes(bytes, name, Some(AssetKind::Chat))?;
                let Imported::Chat(chat) = read.imported else {
                    continue;
                };
                chats.push((group.with_chat(chat), read.warnings));
            }
            None => missing.push(format!("group chats/{listed}.jsonl")),
        }
    }
    let mut first_warnings = warnings;
    if chats.is_empty() {
        first_warnings.push(Warning::new(
            "group.chats-missing",
            format!(
                "the group's messages are in its chat files ({}), which were not given; an empty group chat was created \
                 (import the group file together with them: `tavo import groups/ID.json` finds them in `group chats/` beside `groups/`)",
                if missing.is_empty() { "none listed".to_owned() } else { missing.join(", ") }
            ),
        ));
        chats.push((group.chat.clone(), Vec::new()));
    } else if !missing.is_empty() {
        first_warnings.push(Warning::new(
            "group.chats-missing",
            format!(
                "these chats of the group were not given and not imported: {}",
                missing.join(", ")
            ),
        ));
    }
    let results = store
        .write(|tx| {
            chats
                .iter()
                .map(|(c, _)| {
                    tx.import_group_chat(
                        c.chat.clone(),
                        c.messages.clone(),
                        &c.character_names,
                        c.user_name.as_deref(),
                        &group.muted,
                    )
                })
                .collect::<tavo_store::Result<Vec<_>>>()
        })
        .map_err(|source| ImportError::Store {
            file: file_name.to_owned(),
            kind: AssetKind::Chat,
            source,
        })?;
    Ok(chats
        .into_iter()
        .zip(results)
        .enumerate()
        .map(|(i, ((c, read_warnings), result))| {
            let mut w = if i == 0 {
                std::mem::take(&mut first_warnings)
            } else {
                Vec::new()
            };
            w.extend(read_warnings);
            chat_warnings(&result, &mut w);
            ImportedFile {
                kind: AssetKind::Chat,
                name: c.chat.name,
                ids: vec![(AssetKind::Chat.id_key(), Some(result.chat_id.0))],
                warnings: w,
            }
        })
        .collect())
}

#[cfg(test)]
mod pairing_tests {
    use super::*;

    fn given(path: &std::path::Path) -> GivenFile {
        GivenFile {
            name: path.display().to_string(),
            path: path.to_path_buf(),
            size: std::fs::metadata(path).map_or(0, |m| m.len()),
        }
    }

    #[test]
    fn a_groups_chats_are_the_given_files_else_the_ones_beside_its_folder() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for sub in ["groups", "group chats", "elsewhere"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap_or_else(|e| panic!("{e}"));
        }
        let group = dir.path().join("groups").join("g.json");
        let definition =
            serde_json::json!({"name": "G", "members": ["a.png"], "chats": ["one", "two"]});
        std::fs::write(&group, definition.to_string()).unwrap_or_else(|e| panic!("{e}"));
        let one = dir.path().join("elsewhere").join("one.jsonl");
        let two = dir.path().join("group chats").join("two.jsonl");
        for chat in [&one, &two] {
            std::fs::write(chat, "{}\n").unwrap_or_else(|e| panic!("{e}"));
        }
        let files = [given(&group), given(&one)];
        let on_disk = pair_group_chats(&files, ChatFilesAt::GivenOrBeside);
        assert_eq!(on_disk.claimed, [1].into());
        assert_eq!(
            on_disk
                .chats
                .get(&0)
                .map(|c| c.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>()),
            Some(vec![one.clone(), two.clone()])
        );
        let uploaded = pair_group_chats(&files, ChatFilesAt::Given);
        assert_eq!(uploaded.claimed, [1].into());
        assert_eq!(
            uploaded.chats.get(&0).map(Vec::len),
            Some(1),
            "nothing beside an upload"
        );
    }
}
