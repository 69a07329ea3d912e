//! What a paused reply waits for, and how the user answers.
//!
//! Two things pause a reply: a `tavo_ask_user` question, and a call the approval policy wants
//! confirmed (a write whose contract asks for it, or any tool set to `ask`). Either way the
//! reply's status becomes `waiting`, the time spent waiting never counts toward the call's
//! time-out, and the reply goes on once the user answers, denies or cancels.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tavo_tools::{Question, Safety, UserAnswer};

/// What the user is asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "interaction", rename_all = "camelCase")]
pub enum Interaction {
    /// `tavo_ask_user` (or an operation that needs a decision, such as overwrite-or-copy).
    #[serde(rename_all = "camelCase")]
    Question {
        /// The tool call that asks, so the answer goes back to it.
        call_id: String,
        /// The tool that asks (`tavo_ask_user`, or the operation that needs the decision).
        tool: String,
        /// The question: its text, its options, and whether custom text is allowed.
        question: Question,
    },
    /// A call waits for permission to run. `arguments` are shown to the user so they know what
    /// they allow; they stay out of the chat message (privacy) and go to the audit log.
    #[serde(rename_all = "camelCase")]
    Confirmation {
        /// The tool call that waits.
        call_id: String,
        /// The tool it would run.
        tool: String,
        /// The tool's safety class (read, write or confirm), so the page can say what kind of
        /// change it allows.
        safety: Safety,
        /// The call's arguments as the model gave them.
        arguments: Value,
    },
}

impl Interaction {
    /// The tool call this interaction belongs to.
    pub fn call_id(&self) -> &str {
        match self {
            Interaction::Question { call_id, .. } | Interaction::Confirmation { call_id, .. } => {
                call_id
            }
        }
    }
}

/// The user's answer to a pending interaction. Cancelling the whole reply is
/// [`crate::ReplyHandle::cancel`], not an answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "camelCase")]
pub enum Response {
    /// The answer to a question (an option, custom text, or closing the question, which the
    /// model receives as `{"status":"cancelled"}`).
    Answer {
        /// The user's choice, custom text, or dismissal.
        answer: UserAnswer,
    },
    /// Allow the confirmed call; `remember` keeps "allow" for this tool in this chat.
    Approve {
        /// Whether to keep "allow" for this tool in this chat, so later calls run without
        /// asking. Off unless sent.
        #[serde(default)]
        remember: bool,
    },
    /// Refuse the confirmed call (`permission_denied` for the model); `remember` keeps "deny"
    /// for this tool in this chat.
    Deny {
        /// Whether to keep "deny" for this tool in this chat, so later calls are refused
        /// without asking. Off unless sent.
        #[serde(default)]
        remember: bool,
    },
}

/// Why an answer was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RespondError {
    /// Nothing waits under that id (already answered, or a stale id).
    #[error(
        "the reply is not waiting for interaction {0}; it was answered already or never existed"
    )]
    NotPending(u64),
    /// A question got an approval, or a confirmation got an answer.
    #[error("interaction {0} is a {1}; answer it with {2}")]
    WrongKind(u64, &'static str, &'static str),
    /// The answer is not one the question allows; the reply keeps waiting.
    #[error("{0}")]
    Invalid(String),
    /// The reply has ended.
    #[error("the reply has ended")]
    Ended,
}
