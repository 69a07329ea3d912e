//! The resources of Tavo's MCP server (reference §18): `tavo://capabilities`, `tavo://runtime`,
//! `tavo://current-chat`, the docs (`tavo://docs/*`, written for agents, in `docs/mcp/`), the
//! object schemas (`tavo://schemas/*`, generated from the model types) and one resource per
//! object (`tavo://characters/{id}`, …, `tavo://chats/{id}/messages`), which read what the
//! matching `get` tool answers.

use serde_json::{Value, json};
use tavo_model::{
    Character, Chat, Lorebook, LorebookEntry, Message, Persona, Preset, RegexEntry, RegexGroup,
};

use super::{McpContext, McpTools};
use crate::error::{ErrorCode, ToolError};

/// A resource as `resources/list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceInfo {
    /// `tavo://docs/overview`.
    pub uri: String,
    /// Short name.
    pub name: String,
    /// What it holds.
    pub description: String,
    /// `application/json` or `text/markdown`.
    pub mime_type: &'static str,
}

/// A URI template as `resources/templates/list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceTemplate {
    /// `tavo://characters/{id}`.
    pub uri_template: String,
    /// Short name.
    pub name: String,
    /// What it reads.
    pub description: String,
}

/// A resource's content.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceText {
    /// The MIME type.
    pub mime_type: &'static str,
    /// The text.
    pub text: String,
}

const DOCS: [(&str, &str, &str); 7] = [
    (
        "overview",
        "What this server is and where to start.",
        include_str!("../../../../docs/mcp/overview.md"),
    ),
    (
        "tools",
        "Every tool, by group, and the search arguments.",
        include_str!("../../../../docs/mcp/tools.md"),
    ),
    (
        "write-safety",
        "dryRun, expectedRevision, clientRequestId.",
        include_str!("../../../../docs/mcp/write-safety.md"),
    ),
    (
        "macros",
        "The {{macros}} text fields may use.",
        include_str!("../../../../docs/mcp/macros.md"),
    ),
    (
        "tavojs",
        "The API chat-bubble scripts see.",
        include_str!("../../../../docs/mcp/tavojs.md"),
    ),
    (
        "plugins",
        "Tavo plugins in tavo.",
        include_str!("../../../../docs/mcp/plugins.md"),
    ),
    (
        "tool-calling",
        "The chat model's own tool loop.",
        include_str!("../../../../docs/mcp/tool-calling.md"),
    ),
];

const SCHEMAS: [&str; 9] = [
    "character",
    "lorebook",
    "lorebook-entry",
    "regex",
    "regex-entry",
    "preset",
    "persona",
    "chat",
    "message",
];

/// `(uri segment, get tool)` of the per-object templates.
const OBJECTS: [(&str, &str); 6] = [
    ("characters", "tavo_character_get"),
    ("lorebooks", "tavo_lorebook_get"),
    ("regexes", "tavo_regex_get"),
    ("presets", "tavo_preset_get"),
    ("personas", "tavo_persona_get"),
    ("chats", "tavo_chat_get"),
];

/// Every fixed resource.
pub fn list() -> Vec<ResourceInfo> {
    let mut out = vec![
        info(
            "tavo://capabilities",
            "capabilities",
            "What this server offers: tool groups, write safety, resources.",
            "application/json",
        ),
        info(
            "tavo://runtime",
            "runtime",
            "The running tavo: version, API version, time, library counts.",
            "application/json",
        ),
        info(
            "tavo://current-chat",
            "current-chat",
            "The current chat (see tavo_current_chat_get).",
            "application/json",
        ),
    ];
    for (name, description, _) in DOCS {
        out.push(info(
            &format!("tavo://docs/{name}"),
            name,
            description,
            "text/markdown",
        ));
    }
    for name in SCHEMAS {
        out.push(info(
            &format!("tavo://schemas/{name}"),
            &format!("schema {name}"),
            &format!("JSON Schema of a {name} object."),
            "application/json",
        ));
    }
    out
}

fn info(uri: &str, name: &str, description: &str, mime_type: &'static str) -> ResourceInfo {
    ResourceInfo {
        uri: uri.to_owned(),
        name: name.to_owned(),
        description: description.to_owned(),
        mime_type,
    }
}

/// Every URI template.
pub fn templates() -> Vec<ResourceTemplate> {
    let mut out: Vec<ResourceTemplate> = OBJECTS
        .iter()
        .map(|(seg, tool)| ResourceTemplate {
            uri_template: format!("tavo://{seg}/{{id}}"),
            name: (*seg).to_owned(),
            description: format!("One object by id, as {tool} answers it."),
        })
        .collect();
    out.push(ResourceTemplate {
        uri_template: "tavo://chats/{id}/messages".into(),
        name: "chat messages".into(),
        description: "A chat's messages (the newest 500).".into(),
    });
    out
}

fn schema_of(name: &str) -> Option<Value> {
    let s = match name {
        "character" => schemars::schema_for!(Character),
        "lorebook" => schemars::schema_for!(Lorebook),
        "lorebook-entry" => schemars::schema_for!(LorebookEntry),
        "regex" => schemars::schema_for!(RegexGroup),
        "regex-entry" => schemars::schema_for!(RegexEntry),
        "preset" => schemars::schema_for!(Preset),
        "persona" => schemars::schema_for!(Persona),
        "chat" => schemars::schema_for!(Chat),
        "message" => schemars::schema_for!(Message),
        _ => return None,
    };
    serde_json::to_value(s).ok()
}

fn json_text(v: &Value) -> ResourceText {
    ResourceText {
        mime_type: "application/json",
        text: serde_json::to_string_pretty(v).unwrap_or_default(),
    }
}

fn not_found(uri: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ResourceNotFound,
        format!(
            "there is no resource {uri}; resources/list and resources/templates/list name them"
        ),
    )
}

/// Reads one resource.
pub async fn read(tools: &McpTools, cx: &McpContext, uri: &str) -> Result<ResourceText, ToolError> {
    let Some(path) = uri.strip_prefix("tavo://") else {
        return Err(not_found(uri));
    };
    match path {
        "capabilities" => {
            let groups: Vec<&str> = tools.list().map(|t| t.name.as_str()).collect();
            return Ok(json_text(&json!({
                "apiVersion": super::API_VERSION,
                "tools": groups,
                "writeSafety": super::WRITE_SAFETY_FIELDS,
                "resources": list().iter().map(|r| r.uri.clone()).collect::<Vec<_>>(),
                "templates": templates().iter().map(|t| t.uri_template.clone()).collect::<Vec<_>>(),
                "capabilityGroups": {"library": "available", "chats": "available", "messages": "available", "memory": "available", "plugins": "available"},
            })));
        }
        "runtime" => {
            let status = tools.call(cx, "tavo_status", json!({})).await?;
            return Ok(json_text(&json!({
                "server": "tavo",
                "version": env!("CARGO_PKG_VERSION"),
                "apiVersion": super::API_VERSION,
                "time": chrono::Utc::now().to_rfc3339(),
                "counts": status["counts"],
            })));
        }
        "current-chat" => {
            return Ok(json_text(
                &tools.call(cx, "tavo_current_chat_get", json!({})).await?,
            ));
        }
        _ => {}
    }
    if let Some(name) = path.strip_prefix("docs/") {
        return DOCS
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, _, text)| ResourceText {
                mime_type: "text/markdown",
                text: (*text).to_owned(),
            })
            .ok_or_else(|| not_found(uri));
    }
    if let Some(name) = path.strip_prefix("schemas/") {
        return schema_of(name)
            .map(|s| json_text(&s))
            .ok_or_else(|| not_found(uri));
    }
    let mut parts = path.split('/');
    let (Some(seg), Some(id)) = (parts.next(), parts.next()) else {
        return Err(not_found(uri));
    };
    let id: i64 = id
        .parse()
        .ok()
        .filter(|i| *i > 0)
        .ok_or_else(|| not_found(uri))?;
    let rest: Vec<&str> = parts.collect();
    match (seg, rest.as_slice()) {
        ("chats", ["messages"]) => {
            let chat = tools
                .call(
                    cx,
                    "tavo_chat_get",
                    json!({"id": id, "includeMessages": true, "messageLimit": 500}),
                )
                .await?;
            Ok(json_text(
                &json!({"chatId": id, "messageCount": chat["messageCount"], "messages": chat["messages"]}),
            ))
        }
        (seg, []) => {
            let tool = OBJECTS
                .iter()
                .find(|(s, _)| *s == seg)
                .map(|(_, t)| *t)
                .ok_or_else(|| not_found(uri))?;
            Ok(json_text(&tools.call(cx, tool, json!({"id": id})).await?))
        }
        _ => Err(not_found(uri)),
    }
}
