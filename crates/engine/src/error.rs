//! Why a reply could not start, or its library work failed.

use tavo_llm::connection::ConnectionError;
use tavo_model::ChatId;
use tavo_prompt::loader::LoadError;
use tavo_store::StoreError;

/// A reply that cannot start (failures after the start end the reply with status `failed` and
/// an `error` event carrying this error's text instead).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The request names a chat the library does not have (deleted, or a wrong id). Pick one
    /// from `tavo list chats`.
    #[error("chat {0} not found (see `tavo list chats`)")]
    ChatNotFound(ChatId),
    /// The chat already has a live reply in this engine (the chat's id, the reply's id). A chat
    /// has at most one reply at a time, so the user waits for it, answers what it waits for, or
    /// cancels it before starting another.
    #[error(
        "chat {0} already has a reply running ({1}); wait for it, answer it, or cancel it first"
    )]
    Busy(ChatId, String),
    /// The chat's claim in the library belongs to a reply of a process that still runs (another
    /// `tavo`, `tavo serve`, or another engine of this process).
    #[error(
        "chat {chat} already has a reply running in another tavo process ({reply}, pid {pid}); \
         wait for it, or answer or cancel it there"
    )]
    BusyElsewhere {
        /// The chat.
        chat: ChatId,
        /// The live reply's id.
        reply: String,
        /// The process that runs it.
        pid: u32,
    },
    /// No reply has this id (a wrong or stale id). Doors that look a reply up by its id answer
    /// "not found" with it; starting a reply never returns it.
    #[error("there is no reply with id {0}")]
    NoSuchReply(String),
    /// A swipe or continue (the kind named) found no character message at the end of the chat
    /// to work on: the chat is empty or ends with the user's message. Send a normal reply
    /// instead.
    #[error("{0}: the chat's last message must be a character's message")]
    NothingToContinue(&'static str),
    /// A normal reply without a message in a chat with no messages: there is nothing to answer.
    /// (In a chat with history it answers the chat as it stands.)
    #[error("a normal reply needs the user's message; pass the text to send")]
    NoMessage,
    /// The reply's connection could not be used: the named one does not exist, there is no
    /// default, the book is invalid, or its key's environment variable is not set. Fix it
    /// with `tavo connection`.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// The library failed while the reply started (reading the chat or settings, storing the
    /// user's message, claiming the chat).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The chat could not be loaded to build the prompt, or the chat state the build changed
    /// (lorebook timed effects, variables) could not be recorded.
    #[error(transparent)]
    Prompt(#[from] LoadError),
    /// A library operation refused (storing the user's message: a bad speaker, a missing chat).
    #[error(transparent)]
    Operation(#[from] tavo_tools::ToolError),
    /// The tool registry the reply offers the model could not be built. The engine is given a
    /// built registry, so it does not return this today; doors treat it as an internal error,
    /// not one the user can fix.
    #[error("the tool registry could not be built: {0}")]
    Registry(String),
    /// The provider failed the request or the stream (its message, as the provider or the
    /// transport gave it).
    #[error("{0}")]
    Provider(String),
    /// Store work off the executor failed (a panic, a shutdown).
    #[error(transparent)]
    Pool(#[from] crate::offload::PoolError),
    /// Something that should not happen: the HTTP client could not be built, or the chosen
    /// speaker is no longer a member of the chat when the prompt is built. Its text says which.
    #[error("{0}")]
    Internal(String),
}
