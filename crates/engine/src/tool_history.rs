//! Earlier tool calls in later prompts (seed 001: "continue, impersonate and quiet cannot call
//! tools but can still use earlier successful calls"; issue 30 item 11).
//!
//! A reply that ran tools stores its rounds beside its message ([`StoredRounds`], the store's
//! `tool_rounds`): each round's assistant turn (its reasoning and calls, as the model sent
//! them) and the results the model got back. A later prompt puts them back in front of that
//! message as neutral [`Message`]s, which each protocol's codec encodes in its own shape
//! (OpenAI `tool_calls` + `tool`, Responses `function_call` / `function_call_output`,
//! Anthropic `tool_use` / `tool_result`, Gemini `functionCall` / `functionResponse`). A
//! provider's own form of a part (a Gemini signature, a signed thinking block) only goes back
//! to its protocol: after a provider switch the codec sends the calls without it.
//!
//! What does not fit is folded, oldest first, to the one-line card summary the message already
//! carries (`[tool calls: name (label) → ok]`): results beyond the per-reply result budget
//! ([`tavo_tools::budget::REPLY_LIMIT`]) or beyond what the prompt's token budget has left,
//! rounds of another swipe, rounds whose log was cleared, and messages a converter merged.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tavo_llm::{Message, Part, Role};

/// Format of [`StoredRounds`]; a record of another version is folded, never misread.
pub const ROUNDS_VERSION: u32 = 1;

/// Bytes per token assumed when the rounds are fitted into what the prompt budget left.
const BYTES_PER_TOKEN: usize = 3;

/// A reply's tool rounds as its message keeps them for later prompts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredRounds {
    /// [`ROUNDS_VERSION`].
    pub version: u32,
    /// The swipe of the message the rounds belong to (`None`: the message had no swipes).
    #[serde(default)]
    pub swipe: Option<u64>,
    /// The model that made the calls.
    #[serde(default)]
    pub model: String,
    /// The rounds: an assistant turn (reasoning and calls; its text is the message's) then a
    /// tool turn with the results, in order.
    pub messages: Vec<Message>,
}

impl StoredRounds {
    /// The rounds of a reply from the messages its tool loop sent back: text parts are left
    /// out (the message's own text holds them).
    pub fn from_rounds(rounds: &[Message], swipe: Option<u64>, model: &str) -> Option<Self> {
        let messages: Vec<Message> = rounds
            .iter()
            .map(|m| Message {
                role: m.role,
                parts: m
                    .parts
                    .iter()
                    .filter(|p| !matches!(p, Part::Text { .. }))
                    .cloned()
                    .collect(),
            })
            .filter(|m| !m.parts.is_empty())
            .collect();
        messages.iter().any(Message::has_tool_calls).then(|| Self {
            version: ROUNDS_VERSION,
            swipe,
            model: model.to_owned(),
            messages,
        })
    }

    /// The JSON the store keeps.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Bytes the rounds weigh (calls' arguments and results), for the budgets.
    fn weight(&self) -> usize {
        self.messages
            .iter()
            .flat_map(|m| &m.parts)
            .map(|p| match p {
                Part::ToolCall {
                    name, arguments, ..
                } => name.len() + arguments.to_string().len(),
                Part::ToolResult { content, .. } => content.len(),
                Part::Reasoning { text, .. } => text.len(),
                _ => 0,
            })
            .sum()
    }
}

/// One chat message of the prompt that carries tool rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct CarriedRounds {
    /// The rounds, as stored (`None` when the log was cleared or the record is unreadable).
    pub rounds: Option<StoredRounds>,
    /// The message's current swipe.
    pub swipe: Option<u64>,
    /// The line the message's text starts with in the prompt (its card summary).
    pub line: String,
}

/// What happened to earlier tool calls in one prompt: `tavo prompt --explain` shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolHistoryReport {
    /// For each message of the new list, the index it had before the rounds went in (`None`
    /// for a round's message), so the explain record's sources stay aligned.
    #[serde(skip)]
    pub from: Vec<Option<usize>>,
    /// Messages whose rounds went back in the protocol's own shape.
    pub replayed: Vec<i64>,
    /// Messages whose calls went back as their one-line summary only, with why.
    pub folded: Vec<Folded>,
    /// Tool rounds (assistant turns with calls) sent back.
    pub rounds: usize,
    /// What the request's protocol does with parts another protocol made (a provider switch
    /// mid-chat): they are re-encoded, their provider-only forms left out.
    pub notes: Vec<String>,
}

/// A message whose rounds were folded to text.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Folded {
    /// The chat message.
    pub message: i64,
    /// `budget`, `logCleared`, `otherSwipe`, `merged`.
    pub reason: &'static str,
}

impl ToolHistoryReport {
    /// The report as `--explain` prints it.
    pub fn to_json(&self) -> Value {
        json!({
            "replayedMessages": self.replayed,
            "rounds": self.rounds,
            "folded": self.folded,
            "notes": self.notes,
        })
    }

    /// Says what `protocol` does with the replayed parts another protocol made: the calls and
    /// results are encoded in its own shape; signatures and signed reasoning of the other
    /// provider are left out (they are valid only there).
    pub fn note_protocol(&mut self, messages: &[Message], protocol: tavo_llm::Protocol) {
        let mut foreign: Vec<tavo_llm::Protocol> = Vec::new();
        for p in messages.iter().flat_map(|m| &m.parts) {
            let native = match p {
                Part::ToolCall { native, .. } | Part::Reasoning { native, .. } => native,
                _ => continue,
            };
            if let Some(n) = native
                && n.protocol != protocol
                && !foreign.contains(&n.protocol)
            {
                foreign.push(n.protocol);
            }
        }
        for other in foreign {
            self.notes.push(format!(
                "earlier tool calls made over {other} are sent in the {protocol} shape; their {other} signatures and signed reasoning are left out (valid only there)"
            ));
        }
    }
}

/// Puts the stored rounds back in front of their messages. `origins[i]` is the chat message
/// `messages[i]` copies (see `PromptMessage::origin`); `carried` has every chat message of the
/// prompt with tool cards. `free_tokens` is what the prompt budget has left.
pub fn replay(
    messages: Vec<Message>,
    origins: &[Option<i64>],
    carried: &HashMap<i64, CarriedRounds>,
    free_tokens: usize,
) -> (Vec<Message>, ToolHistoryReport) {
    let mut report = ToolHistoryReport::default();
    let mut allowance = tavo_tools::budget::REPLY_LIMIT.min(free_tokens * BYTES_PER_TOKEN);
    // Newest first, so what does not fit is the oldest.
    let mut chosen: HashMap<usize, &StoredRounds> = HashMap::new();
    for (i, origin) in origins.iter().enumerate().rev() {
        let Some(id) = origin else { continue };
        let Some(c) = carried.get(id) else { continue };
        let fold = |reason| Folded {
            message: *id,
            reason,
        };
        let Some(rounds) = c.rounds.as_ref().filter(|r| r.version == ROUNDS_VERSION) else {
            report.folded.push(fold("logCleared"));
            continue;
        };
        // A message without swipes is its swipe 0.
        if rounds.swipe.unwrap_or(0) != c.swipe.unwrap_or(0) {
            report.folded.push(fold("otherSwipe"));
            continue;
        }
        let weight = rounds.weight();
        if weight > allowance {
            report.folded.push(fold("budget"));
            // Everything older folds too: the history keeps its order of what was dropped.
            allowance = 0;
            continue;
        }
        allowance -= weight;
        chosen.insert(i, rounds);
    }
    // A chat message the converter merged into another has no origin any more: its line stays.
    for c in carried.keys() {
        if !origins.contains(&Some(*c))
            && !report.folded.iter().any(|f| f.message == *c)
            && messages
                .iter()
                .any(|m| m.joined_text().contains(&carried[c].line))
        {
            report.folded.push(Folded {
                message: *c,
                reason: "merged",
            });
        }
    }
    let mut out = Vec::with_capacity(messages.len() + chosen.len() * 2);
    for (i, mut m) in messages.into_iter().enumerate() {
        if let Some(rounds) = chosen.get(&i) {
            let id = origins[i].unwrap_or_default();
            report.replayed.push(id);
            report.rounds += rounds
                .messages
                .iter()
                .filter(|m| m.has_tool_calls())
                .count();
            out.extend(rounds.messages.iter().cloned());
            report.from.extend(rounds.messages.iter().map(|_| None));
            if let Some(c) = carried.get(&id) {
                strip_line(&mut m, &c.line);
            }
            if m.parts.iter().all(|p| match p {
                Part::Text { text } => text.trim().is_empty(),
                _ => false,
            }) && m.role == Role::Assistant
            {
                continue;
            }
        }
        out.push(m);
        report.from.push(Some(i));
    }
    report.replayed.sort_unstable();
    report.folded.sort_by_key(|f| f.message);
    (out, report)
}

/// Removes the card summary line from a message's text: the calls themselves are in front.
fn strip_line(m: &mut Message, line: &str) {
    for p in &mut m.parts {
        if let Part::Text { text } = p
            && let Some(at) = text.find(line)
        {
            let end = at + line.len();
            let end = if text[end..].starts_with('\n') {
                end + 1
            } else {
                end
            };
            text.replace_range(at..end, "");
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(id: &str, result: &str) -> Vec<Message> {
        vec![
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::text("let me look"),
                    Part::ToolCall {
                        id: id.into(),
                        name: "tavo_file_load".into(),
                        arguments: json!({"name": "a.txt"}),
                        native: None,
                    },
                ],
            },
            Message {
                role: Role::Tool,
                parts: vec![Part::ToolResult {
                    call_id: id.into(),
                    name: "tavo_file_load".into(),
                    content: result.into(),
                    is_error: false,
                }],
            },
        ]
    }

    fn carried(id: &str, result: &str, swipe: Option<u64>) -> CarriedRounds {
        CarriedRounds {
            rounds: StoredRounds::from_rounds(&round(id, result), None, "m"),
            swipe,
            line: "[tool calls: tavo_file_load (a.txt) → ok]".into(),
        }
    }

    fn prompt() -> (Vec<Message>, Vec<Option<i64>>) {
        (
            vec![
                Message::text(Role::System, "sys"),
                Message::text(Role::User, "read it"),
                Message::text(
                    Role::Assistant,
                    "[tool calls: tavo_file_load (a.txt) → ok]\nIt says hi.",
                ),
                Message::text(Role::User, "and again"),
                Message::text(
                    Role::Assistant,
                    "[tool calls: tavo_file_load (a.txt) → ok]\nStill hi.",
                ),
            ],
            vec![None, Some(1), Some(2), Some(3), Some(4)],
        )
    }

    #[test]
    fn rounds_go_back_before_their_message_without_the_summary_line() {
        let (messages, origins) = prompt();
        let map = HashMap::from([
            (2, carried("c1", "hi", None)),
            (4, carried("c2", "hi", None)),
        ]);
        let (out, report) = replay(messages, &origins, &map, 100_000);
        let roles: Vec<Role> = out.iter().map(|m| m.role).collect();
        use Role::*;
        assert_eq!(
            roles,
            [
                System, User, Assistant, Tool, Assistant, User, Assistant, Tool, Assistant
            ]
        );
        assert_eq!(out[4].joined_text(), "It says hi.");
        assert_eq!(
            out[2].joined_text(),
            "",
            "the round's text is the message's"
        );
        assert_eq!(report.replayed, [2, 4]);
        assert_eq!(report.rounds, 2);
    }

    #[test]
    fn the_oldest_fold_first_and_other_swipes_or_a_cleared_log_fold() {
        let (messages, origins) = prompt();
        let big = "x".repeat(2000);
        let map = HashMap::from([
            (2, carried("c1", &big, None)),
            (4, carried("c2", &big, None)),
        ]);
        // Room for one result only: the newest.
        let (out, report) = replay(messages.clone(), &origins, &map, 900);
        assert_eq!(report.replayed, [4]);
        assert_eq!(
            report.folded,
            [Folded {
                message: 2,
                reason: "budget"
            }]
        );
        assert!(out[2].joined_text().starts_with("[tool calls:"));

        let mut cleared = carried("c1", "hi", None);
        cleared.rounds = None;
        let map = HashMap::from([(2, cleared), (4, carried("c2", "hi", Some(1)))]);
        let (out, report) = replay(messages, &origins, &map, 100_000);
        assert_eq!(out.len(), 5, "nothing replayed");
        let reasons: Vec<&str> = report.folded.iter().map(|f| f.reason).collect();
        assert_eq!(reasons, ["logCleared", "otherSwipe"]);
    }
}
