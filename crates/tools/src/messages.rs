//! Writing a chat's messages: the one place a message is appended, edited, hidden or deleted,
//! whichever door asks (the model's `tavo_message_*` tools, `tavo message …`, the HTTP send
//! route through the engine, the engine's own replies).
//!
//! Every write that stores text runs the chat's regex rules of its timing
//! ([`tavo_prompt::WriteTiming`]): a new message `receive` (and `editAndReceive`), an edit of
//! its text `editAndReceive` only. Side-effect macros in replacements update the chat's
//! variables in the same transaction as the message.

use serde_json::json;
use tavo_model::{Character, CharacterId, Chat, ChatId, Message, MessageId, RegexGroup, Role};
use tavo_prompt::macros::{MacroContext, Variables};
use tavo_prompt::regex::RegexIssue;
use tavo_prompt::{WriteTiming, rewrite_stored};
use tavo_store::{Store, StoreError, Tx, VarScope};

use crate::context::store_error;
use crate::error::{ErrorCode, ToolError};
use crate::ops::common::missing;

/// A message to append.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageDraft {
    /// Who wrote it.
    pub role: Role,
    /// The text.
    pub content: String,
    /// Reasoning text, if any.
    pub reasoning: Option<String>,
    /// Kept in the chat but never sent to the model.
    pub hidden: bool,
    /// The speaking character of an assistant message: required in group chats, the only
    /// member in a one-character chat. Ignored for user and system messages.
    pub character_id: Option<CharacterId>,
    /// When it was sent (RFC 3339); now when absent.
    pub send_date: Option<String>,
    /// Fields stored beside the model's (SillyTavern's `extra` object: `extra.image`, …).
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl MessageDraft {
    /// A visible message of `role` with `content`.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            reasoning: None,
            hidden: false,
            character_id: None,
            send_date: None,
            extra: serde_json::Map::new(),
        }
    }
}

/// A change to a stored message; `None` keeps a field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageChange {
    /// New content (the current swipe too).
    pub content: Option<String>,
    /// New reasoning; `Some("")` clears it.
    pub reasoning: Option<String>,
    /// Hidden or shown.
    pub hidden: Option<bool>,
}

/// A stored message and the regex rules that could not run on it.
#[derive(Debug, Clone)]
pub struct Written {
    /// The message as stored (with its id and floor).
    pub message: Message,
    /// Rules skipped because they failed (`location`, `error`); the message was stored
    /// without them. Doors show them as warnings.
    pub regex_issues: Vec<RegexIssue>,
}

impl Written {
    /// The issues as one line each (`regex[3].entries[x].findRegex: …`).
    pub fn warnings(&self) -> Vec<String> {
        self.regex_issues
            .iter()
            .map(|i| format!("{}: {}", i.location, i.error))
            .collect()
    }
}

/// What a stored rewrite needs from the library, read in one transaction.
struct Rules {
    groups: Vec<RegexGroup>,
    user: String,
    variables: Variables,
}

fn read_rules(tx: &Tx<'_>, chat: &Chat) -> Result<Rules, StoreError> {
    let mut groups = Vec::with_capacity(chat.regexes.len());
    for r in &chat.regexes {
        if let Some(group) = tx.get::<RegexGroup>(r.id)? {
            groups.push(group);
        }
    }
    if groups.iter().all(|g| g.entries.is_empty()) {
        return Ok(Rules {
            groups: Vec::new(),
            user: String::new(),
            variables: Variables::default(),
        });
    }
    let persona = tx.chat_persona(chat)?;
    let variables = Variables {
        chat: tx.var_all(VarScope::Chat(chat.id.map_or(0, |c| c.0)))?,
        global: tx.var_all(VarScope::Global)?,
    };
    Ok(Rules {
        groups,
        user: persona.map_or_else(|| "User".to_owned(), |p| p.name),
        variables,
    })
}

/// The speaking character's name for `{{char}}`: the message's own name, else its member's,
/// else the chat's first member's.
fn char_name(chat: &Chat, message: &Message) -> String {
    if let Some(name) = message.name.as_deref().filter(|n| !n.trim().is_empty()) {
        return name.to_owned();
    }
    message
        .character_id
        .and_then(|id| chat.characters.iter().find(|c| c.id == id))
        .or(chat.characters.first())
        .map(|c| c.name.clone())
        .unwrap_or_default()
}

/// A message rewritten by the chat's regex rules, not yet stored.
#[derive(Debug, Clone)]
pub struct Rewritten {
    /// The message to store.
    pub message: Message,
    /// Rules that failed.
    pub regex_issues: Vec<RegexIssue>,
    /// Variables to store with it, when a replacement changed them.
    variables: Option<Variables>,
    chat: ChatId,
}

impl Rewritten {
    /// Stores the variables the replacements changed (call in the transaction that stores
    /// the message).
    pub fn save_variables(&self, tx: &Tx<'_>) -> Result<(), StoreError> {
        if let Some(vars) = &self.variables {
            tx.var_replace_all(VarScope::Chat(self.chat.0), &vars.chat)?;
            tx.var_replace_all(VarScope::Global, &vars.global)?;
        }
        Ok(())
    }
}

/// Runs the chat's `timing` regex rules over `message` (content and reasoning). The regex
/// engine runs outside any transaction: a slow rule never holds the library's lock.
pub fn rewrite_for_write(
    store: &Store,
    chat: &Chat,
    message: &Message,
    timing: WriteTiming,
) -> Result<Rewritten, ToolError> {
    let chat_id = chat.id.unwrap_or(ChatId(0));
    let rules = store
        .read(|tx| read_rules(tx, chat))
        .map_err(|e| store_error("reading the chat's regex rules", e))?;
    if rules.groups.is_empty() {
        return Ok(Rewritten {
            message: message.clone(),
            regex_issues: Vec::new(),
            variables: None,
            chat: chat_id,
        });
    }
    let ctx = MacroContext::new(
        &rules.user,
        &char_name(chat, message),
        tavo_prompt::local_now(),
    );
    let out = rewrite_stored(message, &rules.groups, timing, &ctx, &rules.variables);
    Ok(Rewritten {
        message: out.message,
        regex_issues: out.issues,
        variables: out.variables,
        chat: chat_id,
    })
}

fn load_chat(store: &Store, chat: ChatId) -> Result<Chat, ToolError> {
    store
        .chat_get(chat)
        .map_err(|e| store_error("reading the chat", e))?
        .ok_or_else(|| missing("chat", chat.0))
}

/// The speaker of a new assistant message, checked against the chat's members and the
/// library (a deleted character cannot speak).
fn speaker(
    store: &Store,
    chat: &Chat,
    asked: Option<CharacterId>,
) -> Result<Option<(CharacterId, String)>, ToolError> {
    let members: Vec<i64> = chat.characters.iter().map(|c| c.id.0).collect();
    let asked = asked.map(CharacterId::get);
    let id = match asked {
        Some(c) if members.contains(&c) => c,
        // A deleted character has left every chat's member list: it does not exist, which is
        // what the caller needs to hear (not that it is in some other chat).
        Some(c)
            if store
                .get::<Character>(CharacterId(c))
                .map_err(|e| store_error("reading the character", e))?
                .is_none() =>
        {
            return Err(ToolError::new(
                ErrorCode::ResourceNotFound,
                format!(
                    "message.characterId: character {c} does not exist (it may have been deleted)"
                ),
            )
            .with_details(json!({"path": "message.characterId", "kind": "character", "id": c})));
        }
        Some(c) => {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "message.characterId: character {c} is not in this chat (members: {members:?})"
                ),
            )
            .with_details(json!({
                "path": "message.characterId",
                "expected": "the id of a character in this chat",
                "actualType": "integer"
            })));
        }
        None if members.len() == 1 => members[0],
        None if members.is_empty() => return Ok(None),
        None => {
            return Err(ToolError::invalid_at(
                "message.characterId",
                format!(
                    "the speaking character's id (this chat has {} characters: {members:?})",
                    members.len()
                ),
                "missing",
            ));
        }
    };
    let character = store
        .get::<Character>(CharacterId(id))
        .map_err(|e| store_error("reading the character", e))?
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::ResourceNotFound,
                format!(
                    "message.characterId: character {id} no longer exists; remove it from the chat or pick another member"
                ),
            )
        })?;
    let name = chat
        .characters
        .iter()
        .find(|c| c.id.0 == id)
        .map(|c| c.name.clone())
        .filter(|n| !n.is_empty())
        .unwrap_or(character.name);
    Ok(Some((CharacterId(id), name)))
}

/// Appends a message at the end of `chat`, rewritten by the chat's `receive` regex rules.
pub fn append_message(
    store: &Store,
    chat: ChatId,
    draft: MessageDraft,
) -> Result<Written, ToolError> {
    let chat_obj = load_chat(store, chat)?;
    let mut message = Message::new(draft.role, draft.content);
    message.reasoning = draft.reasoning.filter(|r| !r.is_empty());
    message.hidden = draft.hidden;
    message.extra = draft.extra;
    message.send_date = Some(
        draft
            .send_date
            .unwrap_or_else(|| tavo_prompt::local_now().to_rfc3339()),
    );
    if draft.role == Role::Assistant
        && let Some((id, name)) = speaker(store, &chat_obj, draft.character_id)?
    {
        message.character_id = Some(id);
        message.name = Some(name);
    }
    let rewritten = rewrite_for_write(store, &chat_obj, &message, WriteTiming::Receive)?;
    let mut message = rewritten.message.clone();
    let id = store
        .write(|tx| {
            let id = tx.message_append(chat, &message)?;
            rewritten.save_variables(tx)?;
            Ok(id)
        })
        .map_err(|e| store_error("appending the message", e))?;
    message.id = Some(id);
    let floor = store.message_get(id).ok().flatten().and_then(|m| m.floor);
    message.floor = floor;
    Ok(Written {
        message,
        regex_issues: rewritten.regex_issues,
    })
}

/// A message of `chat` by id; `resource_not_found` when it is in another chat.
pub fn message_in_chat(store: &Store, chat: ChatId, id: MessageId) -> Result<Message, ToolError> {
    let in_chat = store
        .message_chat(id)
        .map_err(|e| store_error("reading the message", e))?;
    if in_chat != Some(chat) {
        return Err(missing("message", id.0));
    }
    store
        .message_get(id)
        .map_err(|e| store_error("reading the message", e))?
        .ok_or_else(|| missing("message", id.0))
}

/// Changes a message of `chat`. New text passes the chat's `editAndReceive` rules
/// (SillyTavern's `runOnEdit`); only the fields given are rewritten, so unchanged text is never
/// rewritten twice.
pub fn edit_message(
    store: &Store,
    chat: ChatId,
    id: MessageId,
    change: MessageChange,
) -> Result<Written, ToolError> {
    let mut message = message_in_chat(store, chat, id)?;
    let mut issues = Vec::new();
    let mut rewritten = None;
    if change.content.is_some() || change.reasoning.as_deref().is_some_and(|r| !r.is_empty()) {
        let chat_obj = load_chat(store, chat)?;
        // Only the edited texts go through the rules: a system role has no content placement,
        // so a reasoning-only edit leaves the content as it is.
        let mut edited = message.clone();
        match &change.content {
            Some(c) => edited.content.clone_from(c),
            None => edited.role = Role::System,
        }
        edited.reasoning = change.reasoning.clone().filter(|r| !r.is_empty());
        let out = rewrite_for_write(store, &chat_obj, &edited, WriteTiming::Edit)?;
        if change.content.is_some() {
            message.content = out.message.content.clone();
            if let Some(i) = message.swipe_id
                && let Some(slot) = message.swipes.get_mut(i as usize)
            {
                slot.clone_from(&message.content);
            }
        }
        if change.reasoning.is_some() {
            message.reasoning = out.message.reasoning.clone();
        }
        issues = out.regex_issues.clone();
        rewritten = Some(out);
    } else if change.reasoning.is_some() {
        message.reasoning = None;
    }
    if let Some(h) = change.hidden {
        message.hidden = h;
    }
    store
        .write(|tx| {
            tx.message_update(&message, None)?;
            if let Some(r) = &rewritten {
                r.save_variables(tx)?;
            }
            Ok(())
        })
        .map_err(|e| store_error("updating the message", e))?;
    Ok(Written {
        message,
        regex_issues: issues,
    })
}

/// Hides or shows a message of `chat` (hidden messages stay but leave the prompt). No regex
/// runs: the text does not change.
pub fn set_message_hidden(
    store: &Store,
    chat: ChatId,
    id: MessageId,
    hidden: bool,
) -> Result<Written, ToolError> {
    edit_message(
        store,
        chat,
        id,
        MessageChange {
            hidden: Some(hidden),
            ..MessageChange::default()
        },
    )
}

/// Shows swipe `index` of a message of `chat` (the app's swipe arrows): the text shown so
/// far is kept in its own slot, the chosen slot becomes the content. No regex runs: every
/// slot was stored through its rules already. An index past the last swipe is
/// `invalid_arguments` at `index`, and nothing is written.
pub fn choose_swipe(
    store: &Store,
    chat: ChatId,
    id: MessageId,
    index: u64,
) -> Result<Message, ToolError> {
    let mut m = message_in_chat(store, chat, id)?;
    let Some(chosen) = m.swipes.get(index as usize).cloned() else {
        return Err(ToolError::new(
            ErrorCode::InvalidArguments,
            format!(
                "message {} has {} swipes; index {index} does not exist",
                id.0,
                m.swipes.len()
            ),
        )
        .with_details(json!({"path": "index"})));
    };
    let current = m.swipe_id.unwrap_or(0) as usize;
    if let Some(slot) = m.swipes.get_mut(current) {
        slot.clone_from(&m.content);
    }
    m.content = chosen;
    m.swipe_id = Some(index);
    store
        .message_update(&m, None)
        .map_err(|e| store_error("saving the message", e))?;
    message_in_chat(store, chat, id)
}

/// Deletes a message of `chat`; later messages move up one floor.
pub fn delete_message(store: &Store, chat: ChatId, id: MessageId) -> Result<(), ToolError> {
    message_in_chat(store, chat, id)?;
    if !store
        .message_delete(id)
        .map_err(|e| store_error("deleting the message", e))?
    {
        return Err(missing("message", id.0));
    }
    Ok(())
}
