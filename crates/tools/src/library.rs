//! Storing what `tavo_formats::import_bytes` read: the one place both the CLI and the HTTP
//! door turn an [`Imported`] value into library rows, so the ids they report (under the seed's
//! names: `characterId`, `lorebookId`, `regexId`, `presetId`, `chatId`, `personaId`) and the
//! warnings they add cannot drift apart.

use tavo_formats::{Imported, Warning};
use tavo_store::Store;

/// Stores one imported file in the library (each kind in one transaction) and returns the
/// created ids in the order a result object lists them, the main id first. A chat speaker with
/// no character of that name in the library adds a `chat.character-unmatched` warning.
pub fn store_imported(
    store: &Store,
    imported: Imported,
    warnings: &mut Vec<Warning>,
) -> tavo_store::Result<Vec<(&'static str, Option<i64>)>> {
    Ok(match imported {
        Imported::Character {
            character,
            avatar,
            lorebook,
            regex,
        } => {
            let r = store.import_character(
                &character,
                avatar.as_deref(),
                lorebook.as_ref(),
                regex.as_ref(),
            )?;
            vec![
                ("characterId", Some(r.character_id.0)),
                ("lorebookId", r.lorebook_id.map(|l| l.0)),
                ("regexId", r.regex_id.map(|g| g.0)),
            ]
        }
        Imported::Persona(persona) => vec![("personaId", Some(store.create(&persona)?.0))],
        Imported::Preset { preset, regex } => {
            let (preset_id, regex_id) = store.import_preset(&preset, regex.as_ref())?;
            vec![
                ("presetId", Some(preset_id.0)),
                ("regexId", regex_id.map(|r| r.0)),
            ]
        }
        Imported::Lorebook(book) => vec![("lorebookId", Some(store.create(&book)?.0))],
        Imported::Regex(group) => vec![("regexId", Some(store.create(&group)?.0))],
        Imported::Chat(chat) => {
            let result = store.import_chat(
                chat.chat,
                chat.messages,
                &chat.character_names,
                chat.user_name.as_deref(),
            )?;
            for name in &result.unmatched {
                warnings.push(Warning::new(
                    "chat.character-unmatched",
                    format!(
                        "no character named {name:?} in the library; the chat was imported without it \
                         (import the character first, then import the chat again to link them)"
                    ),
                ));
            }
            vec![("chatId", Some(result.chat_id.0))]
        }
    })
}
