//! Browser pages attached to the engine: the function tools their code registers
//! (SillyTavern's `registerFunctionTool`, seed 001) and the requests the engine sends them.
//!
//! A reply runs in the server, but a page tool's `action` runs in the page that registered it.
//! A page attaches ([`Pages::attach`]) and gets a stream of [`PageRequest`]s (the server sends
//! them as SSE events); it answers each by id ([`Pages::answer`], a POST back). The engine waits
//! for the answer while the page is attached: when it detaches — the tab closes, the event
//! stream drops — every call it had open fails at once with a clear error instead of waiting
//! for the time-out, and its tools leave the registry.
//!
//! The engine knows no HTTP here: only ids, requests and answers. The server's
//! `/api/pages/*` routes are the door.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tavo_model::ChatId;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tavo_tools::extension::{ExtensionRegistry, ExtensionSource, ExtensionTool};
use tavo_tools::operation::BoxFuture;
use tavo_tools::{ErrorCode, ExtensionRunner, ToolError};
use tokio::sync::{mpsc, oneshot};

pub use tavo_tools::extension::PAGE_TOOL_TIMEOUT;

/// Most tools one page may register.
pub const MAX_TOOLS_PER_PAGE: usize = 128;

/// A request to a page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageRequest {
    /// Answer with this id.
    pub id: String,
    /// `tool.call` (params `{name, arguments, chatId, timeoutMs}`) or `hook` (params `{type, event}`).
    pub method: String,
    /// What the method needs.
    pub params: Value,
}

/// A tool as a page registers it (seed 001's fields; `action`, `formatMessage` and
/// `shouldRegister` stay in the page, which evaluates them).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageToolSpec {
    /// Unique name, also the name the model calls.
    pub name: String,
    /// Shown in the app.
    #[serde(default)]
    pub display_name: Option<String>,
    /// Sent to the model.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
    /// Not kept in the visible history; triggers no follow-up generation.
    #[serde(default)]
    pub stealth: bool,
}

/// Why a request to a page did not get an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    /// No such page is attached.
    #[error("the page that registered this tool is no longer open")]
    Gone,
    /// The page detached before it answered.
    #[error("the page closed before it answered")]
    Closed,
    /// The page answered with an error (the message is the page's).
    #[error("{0}")]
    Failed(String),
}

struct Page {
    chat: Option<ChatId>,
    requests: mpsc::UnboundedSender<PageRequest>,
    pending: HashMap<String, oneshot::Sender<Result<Value, PageError>>>,
    /// Order of attachment, so the newest page of a chat is the one asked.
    serial: u64,
}

#[derive(Default)]
struct State {
    pages: HashMap<String, Page>,
    next: u64,
}

/// The attached pages. Clones share them.
#[derive(Clone)]
pub struct Pages {
    state: Arc<Mutex<State>>,
    registry: ExtensionRegistry,
}

impl std::fmt::Debug for Pages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pages")
            .field("attached", &self.lock().pages.len())
            .finish()
    }
}

/// An attached page: its id and the requests sent to it. Dropping it detaches the page.
pub struct PageLink {
    /// The page's id (its tools' source).
    pub id: String,
    /// Requests for the page, in order.
    pub requests: mpsc::UnboundedReceiver<PageRequest>,
    pages: Pages,
}

impl Drop for PageLink {
    fn drop(&mut self) {
        self.pages.detach(&self.id);
    }
}

impl Pages {
    /// Pages whose tools go into `registry` (the one the dispatcher searches).
    pub fn new(registry: ExtensionRegistry) -> Self {
        Self {
            state: Arc::default(),
            registry,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Attaches a page that has `chat` open (or none yet).
    pub fn attach(&self, chat: Option<ChatId>) -> PageLink {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut st = self.lock();
        st.next += 1;
        let serial = st.next;
        let id = format!("page-{serial}-{}", uuid::Uuid::new_v4().simple());
        self.registry.set_page_chat(&id, chat);
        st.pages.insert(
            id.clone(),
            Page {
                chat,
                requests: tx,
                pending: HashMap::new(),
                serial,
            },
        );
        PageLink {
            id,
            requests: rx,
            pages: self.clone(),
        }
    }

    /// Forgets a page: its open calls fail with [`PageError::Closed`], its tools are removed.
    pub fn detach(&self, id: &str) {
        let page = self.lock().pages.remove(id);
        if let Some(page) = page {
            for (_, waiter) in page.pending {
                let _ = waiter.send(Err(PageError::Closed));
            }
            let removed = self
                .registry
                .unregister_source(&ExtensionSource::Page { id: id.to_owned() });
            self.registry.forget_page(id);
            tracing::debug!(page = id, tools = removed, "page detached");
        }
    }

    /// Whether a page is attached.
    pub fn is_attached(&self, id: &str) -> bool {
        self.lock().pages.contains_key(id)
    }

    /// Records the chat a page shows now.
    pub fn set_chat(&self, id: &str, chat: Option<ChatId>) -> Result<(), PageError> {
        let mut st = self.lock();
        let page = st.pages.get_mut(id).ok_or(PageError::Gone)?;
        page.chat = chat;
        self.registry.set_page_chat(id, chat);
        Ok(())
    }

    /// The newest attached page that shows `chat`.
    pub fn page_for_chat(&self, chat: ChatId) -> Option<String> {
        let st = self.lock();
        st.pages
            .iter()
            .filter(|(_, p)| p.chat == Some(chat))
            .max_by_key(|(_, p)| p.serial)
            .map(|(id, _)| id.clone())
    }

    /// Replaces the tools a page registered with `tools` (seed 001: registering a name again
    /// replaces it; a name another page registered is taken over by this one). Answers, per
    /// tool, `null` or why it was refused; refused tools are not registered.
    pub fn set_tools(
        &self,
        id: &str,
        tools: Vec<PageToolSpec>,
    ) -> Result<Vec<(String, Option<String>)>, PageError> {
        if !self.is_attached(id) {
            return Err(PageError::Gone);
        }
        let source = ExtensionSource::Page { id: id.to_owned() };
        self.registry.unregister_source(&source);
        let mut out = Vec::with_capacity(tools.len());
        for (i, t) in tools.into_iter().enumerate() {
            if i >= MAX_TOOLS_PER_PAGE {
                out.push((
                    t.name,
                    Some(format!(
                        "a page may register at most {MAX_TOOLS_PER_PAGE} tools"
                    )),
                ));
                continue;
            }
            let r = self
                .registry
                .register(
                    &t.name,
                    t.display_name,
                    &t.description,
                    t.parameters,
                    t.stealth,
                    source.clone(),
                )
                .err()
                .map(|e| e.to_string());
            out.push((t.name, r));
        }
        Ok(out)
    }

    /// Sends `method` to page `id` and waits for its answer (no time-out here: callers bound
    /// the wait; a detach ends it).
    pub async fn request(&self, id: &str, method: &str, params: Value) -> Result<Value, PageError> {
        let (tx, rx) = oneshot::channel();
        let call = {
            let mut st = self.lock();
            st.next += 1;
            let call = format!("r{}", st.next);
            let page = st.pages.get_mut(id).ok_or(PageError::Gone)?;
            let req = PageRequest {
                id: call.clone(),
                method: method.to_owned(),
                params,
            };
            if page.requests.send(req).is_err() {
                return Err(PageError::Closed);
            }
            page.pending.insert(call.clone(), tx);
            call
        };
        // A caller that stops waiting (time-out, cancelled reply) drops this future; the guard
        // then forgets the request so a late answer finds nobody and nothing leaks.
        let _forget = Forget {
            pages: self,
            id,
            call: &call,
        };
        match rx.await {
            Ok(answer) => answer,
            Err(_) => Err(PageError::Closed),
        }
    }

    /// A page's answer to request `call`: `Ok(result)` or `PageError::Failed(its message)`.
    /// Answers nobody waits for any more (a time-out passed) are dropped; returns whether
    /// someone was waiting.
    pub fn answer(
        &self,
        id: &str,
        call: &str,
        result: Result<Value, PageError>,
    ) -> Result<bool, PageError> {
        let mut st = self.lock();
        let page = st.pages.get_mut(id).ok_or(PageError::Gone)?;
        Ok(match page.pending.remove(call) {
            Some(waiter) => waiter.send(result).is_ok(),
            None => false,
        })
    }
}

struct Forget<'a> {
    pages: &'a Pages,
    id: &'a str,
    call: &'a str,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.pages.lock().pages.get_mut(self.id) {
            p.pending.remove(self.call);
        }
    }
}

impl ExtensionRunner for Pages {
    fn run(
        &self,
        tool: &ExtensionTool,
        chat: ChatId,
        arguments: Value,
        timeout: std::time::Duration,
    ) -> BoxFuture<Result<Value, ToolError>> {
        let pages = self.clone();
        let tool = tool.clone();
        Box::pin(async move {
            let ExtensionSource::Page { id } = &tool.source else {
                return Err(ToolError::internal("running the page tool"));
            };
            if !pages.registry.belongs_to(&tool, Some(chat)) {
                return Err(ToolError::new(
                    ErrorCode::Unavailable,
                    format!(
                        "{}: the page that registered it shows another chat now; answer without it",
                        tool.name
                    ),
                ));
            }
            // The page bounds the frame's answer by the same time-out (seed 001:
            // tools.pageCallTimeoutSeconds), not a cap of its own.
            let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
            let params = json!({"name": tool.name, "arguments": arguments, "chatId": chat, "timeoutMs": timeout_ms});
            let answer = pages.request(id, "tool.call", params).await;
            match answer {
                // Seed 001: `action` returns a string; anything else is JSON-serialised.
                Ok(Value::String(s)) => Ok(Value::String(s)),
                Ok(Value::Null) => Ok(Value::String(String::new())),
                Ok(other) => Ok(Value::String(other.to_string())),
                Err(PageError::Failed(message)) => Err(ToolError::new(
                    ErrorCode::InternalError,
                    format!("{} failed in the page: {message}", tool.name),
                )),
                Err(e) => Err(ToolError::new(
                    ErrorCode::Unavailable,
                    format!(
                        "{}: {e}; answer without it or ask the user to reopen the chat",
                        tool.name
                    ),
                )),
            }
        })
    }
}

/// Runs extension tools by who registered them: pages, or outside MCP servers.
pub struct Extensions {
    /// Page tools.
    pub pages: Pages,
    /// MCP server tools.
    pub servers: crate::mcp_servers::McpServers,
}

impl ExtensionRunner for Extensions {
    fn run(
        &self,
        tool: &ExtensionTool,
        chat: ChatId,
        arguments: Value,
        timeout: std::time::Duration,
    ) -> BoxFuture<Result<Value, ToolError>> {
        match tool.source {
            ExtensionSource::Page { .. } => self.pages.run(tool, chat, arguments, timeout),
            ExtensionSource::Mcp { .. } => self.servers.run(tool, chat, arguments, timeout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> PageToolSpec {
        PageToolSpec {
            name: name.into(),
            display_name: None,
            description: "d".into(),
            parameters: json!({"type": "object"}),
            stealth: false,
        }
    }

    #[tokio::test]
    async fn a_call_is_answered_by_its_page_and_fails_when_the_page_closes() {
        let reg = ExtensionRegistry::default();
        let pages = Pages::new(reg.clone());
        let mut link = pages.attach(Some(ChatId(7)));
        assert_eq!(
            pages.page_for_chat(ChatId(7)).as_deref(),
            Some(link.id.as_str())
        );
        let r = pages
            .set_tools(&link.id, vec![spec("roll"), spec("tavo_x")])
            .unwrap();
        assert!(r[0].1.is_none() && r[1].1.is_some());
        let tool = reg.get("roll").unwrap();
        let call = tokio::spawn({
            let pages = pages.clone();
            let tool = tool.clone();
            async move {
                pages
                    .run(&tool, ChatId(7), json!({"sides": 6}), PAGE_TOOL_TIMEOUT)
                    .await
            }
        });
        let req = link.requests.recv().await.unwrap();
        assert_eq!(
            (
                req.method.as_str(),
                req.params["arguments"]["sides"].clone()
            ),
            ("tool.call", json!(6))
        );
        pages
            .answer(&link.id, &req.id, Ok(json!({"n": 4})))
            .unwrap();
        assert_eq!(call.await.unwrap().unwrap(), json!("{\"n\":4}"));

        let call = tokio::spawn({
            let pages = pages.clone();
            async move {
                pages
                    .run(&tool, ChatId(7), json!({}), PAGE_TOOL_TIMEOUT)
                    .await
            }
        });
        let _ = link.requests.recv().await.unwrap();
        drop(link);
        let err = call.await.unwrap().unwrap_err();
        assert_eq!(err.code, ErrorCode::Unavailable);
        assert!(err.message.contains("closed"), "{}", err.message);
        assert!(reg.get("roll").is_none());
        assert!(pages.page_for_chat(ChatId(7)).is_none());
    }
}
