//! Storing what an importer produced — a card with its lorebook and regex group, a preset with
//! its regex group, a chat matched to its characters — in one transaction, and reading the same
//! parts back for an export.
//!
//! This module works on model types only: `tavo-formats` turns files into these types and back,
//! the doors (CLI, server, tools) call both.

use crate::sql::params;
use serde::Serialize;

use tavo_model::{
    Character, CharacterId, CharacterImportResult, CharacterSummary, Chat, ChatId, Lorebook,
    LorebookId, Message, NameMatch, Persona, Preset, PresetId, RegexGroup, RegexId, Role, Summary,
};

use crate::avatars::Avatar;
use crate::error::{Result, StoreError};
use crate::store::Tx;

/// What importing a chat created and how its speakers were matched.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatImportResult {
    /// The chat the import created.
    pub chat_id: ChatId,
    /// The library characters the chat was matched to, by name.
    pub characters: Vec<CharacterSummary>,
    /// Speaker names for which no character of that name exists; nothing was created for them.
    pub unmatched: Vec<String>,
    /// The persona matched to the chat's user name, if one has that name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persona: Option<Summary<tavo_model::PersonaId>>,
    /// The matched characters' own lorebooks (from their cards' `character_book`), bound to
    /// the chat by the import ([`Tx::card_bindings`]).
    pub card_lorebooks: Vec<Summary<LorebookId>>,
    /// The matched characters' own regex groups (from their cards' `regex_scripts`), bound to
    /// the chat by the import.
    pub card_regexes: Vec<Summary<RegexId>>,
}

/// The lorebooks and regex groups characters' cards came with (see [`Tx::card_bindings`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CardBindings {
    /// From the cards' `character_book`, in member order.
    pub lorebooks: Vec<Summary<LorebookId>>,
    /// From the cards' `extensions.regex_scripts`, in member order.
    pub regexes: Vec<Summary<RegexId>>,
}

/// A character and everything an export writes into its card.
#[derive(Debug, Clone, PartialEq)]
pub struct CharacterExport {
    /// The character as stored.
    pub character: Character,
    /// The card image (a PNG export embeds the card into it).
    pub avatar: Option<Avatar>,
    /// Written back as the card's `character_book`.
    pub lorebook: Option<Lorebook>,
    /// Written back as the card's `extensions.regex_scripts`.
    pub regex: Option<RegexGroup>,
}

/// The MIME type an avatar is stored with: its sniffed [`tavo_model::ImageType`], else
/// `application/octet-stream` (the bytes are kept as they came either way).
fn avatar_mime_type(bytes: &[u8]) -> &'static str {
    tavo_model::ImageType::sniff(bytes).map_or("application/octet-stream", |t| t.mime_type())
}

impl Tx<'_> {
    /// Stores a card: the character, its avatar image, and the lorebook (`character_book`) and
    /// regex group (`extensions.regex_scripts`) that came with it, linked to the character so an
    /// export writes them back. Returns the seed's `tavo.character.import` result.
    pub fn import_character(
        &self,
        character: &Character,
        avatar: Option<&[u8]>,
        lorebook: Option<&Lorebook>,
        regex: Option<&RegexGroup>,
    ) -> Result<CharacterImportResult> {
        let character_id = self.create(character)?;
        if let Some(bytes) = avatar {
            let avatar = Avatar {
                mime_type: avatar_mime_type(bytes).to_owned(),
                bytes: bytes.to_vec(),
            };
            self.character_avatar_set(character_id, &avatar)?;
        }
        let lorebook_id = lorebook.map(|book| self.create(book)).transpose()?;
        let regex_id = regex.map(|group| self.create(group)).transpose()?;
        self.character_links_set(character_id, lorebook_id, regex_id)?;
        Ok(CharacterImportResult {
            character_id,
            lorebook_id,
            regex_id,
        })
    }

    /// Links a character to its card lorebook and regex group (replacing earlier links).
    pub fn character_links_set(
        &self,
        id: CharacterId,
        lorebook: Option<LorebookId>,
        regex: Option<RegexId>,
    ) -> Result<()> {
        self.execute(
            "INSERT INTO character_links (character_id, lorebook_id, regex_id) VALUES (?1, ?2, ?3)
             ON CONFLICT(character_id) DO UPDATE SET lorebook_id = excluded.lorebook_id, regex_id = excluded.regex_id",
            params![id.0, lorebook.map(|l| l.0), regex.map(|r| r.0)])?;
        Ok(())
    }

    /// The lorebook and regex group linked to a character (both `None` when it has none).
    pub fn character_links(
        &self,
        id: CharacterId,
    ) -> Result<(Option<LorebookId>, Option<RegexId>)> {
        let row: Option<(Option<i64>, Option<i64>)> = self.query_opt(
            "SELECT lorebook_id, regex_id FROM character_links WHERE character_id = ?1",
            params![id.0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let (lorebook, regex) = row.unwrap_or((None, None));
        Ok((lorebook.map(LorebookId), regex.map(RegexId)))
    }

    /// The lorebooks and regex groups the characters' cards came with (their links, see
    /// [`Tx::character_links_set`]), in the order of `characters`, without duplicates; a link
    /// whose asset was deleted since is skipped.
    ///
    /// SillyTavern applies a card's embedded lorebook and regex scripts as "character lore"
    /// whenever the character is in a chat; Tavo binds lorebooks and regex groups per chat, so
    /// a chat of these characters binds these by default (and the user can unbind them).
    pub fn card_bindings(&self, characters: &[CharacterId]) -> Result<CardBindings> {
        let mut books: Vec<Summary<LorebookId>> = Vec::new();
        let mut groups: Vec<Summary<RegexId>> = Vec::new();
        for &character in characters {
            let (book, group) = self.character_links(character)?;
            if let Some(id) = book
                && !books.iter().any(|s| s.id == id)
                && let Some(b) = self.get::<Lorebook>(id)?
            {
                books.push(Summary { id, name: b.name });
            }
            if let Some(id) = group
                && !groups.iter().any(|s| s.id == id)
                && let Some(g) = self.get::<RegexGroup>(id)?
            {
                groups.push(Summary { id, name: g.name });
            }
        }
        Ok(CardBindings {
            lorebooks: books,
            regexes: groups,
        })
    }

    /// Stores a preset and the regex group that came with it (SillyTavern presets may carry
    /// regex scripts), linked so an export writes it back.
    pub fn import_preset(
        &self,
        preset: &Preset,
        regex: Option<&RegexGroup>,
    ) -> Result<(PresetId, Option<RegexId>)> {
        let preset_id = self.create(preset)?;
        let regex_id = regex.map(|group| self.create(group)).transpose()?;
        if regex_id.is_some() {
            self.execute(
                "INSERT INTO preset_links (preset_id, regex_id) VALUES (?1, ?2)
                 ON CONFLICT(preset_id) DO UPDATE SET regex_id = excluded.regex_id",
                params![preset_id.0, regex_id.map(|r| r.0)],
            )?;
        }
        Ok((preset_id, regex_id))
    }

    /// The regex group linked to a preset.
    pub fn preset_regex(&self, id: PresetId) -> Result<Option<RegexId>> {
        let regex: Option<Option<i64>> = self.query_opt(
            "SELECT regex_id FROM preset_links WHERE preset_id = ?1",
            params![id.0],
            |r| r.get(0),
        )?;
        Ok(regex.flatten().map(RegexId))
    }

    /// Stores an imported chat and its messages. Each speaker name is matched to the oldest
    /// library character of exactly that name; assistant messages of a matched speaker (or of
    /// the only character) get its id. Unmatched names are reported, never created. The
    /// matched characters' own lorebooks and regex groups ([`Tx::card_bindings`]) are bound
    /// first, before any bindings the file names, as SillyTavern applies them to the chat.
    pub fn import_chat(
        &self,
        chat: Chat,
        messages: Vec<Message>,
        character_names: &[String],
        user_name: Option<&str>,
    ) -> Result<ChatImportResult> {
        self.import_group_chat(chat, messages, character_names, user_name, &[])
    }

    /// [`Tx::import_chat`] for a group chat: the matched members named in `muted` are muted
    /// ([`Chat::set_muted`]); a muted name that matched no character is one of the result's
    /// `unmatched` names already.
    pub fn import_group_chat(
        &self,
        mut chat: Chat,
        mut messages: Vec<Message>,
        character_names: &[String],
        user_name: Option<&str>,
        muted: &[String],
    ) -> Result<ChatImportResult> {
        let mut matched: Vec<CharacterSummary> = Vec::new();
        let mut unmatched = Vec::new();
        for name in character_names {
            if matched.iter().any(|c| &c.name == name) || unmatched.contains(name) {
                continue;
            }
            match self
                .find::<Character>(name, NameMatch::Exact)?
                .into_iter()
                .next()
            {
                Some(found) => {
                    if let Some(id) = found.id {
                        matched.push(CharacterSummary {
                            id,
                            name: found.name,
                            avatar: found.avatar,
                        });
                    }
                }
                None => unmatched.push(name.clone()),
            }
        }
        let persona = match user_name {
            Some(name) => self
                .find::<Persona>(name, NameMatch::Exact)?
                .into_iter()
                .next()
                .and_then(|p| p.id.map(|id| Summary { id, name: p.name })),
            None => None,
        };
        for message in messages
            .iter_mut()
            .filter(|m| m.role == Role::Assistant && m.character_id.is_none())
        {
            let speaker = message
                .name
                .as_deref()
                .and_then(|n| matched.iter().find(|c| c.name == n));
            // A named speaker that matched nothing stays unassigned; an unnamed one in a chat
            // with exactly one character is that character.
            let unknown_speaker = message.name.as_ref().is_some_and(|n| unmatched.contains(n));
            message.character_id = match (speaker, matched.as_slice()) {
                (Some(c), _) => Some(c.id),
                (None, [only]) if !unknown_speaker => Some(only.id),
                _ => None,
            };
        }
        if !matched.is_empty() {
            chat.characters = matched.clone();
        }
        let muted_ids: Vec<CharacterId> = matched
            .iter()
            .filter(|c| muted.contains(&c.name))
            .map(|c| c.id)
            .collect();
        if !muted_ids.is_empty() {
            chat.set_muted(&muted_ids);
        }
        if persona.is_some() {
            chat.persona = persona.clone();
        }
        let member_ids: Vec<CharacterId> = matched.iter().map(|c| c.id).collect();
        let CardBindings {
            lorebooks: card_lorebooks,
            regexes: card_regexes,
        } = self.card_bindings(&member_ids)?;
        chat.lorebooks = merged(card_lorebooks.clone(), std::mem::take(&mut chat.lorebooks));
        chat.regexes = merged(card_regexes.clone(), std::mem::take(&mut chat.regexes));
        let chat_id = self.create(&chat)?;
        self.messages_append(chat_id, &messages)?;
        Ok(ChatImportResult {
            chat_id,
            characters: matched,
            unmatched,
            persona,
            card_lorebooks,
            card_regexes,
        })
    }

    /// A character with its avatar and linked lorebook and regex group, for an export.
    pub fn character_export_parts(&self, id: CharacterId) -> Result<CharacterExport> {
        let character = self.require::<Character>(id)?;
        let avatar = self.character_avatar_get(id)?;
        let (lorebook, regex) = self.character_links(id)?;
        let lorebook = lorebook
            .map(|l| self.get::<Lorebook>(l))
            .transpose()?
            .flatten();
        let regex = regex
            .map(|r| self.get::<RegexGroup>(r))
            .transpose()?
            .flatten();
        Ok(CharacterExport {
            character,
            avatar,
            lorebook,
            regex,
        })
    }

    /// A preset with its linked regex group, for an export.
    pub fn preset_export_parts(&self, id: PresetId) -> Result<(Preset, Option<RegexGroup>)> {
        let preset = self.require::<Preset>(id)?;
        let regex = self
            .preset_regex(id)?
            .map(|r| self.get::<RegexGroup>(r))
            .transpose()?
            .flatten();
        Ok((preset, regex))
    }

    /// A chat with all its messages, for an export.
    pub fn chat_export_parts(&self, id: ChatId) -> Result<(Chat, Vec<Message>)> {
        let chat = self
            .get::<Chat>(id)?
            .ok_or_else(|| StoreError::not_found("chat", id))?;
        let messages = self.messages_all(id)?;
        Ok((chat, messages))
    }
}

/// `first`, then the entries of `then` whose id is not in `first`.
fn merged<Id: PartialEq>(mut first: Vec<Summary<Id>>, then: Vec<Summary<Id>>) -> Vec<Summary<Id>> {
    for s in then {
        if !first.iter().any(|o| o.id == s.id) {
            first.push(s);
        }
    }
    first
}
