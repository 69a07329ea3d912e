//! `tavo_input_send` on `tavo serve`: the composer sent as the user would send it. With the
//! chat open in the app, the page sends it (`input.send` over `/api/pages/events`), so the
//! plugins' `input:beforeSend` hooks run with `source: "mcp"` and may rewrite or cancel it, as
//! Tavo's MCP server does. Without a page, the server sends it through the engine's one send
//! (`tavo_engine::send`): the text (or the saved draft, then cleared) becomes the user's
//! message and a reply starts, or `/imagine <prompt>` makes an image.

use std::time::Duration;
use tavo_model::ChatId;

use serde_json::{Value, json};
use tavo_engine::EngineError;
use tavo_engine::pages::PageError;
use tavo_engine::send::{Outgoing, input_answer};
use tavo_tools::mcp::InputSend;
use tavo_tools::operation::BoxFuture;
use tavo_tools::{ErrorCode, ToolError};

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
    fn send(&self, chat: ChatId, text: Option<String>) -> BoxFuture<Result<Value, ToolError>> {
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
            // The engine's one send (the draft when no text, `/imagine`, the empty-send
            // refusal), as every other composer door.
            let out = Outgoing {
                chat,
                text,
                image: None,
                connection: None,
                speaker: None,
            };
            let sent = state.replies.send(out).await.map_err(engine_error)?;
            Ok(input_answer(&sent, "server"))
        })
    }
}
