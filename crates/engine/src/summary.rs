//! Privacy: what a chat message keeps of a tool call, and what goes to the audit log.
//!
//! A message keeps only a compact card per call — tool, status, error code, and a one-line
//! label naming the call's object (a file name, a query), cut to [`LABEL_CHARS`]. The full
//! arguments, the result envelope, timing and status go to the bounded audit log, which can be
//! cleared without touching messages (seed 000, "隐私与日志").

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tavo_model::ChatId;

/// Message `extra` key holding the compact cards of the reply's calls.
pub const MESSAGE_CALLS_KEY: &str = "toolCalls";

/// Longest label kept on a card.
pub const LABEL_CHARS: usize = 60;

/// Where one call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CallStatus {
    /// Validated and running (or about to).
    Running,
    /// Waiting for the user (confirmation or question).
    Waiting,
    /// Finished with `ok: true`.
    Ok,
    /// Finished with `ok: false`; `errorCode` says why.
    Error,
}

/// The compact card of one call: what a message keeps and what the event stream shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallSummary {
    /// The provider's id for the call; a card's later update and its audit record carry the
    /// same id.
    pub call_id: String,
    /// The tool's name (`tavo_file_save`, `mcp_<server>_<tool>`).
    pub tool: String,
    /// Where the call stands; the card is published again when this changes.
    pub status: CallStatus,
    /// The call's object in a few words (`"notes.txt"`), never the full arguments.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// The envelope's error code when the call failed (`permission_denied`, `cancelled`, ...),
    /// so the card can say why without keeping the error's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// The result was cut to fit the per-result limit before the model got it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// A stealth tool's card: shown live, never stored in the message.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stealth: bool,
}

/// Argument fields that name a call's object, in order of preference.
const LABEL_FIELDS: [&str; 8] = [
    "name", "query", "url", "question", "path", "id", "key", "text",
];

/// A short label for a call: the first naming field of the arguments, cut to [`LABEL_CHARS`].
pub fn label_for(arguments: &Value) -> String {
    let Value::Object(map) = arguments else {
        return String::new();
    };
    let picked = LABEL_FIELDS.iter().find_map(|k| match map.get(*k) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::Object(o)) => o.get("id").map(|v| v.to_string()),
        _ => None,
    });
    let Some(text) = picked else {
        return String::new();
    };
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= LABEL_CHARS {
        one_line
    } else {
        let cut: String = one_line.chars().take(LABEL_CHARS - 1).collect();
        format!("{cut}…")
    }
}

/// The line an earlier reply's calls contribute to later prompts: the model still sees that it
/// called tools (continue, impersonate and quiet generations included), from the compact cards
/// only — the message never kept arguments or results.
pub fn history_line(cards: &[ToolCallSummary]) -> Option<String> {
    let shown: Vec<String> = cards
        .iter()
        .filter(|c| !c.stealth)
        .map(|c| {
            let outcome = match (c.status, &c.error_code) {
                (CallStatus::Ok, _) => "ok".to_owned(),
                (_, Some(code)) => code.clone(),
                (s, None) => format!("{s:?}").to_lowercase(),
            };
            if c.label.is_empty() {
                format!("{} → {outcome}", c.tool)
            } else {
                format!("{} ({}) → {outcome}", c.tool, c.label)
            }
        })
        .collect();
    (!shown.is_empty()).then(|| format!("[tool calls: {}]", shown.join("; ")))
}

/// The cards stored in a message's `extra`, if any.
pub fn cards_of(extra: &serde_json::Map<String, Value>) -> Vec<ToolCallSummary> {
    extra
        .get(MESSAGE_CALLS_KEY)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

/// One call as the audit log keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditRecord {
    pub reply_id: String,
    pub chat_id: ChatId,
    pub call_id: String,
    pub tool: String,
    pub arguments: Value,
    pub envelope: Value,
    pub status: CallStatus,
    pub truncated: bool,
    /// Time spent running the tool (waiting for the user excluded).
    pub run_ms: u64,
    /// Time spent waiting for the user.
    pub waited_ms: u64,
}

impl AuditRecord {
    /// The audit action (`tool.tavo_file_save`).
    pub fn action(&self) -> String {
        format!("tool.{}", self.tool)
    }

    /// The audit target (`chat:12`).
    pub fn target(&self) -> String {
        format!("chat:{}", self.chat_id)
    }

    /// The details object. `tavo_web_fetch` results keep only their metadata (final URL,
    /// status, MIME, sizes, warnings), never the page text or continuation cursor (seed 000).
    pub fn details(&self) -> Value {
        json!({
            "replyId": self.reply_id,
            "callId": self.call_id,
            "arguments": self.arguments,
            "result": tavo_tools::audit::audited_result(&self.tool, &self.envelope),
            "status": self.status,
            "truncated": self.truncated,
            "runMs": self.run_ms,
            "waitedMs": self.waited_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_object_and_stay_short() {
        assert_eq!(
            label_for(&json!({"name": "notes.txt", "content": "secret body"})),
            "notes.txt"
        );
        assert_eq!(
            label_for(&json!({"query": "save a   file\nnow"})),
            "save a file now"
        );
        assert_eq!(label_for(&json!({"id": 12})), "12");
        assert_eq!(label_for(&json!({"content": "only content"})), "");
        let long = "x".repeat(200);
        assert_eq!(
            label_for(&json!({ "query": long })).chars().count(),
            LABEL_CHARS
        );
    }

    #[test]
    fn history_lines_skip_stealth_calls_and_show_outcomes() {
        let card = |tool: &str, status, code: Option<&str>, stealth| ToolCallSummary {
            call_id: "c".into(),
            tool: tool.into(),
            status,
            label: "a.txt".into(),
            error_code: code.map(str::to_owned),
            truncated: false,
            stealth,
        };
        let line = history_line(&[
            card("tavo_file_save", CallStatus::Ok, None, false),
            card(
                "tavo_file_load",
                CallStatus::Error,
                Some("resource_not_found"),
                false,
            ),
            card("roll_dice", CallStatus::Ok, None, true),
        ]);
        assert_eq!(
            line.as_deref(),
            Some(
                "[tool calls: tavo_file_save (a.txt) → ok; tavo_file_load (a.txt) → resource_not_found]"
            )
        );
        assert_eq!(
            history_line(&[card("roll_dice", CallStatus::Ok, None, true)]),
            None
        );
    }

    #[test]
    fn web_fetch_audit_keeps_metadata_only() {
        let rec = AuditRecord {
            reply_id: "r".into(),
            chat_id: ChatId(1),
            call_id: "c".into(),
            tool: "tavo_web_fetch".into(),
            arguments: json!({"url": "https://e.com/?q=1#f", "headers": {"Authorization": "x"}}),
            envelope: json!({"ok": true, "result": {"finalUrl": "https://e.com/", "status": 200, "markdown": "page text", "nextCursor": "abc"}}),
            status: CallStatus::Ok,
            truncated: false,
            run_ms: 3,
            waited_ms: 0,
        };
        let d = rec.details();
        assert_eq!(d["result"]["result"]["finalUrl"], "https://e.com/");
        assert!(d["result"]["result"].get("markdown").is_none());
        assert!(d["result"]["result"].get("nextCursor").is_none());
        assert_eq!(d["arguments"]["url"], "https://e.com/?q=1#f");
    }
}
