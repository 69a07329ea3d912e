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
