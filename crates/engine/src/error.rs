//! Why a reply could not start, or its library work failed.

use tavo_llm::connection::ConnectionError;
use tavo_prompt::loader::LoadError;
use tavo_store::StoreError;

/// A reply that cannot start (failures after the start end the reply with status `failed` and
/// an `error` event carrying this error's text instead).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("chat {0} not found (see `tavo list chats`)")]
    ChatNotFound(i64),
    #[error(
        "chat {0} already has a reply running ({1}); wait for it, answer it, or cancel it first"
    )]
    Busy(i64, String),
    /// The chat's claim in the library belongs to a reply of a process that still runs (another
    /// `tavo`, `tavo serve`, or another engine of this process).
    #[error(
        "chat {chat} already has a reply running in another tavo process ({reply}, pid {pid}); \
         wait for it, or answer or cancel it there"
    )]
    BusyElsewhere {
        /// The chat.
        chat: i64,
        /// The live reply's id.
        reply: String,
        /// The process that runs it.
        pid: u32,
    },
    #[error("there is no reply with id {0}")]
    NoSuchReply(String),
    #[error("{0}: the chat's last message must be a character's message")]
    NothingToContinue(&'static str),
    #[error("a normal reply needs the user's message; pass the text to send")]
    NoMessage,
    #[error("a speaker can be chosen for normal and regenerate replies only")]
    SpeakerKind,
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Prompt(#[from] LoadError),
    /// A library operation refused (storing the user's message: a bad speaker, a missing chat).
    #[error(transparent)]
    Operation(#[from] tavo_tools::ToolError),
    #[error("the tool registry could not be built: {0}")]
    Registry(String),
    /// The provider failed the request or the stream (its message, as the provider or the
    /// transport gave it).
    #[error("{0}")]
    Provider(String),
    /// Store work off the executor failed (a panic, a shutdown).
    #[error(transparent)]
    Pool(#[from] crate::offload::PoolError),
    #[error("{0}")]
    Internal(String),
}
