//! Tavo's MCP server (reference §18): the MCP protocol over `tavo_tools::mcp`'s tool set and
//! resources, on the official SDK (`rmcp`). Two transports share [`TavoMcp`]:
//! - streamable HTTP at `POST /mcp` on `tavo serve` ([`http`]), behind its own switch, scope
//!   and bearer token (settings `mcp.enabled`, `mcp.scope`, `mcp.token`);
//! - stdio ([`serve_stdio`], `tavo mcp`) for desktop agents that start tavo themselves.
//!
//! Nothing here decides what a tool does: a `tools/call` is `McpTools::call`, whose handlers
//! are the operations every other door runs.

pub mod http;
pub mod input;

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use tavo_tools::mcp::{McpContext, McpTools, resources};
use tavo_tools::{Dispatcher, ErrorCode};

/// What the server tells a client at `initialize`.
const INSTRUCTIONS: &str = "tavo's library of character cards, lorebooks, regex groups, presets, personas and chats. \
Read tavo://docs/overview first. Every write takes dryRun, expectedRevision and clientRequestId (tavo://docs/write-safety).";

/// The MCP server: the tool set and the context its calls run in. Cheap to clone.
#[derive(Clone)]
pub struct TavoMcp {
    tools: Arc<McpTools>,
    cx: McpContext,
}

impl std::fmt::Debug for TavoMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TavoMcp")
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl TavoMcp {
    /// A server whose calls go through `dispatcher` (the engine's, so chat-scoped tools have
    /// the reply's services).
    pub fn new(dispatcher: Dispatcher) -> Self {
        let tools = Arc::new(McpTools::new(dispatcher.registry()));
        Self {
            tools,
            cx: McpContext::new(dispatcher),
        }
    }

    /// The same server with a composer door (`tavo_input_send`).
    pub fn with_input(mut self, input: Arc<dyn tavo_tools::mcp::InputSend>) -> Self {
        self.cx.input = Some(input);
        self
    }

    /// The tool set.
    pub fn tools(&self) -> &McpTools {
        &self.tools
    }
}

fn tool_of(t: &tavo_tools::mcp::McpTool) -> Tool {
    let schema = match &t.input_schema {
        Value::Object(m) => m.clone(),
        _ => serde_json::Map::new(),
    };
    // MCP's hints, so a client can tell reads from writes without calling: a write the seed
    // confirms first is marked destructive.
    let annotations = ToolAnnotations::new()
        .read_only(!t.writes)
        .destructive(matches!(t.safety, tavo_tools::Safety::Confirm));
    Tool::new(t.name.clone(), t.description.clone(), Arc::new(schema)).annotate(annotations)
}

/// A tool's answer as MCP content: the JSON as text (what every client shows) and, for an
/// object, as `structuredContent` too.
fn answer(value: Value) -> CallToolResult {
    let text = serde_json::to_string(&value).unwrap_or_default();
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    if value.is_object() {
        result.structured_content = Some(value);
    }
    result
}

/// A failed call: an error result the agent reads (`{code, message, details}`), as MCP asks
/// for tool failures (a protocol error is only for a call that names no tool).
fn failure(e: &tavo_tools::ToolError) -> CallToolResult {
    let body = e.to_envelope()["error"].clone();
    let mut result = CallToolResult::error(vec![ContentBlock::text(
        serde_json::to_string(&body).unwrap_or_default(),
    )]);
    result.structured_content = Some(body);
    result
}

impl ServerHandler for TavoMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("tavo", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.tools.list().map(tool_of).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        match self.tools.call(&self.cx, &request.name, arguments).await {
            Ok(value) => Ok(answer(value).into()),
            Err(e) if e.code == ErrorCode::UnknownTool => {
                Err(ErrorData::invalid_params(e.message, None))
            }
            Err(e) => Ok(failure(&e).into()),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            resources::list()
                .into_iter()
                .map(|r| {
                    Resource::new(r.uri, r.name)
                        .with_description(r.description)
                        .with_mime_type(r.mime_type)
                })
                .collect(),
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates()
                .into_iter()
                .map(|t| {
                    ResourceTemplate::new(t.uri_template, t.name)
                        .with_description(t.description)
                        .with_mime_type("application/json")
                })
                .collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        match resources::read(&self.tools, &self.cx, &request.uri).await {
            Ok(text) => Ok(ReadResourceResult::new(vec![
                ResourceContents::text(text.text, request.uri).with_mime_type(text.mime_type),
            ])
            .into()),
            Err(e) if e.code == ErrorCode::ResourceNotFound => {
                Err(ErrorData::resource_not_found(e.message, None))
            }
            Err(e) => Err(ErrorData::internal_error(e.message, None)),
        }
    }
}

/// Why the stdio server stopped.
#[derive(Debug, thiserror::Error)]
pub enum McpServeError {
    /// The client never initialised the session, or the transport failed.
    #[error("the MCP session could not start: {0}")]
    Start(String),
    /// The session ended with an error.
    #[error("the MCP session failed: {0}")]
    Session(String),
}

/// Serves MCP on stdin/stdout until the client closes it (`tavo mcp`). Logs must go to stderr:
/// stdout carries the protocol.
pub async fn serve_stdio(dispatcher: Dispatcher) -> Result<(), McpServeError> {
    use rmcp::ServiceExt;
    let service = TavoMcp::new(dispatcher)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| McpServeError::Start(e.to_string()))?;
    service
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| McpServeError::Session(e.to_string()))
}
