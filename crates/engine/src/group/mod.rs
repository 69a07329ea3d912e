//! Group replies (Tavo §12): which members answer one reply, in which order.
//!
//! A reply in a group chat is one reply with one or more *turns*; each turn is one member's
//! answer in its own assistant message (see `task.rs`). [`plan`] decides the turns before the
//! first one starts:
//!
//! - an explicit speaker (`tavo reply --speaker`, Tavo's quick group speech) answers alone,
//!   muted or not;
//! - continuing or swiping a message keeps that message's speaker; regenerating keeps the
//!   speaker of the message it replaces;
//! - otherwise the chat's [`ReplyMode`]:
//!   - `natural`: the members the newest user message mentions by name answer, in mention
//!     order; when it mentions nobody (or the newest message is not the user's), one unmuted
//!     member drawn with the reply's seed — not the member who spoke last, when another can;
//!   - `all`: every unmuted member, in member order;
//!   - `designated`: only the members the newest user message addresses as `@name`; nobody
//!     addressed means nobody answers (a `warning` event says so);
//!   - `contextual`: a speaker-selection request — the `group.speakerPrompt` setting
//!     ([`DEFAULT_PROMPT`]) on the `group.speakerConnection` connection, else the reply's —
//!     answers names; a failed request or an answer naming nobody falls back to `natural`
//!     (with a warning).
//!
//! Muted members never answer unless chosen explicitly.

pub mod select;

use std::sync::Arc;

use tavo_llm::connection::SETTINGS_KEY;
use tavo_llm::{ChatRequest, ConnectionBook, Endpoint, Message as LlmMessage, Parameters, Role};
use tavo_model::{Character, CharacterId, ChatId, ReplyMode};
use tavo_store::Store;
use tavo_tools::GenerationKind;

use crate::EngineError;
use crate::control::Control;
use crate::engine::Inner;
use crate::offload::{PoolError, on_blocking_pool};
use select::Member;

/// The setting naming the connection speaker selection uses (unset: the reply's connection).
pub const CONNECTION_SETTING: &str = "group.speakerConnection";
/// The setting holding the speaker-selection prompt (unset: [`DEFAULT_PROMPT`]).
pub const PROMPT_SETTING: &str = "group.speakerPrompt";
/// Messages of the conversation the selection request shows.
pub const SELECTION_WINDOW: u64 = 20;

/// The speaker-selection prompt used when `group.speakerPrompt` is not set. Placeholders:
/// `{{group}}` (every member), `{{groupNotMuted}}` (those who may answer), `{{user}}`, and
/// `{{messages}}` (the recent conversation, `Name: text` lines; appended when the prompt does
/// not place it).
pub const DEFAULT_PROMPT: &str = "This is a group chat between {{user}} and {{group}}.\n\
Conversation so far:\n{{messages}}\n\n\
Which of these characters should reply next: {{groupNotMuted}}?\n\
Answer with only their names, comma-separated if several, in the order they should speak. \
Do not write anything else.";

/// Who a reply was asked to have speak, and whose message it continues, swipes or
/// regenerates.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Speakers {
    /// Chosen explicitly (`--speaker`).
    pub chosen: Option<CharacterId>,
    /// The speaker of the message a regeneration replaced.
    pub kept: Option<CharacterId>,
}

/// The turns of one reply.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Plan {
    /// The speakers, in order; `None` lets the prompt pick (a 1:1 chat).
    pub turns: Vec<Option<CharacterId>>,
    /// The chat is a group chat.
    pub group: bool,
    /// The reply answers no new user message (the newest message is a character's): Tavo's
    /// `othersContinuation` source for plugin hooks.
    pub without_user: bool,
    /// Said as `warning` events before the first turn.
    pub warnings: Vec<String>,
}

/// What the plan needs to know about the reply.
#[derive(Debug, Clone)]
pub(crate) struct Ask {
    pub chat: ChatId,
    pub kind: GenerationKind,
    /// Chosen explicitly.
    pub speaker: Option<CharacterId>,
    /// The speaker of the message the reply continues, swipes or regenerates.
    pub keep: Option<CharacterId>,
    /// The reply's own connection, for the selection request.
    pub endpoint: Endpoint,
    pub model: String,
    pub parameters: Parameters,
}

/// Why no plan came out.
pub(crate) enum PlanStop {
    Cancelled,
    Failed(EngineError),
}

/// The chat as the plan reads it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Roster {
    pub members: Vec<Member>,
    pub mode: ReplyMode,
    /// The newest message's text, when it is the user's.
    pub user_text: Option<String>,
    /// The member who spoke last.
    pub last_speaker: Option<CharacterId>,
    /// The reply's seed (as the prompt build's: chat and message count).
    pub seed: u64,
    pub user_name: String,
    /// The recent conversation, `Name: text`.
    pub transcript: Vec<String>,
}

impl Roster {
    fn unmuted(&self) -> impl Iterator<Item = (usize, &Member)> {
        self.members.iter().enumerate().filter(|(_, m)| !m.muted)
    }

    /// Members that may answer, by index, muted ones dropped (with a warning for each).
    fn allowed(&self, picked: Vec<usize>, warnings: &mut Vec<String>) -> Vec<CharacterId> {
        picked
            .into_iter()
            .filter(|i| {
                let m = &self.members[*i];
                if m.muted {
                    warnings.push(format!(
                        "{} is muted in this chat and does not answer (unmute them, or choose them with --speaker)",
                        m.name
                    ));
                }
                !m.muted
            })
            .map(|i| self.members[i].id)
            .collect()
    }

    /// `natural`: the mentioned unmuted members, else one drawn with the seed.
    pub fn natural(&self, warnings: &mut Vec<String>) -> Vec<CharacterId> {
        if let Some(text) = &self.user_text {
            let picked = self.allowed(select::mentioned(text, &self.members), warnings);
            if !picked.is_empty() {
                return picked;
            }
        }
        let mut pool: Vec<CharacterId> = self.unmuted().map(|(_, m)| m.id).collect();
        if pool.len() > 1 {
            pool.retain(|id| Some(*id) != self.last_speaker);
        }
        if pool.is_empty() {
            warnings.push("every member of this group chat is muted; nobody answers".into());
            return Vec::new();
        }
        vec![pool[select::draw(self.seed, pool.len())]]
    }

    /// `all`: every unmuted member in member order.
    pub fn all(&self, warnings: &mut Vec<String>) -> Vec<CharacterId> {
        let all: Vec<CharacterId> = self.unmuted().map(|(_, m)| m.id).collect();
        if all.is_empty() {
            warnings.push("every member of this group chat is muted; nobody answers".into());
        }
        all
    }

    /// `designated`: the members addressed as `@name`.
    pub fn designated(&self, warnings: &mut Vec<String>) -> Vec<CharacterId> {
        let picked = self
            .user_text
            .as_deref()
            .map(|t| select::addressed(t, &self.members))
            .unwrap_or_default();
        if picked.is_empty() {
            let names: Vec<String> = self
                .unmuted()
                .map(|(_, m)| format!("@{}", m.name))
                .collect();
            warnings.push(format!(
                "designated-speaker mode: nobody was addressed, so nobody answers; write @name ({}) or choose a speaker",
                names.join(", ")
            ));
            return Vec::new();
        }
        self.allowed(picked, warnings)
    }

    /// The selection prompt with its placeholders filled.
    pub fn selection_prompt(&self, template: &str) -> String {
        let all: Vec<&str> = self.members.iter().map(|m| m.name.as_str()).collect();
        let open: Vec<&str> = self.unmuted().map(|(_, m)| m.name.as_str()).collect();
        let messages = self.transcript.join("\n");
        let mut text = template
            .replace("{{group}}", &all.join(", "))
            .replace("{{groupNotMuted}}", &open.join(", "))
            .replace("{{user}}", &self.user_name);
        // The transcript last: its text may itself contain `{{…}}`.
        if text.contains("{{messages}}") {
            text = text.replace("{{messages}}", &messages);
        } else {
            text = format!("{text}\n\nConversation:\n{messages}");
        }
        text
    }
}

/// Reads the roster of `chat` (blocking).
pub(crate) fn roster(store: &Store, chat: ChatId) -> Result<Roster, EngineError> {
    let c = store
        .chat_get(chat)?
        .ok_or(EngineError::ChatNotFound(chat))?;
    let muted = c.muted();
    let (members, user_name, recent, count) = store.read(|tx| {
        let mut members = Vec::with_capacity(c.characters.len());
        for s in &c.characters {
            let card = tx.get::<Character>(s.id)?;
            members.push(Member {
                id: s.id,
                name: card
                    .as_ref()
                    .map(|k| k.name.clone())
                    .unwrap_or(s.name.clone()),
                nickname: card
                    .and_then(|k| k.nickname)
                    .filter(|n| !n.trim().is_empty()),
                muted: muted.contains(&s.id),
            });
        }
        let persona = tx.chat_persona(&c)?;
        let user = persona
            .map(|p| p.name)
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "User".to_owned());
        Ok((
            members,
            user,
            tx.messages_last(chat, SELECTION_WINDOW)?,
            tx.message_count(chat)?,
        ))
    })?;
    let visible: Vec<&tavo_model::Message> = recent.iter().filter(|m| !m.hidden).collect();
    let user_text = visible
        .last()
        .filter(|m| m.role == tavo_model::Role::User)
        .map(|m| m.content.clone());
    let last_speaker = visible
        .iter()
        .rev()
        .filter(|m| m.role == tavo_model::Role::Assistant)
        .find_map(|m| m.character_id);
    let transcript = visible
        .iter()
        .filter(|m| !m.content.trim().is_empty())
        .map(|m| {
            let name = match m.role {
                tavo_model::Role::User => user_name.clone(),
                tavo_model::Role::System => "System".to_owned(),
                tavo_model::Role::Assistant => m
                    .character_id
                    .and_then(|id| members.iter().find(|k| k.id == id))
                    .map(|k| k.name.clone())
                    .or_else(|| m.name.clone())
                    .unwrap_or_else(|| "Character".to_owned()),
            };
            format!("{name}: {}", m.content.trim())
        })
        .collect();
    Ok(Roster {
        members,
        mode: c.reply_mode,
        user_text,
        last_speaker,
        seed: crate::prompt::reply_seed(chat, count as usize),
        user_name,
        transcript,
    })
}

/// The first speaker a normal reply in `chat` would have, decided without a request (blocking):
/// what `tavo prompt` previews. A contextual chat previews its natural fallback; `None` in a
/// 1:1 chat, or when nobody would answer.
pub(crate) fn preview_speaker(
    store: &Store,
    chat: ChatId,
) -> Result<Option<CharacterId>, EngineError> {
    if store.chat_get(chat)?.is_none() {
        // The build says which chat is missing.
        return Ok(None);
    }
    let roster = roster(store, chat)?;
    if roster.members.len() <= 1 {
        return Ok(None);
    }
    let mut warnings = Vec::new();
    let turns = match roster.mode {
        ReplyMode::Natural | ReplyMode::Contextual => roster.natural(&mut warnings),
        ReplyMode::All => roster.all(&mut warnings),
        ReplyMode::Designated => roster.designated(&mut warnings),
    };
    Ok(turns.first().copied())
}

/// Decides the turns of a reply (see the module docs).
pub(crate) async fn plan(
    inner: &Arc<Inner>,
    control: &Control,
    ask: Ask,
) -> Result<Plan, PlanStop> {
    let chat = ask.chat;
    let roster = {
        let _permit = inner
            .gate
            .acquire()
            .await
            .map_err(|e| PlanStop::Failed(PoolError::from(e).into()))?;
        on_blocking_pool(&inner.store, move |s| roster(s, chat))
            .await
            .map_err(PlanStop::Failed)?
    };
    let group = roster.members.len() > 1;
    let mut plan = Plan {
        group,
        without_user: roster.user_text.is_none(),
        ..Plan::default()
    };
    if let Some(id) = ask.speaker {
        plan.turns = vec![Some(id)];
        return Ok(plan);
    }
    // Continuing or swiping a message keeps its speaker; regenerating keeps the replaced
    // message's, and picks anew only when it replaced none.
    let select = group
        && match ask.kind {
            GenerationKind::Normal => true,
            GenerationKind::Regenerate => ask.keep.is_none(),
            _ => false,
        };
    if !select {
        plan.turns = vec![ask.keep.filter(|_| group)];
        return Ok(plan);
    }
    let mut warnings = Vec::new();
    let turns = match roster.mode {
        ReplyMode::Natural => roster.natural(&mut warnings),
        ReplyMode::All => roster.all(&mut warnings),
        ReplyMode::Designated => roster.designated(&mut warnings),
        ReplyMode::Contextual => match contextual(inner, control, &ask, &roster).await? {
            Ok(picked) => roster.allowed(picked, &mut warnings),
            Err(why) => {
                warnings.push(format!(
                    "contextual speaker selection {why}; natural mode picks the speaker instead"
                ));
                roster.natural(&mut warnings)
            }
        },
    };
    plan.turns = turns.into_iter().map(Some).collect();
    plan.warnings = warnings;
    Ok(plan)
}

/// Why the speaker-selection request gave no usable answer (natural mode picks instead, and
/// a warning says this).
#[derive(Debug, thiserror::Error)]
enum NoPick {
    #[error("could not use its connection ({0})")]
    Connection(EngineError),
    #[error("failed ({0})")]
    Failed(String),
    #[error("named no member ({0:?})")]
    NamedNoMember(String),
}

/// The speaker-selection request; `Ok(Err(why))` when it gave no usable answer.
async fn contextual(
    inner: &Arc<Inner>,
    control: &Control,
    ask: &Ask,
    roster: &Roster,
) -> Result<Result<Vec<usize>, NoPick>, PlanStop> {
    let store = inner.store.clone();
    let own = (
        ask.endpoint.clone(),
        ask.model.clone(),
        ask.parameters.clone(),
    );
    let chat = ask.chat;
    let settings = on_blocking_pool(&store, move |s| -> Result<_, EngineError> {
        let prompt = s
            .setting_get(PROMPT_SETTING)?
            .and_then(|v| v.as_str().map(str::to_owned))
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_PROMPT.to_owned());
        // A prompt field of the chat: EJS and macros first; `{{messages}}` and the roster's
        // placeholders are filled after (the transcript is never expanded).
        let ejs = crate::prompt::ejs_enabled(s)?;
        let prompt = crate::display::DisplayContext::load(s, chat)?.expand_template(
            &prompt,
            chat.get() as u64,
            ejs,
        );
        let named = s
            .setting_get(CONNECTION_SETTING)?
            .and_then(|v| v.as_str().map(str::to_owned))
            .filter(|t| !t.trim().is_empty());
        let connection = match named {
            None => own,
            Some(name) => {
                let book = ConnectionBook::from_setting(s.setting_get(SETTINGS_KEY)?)?;
                let conn = book.pick(Some(&name))?.clone();
                let parameters = book.effective_parameters(&conn);
                let endpoint = conn.endpoint()?;
                (endpoint, conn.model.clone(), parameters)
            }
        };
        Ok((prompt, connection))
    })
    .await;
    let (template, (endpoint, model, parameters)) = match settings {
        Ok(s) => s,
        Err(e) => return Ok(Err(NoPick::Connection(e))),
    };
    let mut request = ChatRequest::new(
        model,
        vec![LlmMessage::text(
            Role::User,
            roster.selection_prompt(&template),
        )],
    );
    parameters.apply(&mut request);
    let answered = tokio::select! {
        r = inner.client.complete(&endpoint, &request) => r,
        () = control.cancelled() => return Err(PlanStop::Cancelled),
    };
    let response = match answered {
        Ok(r) => r,
        Err(e) => return Ok(Err(NoPick::Failed(e.message))),
    };
    if let Some((_, message)) = &response.error {
        return Ok(Err(NoPick::Failed(message.clone())));
    }
    let answer = response.text();
    let picked = select::parse_selection(&answer, &roster.members);
    if picked.is_empty() {
        let shown: String = answer.chars().take(80).collect();
        return Ok(Err(NoPick::NamedNoMember(shown)));
    }
    Ok(Ok(picked))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roster(mode: ReplyMode, text: Option<&str>, muted: &[i64]) -> Roster {
        Roster {
            members: ["Ann", "Bo", "Cy"]
                .iter()
                .enumerate()
                .map(|(i, n)| Member {
                    id: CharacterId(i as i64 + 1),
                    name: (*n).to_owned(),
                    nickname: None,
                    muted: muted.contains(&(i as i64 + 1)),
                })
                .collect(),
            mode,
            user_text: text.map(str::to_owned),
            last_speaker: Some(CharacterId(1)),
            seed: 3,
            user_name: "Me".into(),
            transcript: vec!["Me: hi".into()],
        }
    }

    fn ids(v: Vec<CharacterId>) -> Vec<i64> {
        v.into_iter().map(|c| c.0).collect()
    }

    #[test]
    fn natural_answers_mentions_then_one_drawn_member_not_the_last_speaker() {
        let mut w = Vec::new();
        let r = roster(ReplyMode::Natural, Some("Cy and bo?"), &[]);
        assert_eq!(ids(r.natural(&mut w)), [3, 2]);
        let r = roster(ReplyMode::Natural, Some("hello"), &[]);
        let one = ids(r.natural(&mut w));
        assert_eq!(one.len(), 1);
        assert_ne!(
            one[0], 1,
            "the last speaker is not drawn while others can answer"
        );
        assert_eq!(one, ids(r.natural(&mut w)), "the seed pins the draw");
        let r = roster(ReplyMode::Natural, Some("Cy?"), &[3]);
        let one = ids(r.natural(&mut w));
        assert!(one.len() == 1 && one[0] != 3, "a muted mention falls back");
        assert!(w.iter().any(|m| m.contains("Cy is muted")), "{w:?}");
    }

    #[test]
    fn all_skips_the_muted_and_designated_needs_an_address() {
        let mut w = Vec::new();
        assert_eq!(ids(roster(ReplyMode::All, None, &[2]).all(&mut w)), [1, 3]);
        assert!(w.is_empty());
        let r = roster(ReplyMode::Designated, Some("Bo, hi"), &[]);
        assert!(r.designated(&mut w).is_empty());
        assert!(w[0].contains("nobody was addressed"), "{w:?}");
        let r = roster(ReplyMode::Designated, Some("@Cy @Ann hi"), &[]);
        assert_eq!(ids(r.designated(&mut w)), [3, 1]);
    }

    #[test]
    fn the_selection_prompt_fills_its_placeholders() {
        let r = roster(ReplyMode::Contextual, None, &[2]);
        let p = r.selection_prompt(DEFAULT_PROMPT);
        assert!(p.contains("between Me and Ann, Bo, Cy"), "{p}");
        assert!(p.contains("reply next: Ann, Cy?"), "{p}");
        assert!(p.contains("Me: hi"), "{p}");
        let p = r.selection_prompt("Pick from {{group}}.");
        assert!(p.ends_with("Conversation:\nMe: hi"), "{p}");
    }
}
