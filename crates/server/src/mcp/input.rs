//! `tavo_input_send` on `tavo serve`: the composer sent as the user would send it. With the
//! chat open in the app, the page sends it (`input.send` over `/api/pages/events`), so the
//! plugins' `input:beforeSend` hooks run with `source: "mcp"` and may rewrite or cancel it, as
//! Tavo's MCP server does. Without a page, the server sends it itself: the text (or the saved
//! draft) becomes the user's message and a reply starts; a sent draft is cleared.

use std::time::Duration;

use serde_json::{Value, json};
use tavo_engine::pages::PageError;
use tavo_engine::{EngineError, ReplyRequest};
use tavo_tools::mcp::InputSend;
use tavo_tools::operation::BoxFuture;
use tavo_tools::ops::input::{read_draft, write_draft};
use tavo_tools::{ErrorCode, GenerationKind, ToolError};

use crate::state::AppState;

/// How long a page may take to run its send hooks and start the reply (handlers are bounded at
/// 5 s each on the page).
const PAGE_SEND_WAIT: Duration = Duration::from_secs(30);

/// The composer door of `/mcp`.
pub struct ServerInput {
    /// The server.
    pub state: AppState,
}

fn engine_error(e: EngineError) -> ToolError {
    let code = match e {
        EngineError::ChatNotFound(_) => ErrorCode::ResourceNotFound,
        EngineError::Busy(..) | EngineError::BusyElsewhere { .. } => ErrorCode::Conflict,
        EngineError::Operation(op) => return op,
        EngineError::NoMessage
        | EngineError::Connection(_)
        | EngineError::NothingToContinue(_)
        | EngineError::Prompt(_) => ErrorCode::InvalidArguments,
        _ => ErrorCode::InternalError,
    };
    ToolError::new(code, e.to_string())
}

impl InputSend for ServerInput {
    fn send(&self, chat: i64, text: Option<String>) -> BoxFuture<Result<Value, ToolError>> {
        let state = self.state.clone();
        Box::pin(async move {
            if let Some(page) = state.pages.page_for_chat(chat) {
                let asked = state.pages.request(
                    &page,
                    "input.send",
                    json!({"text": text, "source": "mcp", "chatId": chat}),
                );
                match tokio::time::timeout(PAGE_SEND_WAIT, asked).await {
                    Ok(Ok(answer)) => return Ok(answer),
                    Ok(Err(PageError::Failed(message))) => {
                        return Err(ToolError::new(
                            ErrorCode::InternalError,
                            format!("the app could not send: {message}"),
                        ));
                    }
                    // The page went away before it answered: nothing was sent; send here.
                    Ok(Err(PageError::Gone | PageError::Closed)) => {}
                    Err(_) => {
                        return Err(ToolError::new(
                            ErrorCode::Timeout,
                            "the app did not answer within 30 s; check the chat before sending again",
                        ));
                    }
                }
            }
            let store = state.store.clone();
            let from_draft = text.is_none();
            let text = match text {
                Some(t) => t,
                None => read_draft(&store, chat)?,
            };
            let text = text.trim().to_owned();
            if text.is_empty() {
                return Err(ToolError::invalid_at("text", "non-empty text", "string"));
            }
            let request = ReplyRequest {
                chat,
                kind: GenerationKind::Normal,
                message: Some(text),
                connection: None,
                limits: None,
                image: None,
            };
            let replies = state.replies.clone();
            let handle = state
                .off_executor(move || replies.start(request))
                .await
                .map_err(|e| ToolError::new(ErrorCode::InternalError, e.message))?
                .map_err(engine_error)?;
            if from_draft {
                let _ = write_draft(&store, chat, "");
            }
            let message = handle.user_message_id();
            if let Some(id) = message {
                state.hub.library("message", "created", Some(id));
            }
            Ok(json!({"ok": true, "messageId": message, "replyId": handle.id(), "via": "server"}))
        })
    }
}
