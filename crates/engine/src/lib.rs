//! One reply: build the prompt, stream the model, run tool calls, loop within limits, persist
//! as it goes.
//!
//! Code map:
//! - [`engine`]: [`Engine`] starts and owns replies ([`ReplyRequest`] → [`ReplyHandle`]);
//!   `builder`: [`Engine::builder`], the one way a door builds it.
//! - `task`: the loop of one reply (prompt → stream → calls → loop), checkpoints.
//! - [`toolcall`]: the gates every call goes through, in order, and the per-call time-out.
//! - [`control`]: status, cancellation and the pending interaction of a live reply.
//! - [`hub`]: the numbered, bounded event log every reader reads from; [`event`]: its events.
//! - [`persist`]: checkpoints and status records of live replies, batched off the relay path.
//! - [`interaction`]: confirmations and questions, and the user's answers.
//! - [`status`]: persisted reply status and start-up recovery.
//! - [`summary`]: compact cards kept in messages, full records sent to the audit log.
//! - [`limits`], [`settings`]: the adjustable limits and the settings catalogue.
//! - [`prompt`]: the base prompt as canonical messages, the tool-use hint.
//! - [`display`]: the display copy of messages and card text (macros, `display` regex rules).
//! - [`regex_test`]: one regex rule on a sample text, for the editor's live tester.
//! - [`memory`]: long-term memory extraction, manual and automatic after replies.
//! - [`image`]: image generation over the image connection book, `/imagine`.
//! - [`send`]: sending the user's message, the one operation behind every composer door.
//! - [`generate`]: `tavo.generate`, one generation on the chat's connection that writes nothing.
//! - [`group`]: who answers a reply in a group chat (reply modes, mutes, speaker selection).
//! - [`speech`]: text-to-speech — voice bindings and settings, synthesis, the TTS cache, playback events.

mod builder;
pub mod cluster;
pub mod connections;
mod control;
pub mod describe;
pub mod display;
mod engine;
mod error;
mod event;
pub mod generate;
pub mod group;
pub mod hooks;
mod hub;
pub mod image;
mod interaction;
mod limits;
pub mod mcp_servers;
pub mod memory;
mod offload;
pub mod pages;
mod persist;
pub mod prompt;
pub mod regex_test;
mod request;
pub mod send;
pub mod settings;
pub mod speech;
pub mod status;
mod summary;
mod task;
mod tool_history;
mod toolcall;
pub mod translate;

pub use builder::{BuiltEngine, EngineBuilder, McpStart};
pub use control::{Cancelled, Control};
pub use engine::{Engine, ReplyHandle, START_HOLD, STARTING_CONCURRENCY};
pub use error::EngineError;
pub use event::{EventKind, ReplyEvent};
pub use hub::{EventHub, Gap, Subscription};
pub use interaction::{Interaction, RespondError, Response};
pub use limits::Limits;
pub use request::{ReplyKind, ReplyRequest, UserMessage};
pub use status::{ReplyRecord, ReplyStatus, recover_interrupted};
pub use summary::{CallStatus, ToolCallSummary};
pub use task::CHECKPOINT_INTERVAL;
pub use tavo_tools::GenerationKind;
pub use toolcall::{CallOutcome, CallRunner, ExtensionRunner, ModelCall};
