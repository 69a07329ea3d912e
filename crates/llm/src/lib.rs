//! The canonical LLM conversation model, one codec per provider protocol, SSE transport,
//! retries, error mapping, the provider catalogue and connections.
//!
//! This crate knows nothing of chats or characters. Its contract with the rest of tavo:
//!
//! - [`ChatRequest`]: messages of [`Part`]s (text, image, reasoning, tool call, tool result),
//!   tool declarations, sampling, reasoning settings, provider extras;
//! - [`StreamEvent`]: the one stream every protocol decodes to;
//! - [`Native`]: provider blocks (signatures, encrypted reasoning) replayed verbatim to their
//!   own protocol and dropped, with a warning, for any other;
//! - [`Client::send`]: the same bytes for every retry, retries only before output.
//!
//! Map: [`codec`] (one module per protocol), [`sse`] (incremental SSE reader), [`schema`]
//! (tool-schema adaptation), [`reasoning`] (interleaved reasoning modes), [`error`] (typed
//! provider errors), [`retry`] and [`transport`] (HTTP), [`connection`] and [`catalogue`].

pub mod catalogue;
pub mod codec;
pub mod connection;
pub mod error;
pub mod event;
pub mod media;
pub mod protocol;
pub mod reasoning;
pub mod request;
pub mod response;
pub mod retry;
pub mod schema;
pub mod sse;
pub mod transport;

pub use codec::{Encoded, decode_body, decode_stream, encode};
pub use connection::{Connection, ConnectionBook, Parameters};
pub use error::{ErrorKind, LlmError};
pub use event::{FinishReason, StreamEvent, Usage};
pub use protocol::Protocol;
pub use reasoning::InterleavedReasoning;
pub use request::{ChatRequest, ImageSource, Message, Native, Part, Role, ToolChoice, ToolDecl};
pub use response::{ChatResponse, ReplyBuilder};
pub use transport::{Client, Endpoint, EventStream, Timeouts};
