//! Per-tool approval policy: allow / ask / deny, remembered per chat.
//!
//! Data the engine consults before running a call. The default comes from the operation's
//! write-safety: writes whose contract asks for confirmation are `ask`, everything else is
//! `allow`. A user can override any tool globally or for one chat; the chat's choice wins.

use std::collections::BTreeMap;
use tavo_model::ChatId;

use serde::{Deserialize, Serialize};
use tavo_store::Store;

use crate::ask::{Question, QuestionOption, UserAnswer};
use crate::error::ToolError;
use crate::operation::Safety;

/// Setting key under which the policy is stored.
pub const SETTING_KEY: &str = "tools.approval";

/// A user's standing choice for one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Approval {
    /// Run without asking.
    Allow,
    /// Pause the reply and ask each time.
    Ask,
    /// Never run; the call fails with `permission_denied`.
    Deny,
}

impl std::str::FromStr for Approval {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow" => Ok(Approval::Allow),
            "ask" => Ok(Approval::Ask),
            "deny" => Ok(Approval::Deny),
            other => Err(format!(
                "unknown approval {other:?}; use allow, ask or deny"
            )),
        }
    }
}

/// What the engine does with one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Run,
    /// Ask the user first (the reply waits; waiting is not counted toward the time-out).
    Confirm,
    /// Refuse with `permission_denied`.
    Refuse,
}

/// The stored policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ApprovalPolicy {
    /// Choices that apply in every chat, by tool name.
    pub tools: BTreeMap<String, Approval>,
    /// Choices remembered for one chat, by chat id then tool name.
    pub chats: BTreeMap<ChatId, BTreeMap<String, Approval>>,
}

impl ApprovalPolicy {
    /// The standing choice for `tool` in `chat`, falling back to the global one, then to the
    /// default of its write-safety.
    pub fn approval(&self, chat: Option<ChatId>, tool: &str, safety: Safety) -> Approval {
        chat.and_then(|c| self.chats.get(&c))
            .and_then(|m| m.get(tool))
            .or_else(|| self.tools.get(tool))
            .copied()
            .unwrap_or(match safety {
                Safety::Confirm => Approval::Ask,
                Safety::Read | Safety::Write => Approval::Allow,
            })
    }

    /// What to do with a call.
    pub fn decide(&self, chat: Option<ChatId>, tool: &str, safety: Safety) -> Decision {
        match self.approval(chat, tool, safety) {
            Approval::Allow => Decision::Run,
            Approval::Ask => Decision::Confirm,
            Approval::Deny => Decision::Refuse,
        }
    }

    /// Remembers a choice for one chat (`Some`) or everywhere (`None`).
    pub fn remember(&mut self, chat: Option<ChatId>, tool: &str, approval: Approval) {
        match chat {
            Some(c) => {
                self.chats
                    .entry(c)
                    .or_default()
                    .insert(tool.to_owned(), approval);
            }
            None => {
                self.tools.insert(tool.to_owned(), approval);
            }
        }
    }

    /// Forgets every choice made for a chat (the chat was deleted).
    pub fn forget_chat(&mut self, chat: ChatId) {
        self.chats.remove(&chat);
    }

    /// Loads the policy from the settings store (empty when never saved). A stored policy
    /// that cannot be read is an error, never the defaults: the policy fails closed, so a
    /// `deny` the user chose is not lost to a read failure or a damaged value.
    pub fn load(store: &Store) -> Result<Self, PolicyError> {
        match store.setting_get(SETTING_KEY)? {
            None => Ok(Self::default()),
            Some(value) => serde_json::from_value(value).map_err(PolicyError::Malformed),
        }
    }

    /// Saves the policy to the settings store.
    pub fn save(&self, store: &Store) -> Result<(), tavo_store::StoreError> {
        let value = serde_json::to_value(self).unwrap_or_default();
        store.setting_set(SETTING_KEY, &value)
    }
}

/// Why the approval policy could not be read. A call that needs the policy is refused then
/// ([`unreadable`]): running it under the defaults could run what the user denied.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The settings could not be read.
    #[error(transparent)]
    Store(#[from] tavo_store::StoreError),
    /// The stored `tools.approval` is not a policy (edited by hand, or damaged).
    #[error("the stored {SETTING_KEY} is not an approval policy: {0}")]
    Malformed(serde_json::Error),
}

/// The error of a call refused because the policy could not be read.
pub fn unreadable(tool: &str, err: &PolicyError) -> ToolError {
    ToolError::new(
        crate::error::ErrorCode::InternalError,
        format!(
            "{tool} was not run: the approval policy cannot be read ({err}), and a call is \
             never run without it; reset the policy (DELETE /api/approvals drops every standing \
             choice), set your choices again, then retry"
        ),
    )
    .with_details(serde_json::json!({ "setting": SETTING_KEY }))
}

/// Answer values of a [`confirmation`] question.
pub const ALLOW_ONCE: &str = "allow";
/// Allow now and remember `allow` for this tool in this chat.
pub const ALLOW_IN_CHAT: &str = "allowInChat";
/// Refuse this call.
pub const DENY: &str = "deny";

/// The question the engine shows before a call whose decision is [`Decision::Confirm`]. The
/// summary should be short and user-facing (what will change), never raw secrets.
pub fn confirmation(tool: &str, summary: &str) -> Question {
    let option = |value: &str, label: &str| QuestionOption {
        value: value.to_owned(),
        label: label.to_owned(),
        description: None,
        meta: None,
    };
    Question {
        question: format!("Allow {tool}? {summary}"),
        options: vec![
            option(ALLOW_ONCE, "Allow once"),
            option(ALLOW_IN_CHAT, "Always allow in this chat"),
            option(DENY, "Deny"),
        ],
        allow_other: false,
        default_value: None,
        placeholder: None,
    }
}

/// Applies the user's answer to a [`confirmation`]: remembers "always allow in this chat" in
/// `policy` and returns whether the call may run. Anything but an allow (cancel included)
/// refuses it.
pub fn confirm(
    policy: &mut ApprovalPolicy,
    chat: Option<ChatId>,
    tool: &str,
    answer: &UserAnswer,
) -> bool {
    match answer {
        UserAnswer::Option { value } if value == ALLOW_ONCE => true,
        UserAnswer::Option { value } if value == ALLOW_IN_CHAT => {
            policy.remember(chat, tool, Approval::Allow);
            true
        }
        _ => false,
    }
}

/// The error of a refused call.
pub fn refused(tool: &str) -> ToolError {
    ToolError::denied(format!(
        "the user does not allow {tool} here; do not retry it, continue without it or ask the user"
    ))
}

/// The error of a confirmation the user declined.
pub fn declined(tool: &str) -> ToolError {
    ToolError::denied(format!(
        "the user declined this {tool} call; do not repeat it unless the user asks"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_write_safety_and_chat_choices_win() {
        let mut p = ApprovalPolicy::default();
        assert_eq!(
            p.decide(Some(ChatId(1)), "tavo_character_delete", Safety::Confirm),
            Decision::Confirm
        );
        assert_eq!(
            p.decide(Some(ChatId(1)), "tavo_file_save", Safety::Write),
            Decision::Run
        );
        p.remember(None, "tavo_file_save", Approval::Ask);
        p.remember(Some(ChatId(1)), "tavo_file_save", Approval::Deny);
        assert_eq!(
            p.decide(Some(ChatId(1)), "tavo_file_save", Safety::Write),
            Decision::Refuse
        );
        assert_eq!(
            p.decide(Some(ChatId(2)), "tavo_file_save", Safety::Write),
            Decision::Confirm
        );
        p.forget_chat(ChatId(1));
        assert_eq!(
            p.decide(Some(ChatId(1)), "tavo_file_save", Safety::Write),
            Decision::Confirm
        );
    }

    #[test]
    fn confirmation_answers() {
        let mut p = ApprovalPolicy::default();
        let q = confirmation("tavo_character_delete", "Delete character 12 (Alice).");
        assert!(!q.allow_other);
        assert!(confirm(
            &mut p,
            Some(ChatId(3)),
            "tavo_character_delete",
            &UserAnswer::Option {
                value: ALLOW_ONCE.into()
            }
        ));
        assert_eq!(
            p.decide(Some(ChatId(3)), "tavo_character_delete", Safety::Confirm),
            Decision::Confirm
        );
        assert!(confirm(
            &mut p,
            Some(ChatId(3)),
            "tavo_character_delete",
            &UserAnswer::Option {
                value: ALLOW_IN_CHAT.into()
            }
        ));
        assert_eq!(
            p.decide(Some(ChatId(3)), "tavo_character_delete", Safety::Confirm),
            Decision::Run
        );
        assert!(!confirm(
            &mut p,
            Some(ChatId(4)),
            "x",
            &UserAnswer::Option { value: DENY.into() }
        ));
        assert!(!confirm(
            &mut p,
            Some(ChatId(4)),
            "x",
            &UserAnswer::Cancelled
        ));
    }

    #[test]
    fn policy_round_trips_through_json() {
        let mut p = ApprovalPolicy::default();
        p.remember(Some(ChatId(7)), "tavo_theme_delete", Approval::Allow);
        let v = serde_json::to_value(&p).unwrap_or_default();
        assert_eq!(
            v["chats"]["7"]["tavo_theme_delete"],
            serde_json::json!("allow")
        );
        let back: ApprovalPolicy = serde_json::from_value(v).unwrap_or_default();
        assert_eq!(back, p);
        // A policy saved before chat ids were typed (string keys in the stored text) loads.
        let stored = r#"{"chats":{"12":{"tavo_chat_delete":"deny"}}}"#;
        let old: ApprovalPolicy = serde_json::from_str(stored).unwrap_or_default();
        assert_eq!(
            old.decide(Some(ChatId(12)), "tavo_chat_delete", Safety::Confirm),
            Decision::Refuse
        );
    }
}
