//! One business operation, written once (DESIGN.md §2, "one operation, many doors").
//!
//! An [`Operation`] carries everything every door needs: the operation name
//! (`character.find`), the model-door tool name (`tavo_character_find`), a description written
//! for models, the strict JSON Schema of its arguments (generated from the Rust argument type),
//! its write-safety, and an async handler. The handler never knows which door called it.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use serde::Serialize;
use serde_json::Value;

use crate::ask::{Question, UserAnswer};
use crate::budget::ToolResult;
use crate::context::OpContext;
use crate::error::ToolError;
use crate::validate::ArgValidator;

/// A boxed, sendable future (handlers are stored type-erased in the registry).
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The type-erased handler: validated arguments in, an outcome out.
pub type Handler = dyn Fn(Value, OpContext) -> BoxFuture<Result<Outcome, ToolError>> + Send + Sync;

/// The continuation of an operation that paused for the user.
pub type Resume = Box<dyn FnOnce(UserAnswer) -> BoxFuture<Result<Outcome, ToolError>> + Send>;

/// Whether an operation changes anything, and whether its contract asks for a confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Safety {
    /// Reads only.
    Read,
    /// Writes without asking (file save/delete, variables, drafts: the seed says they run directly).
    Write,
    /// Writes that the seed's contract confirms first (character/lorebook/preset/regex writes
    /// and imports, deletions of library assets).
    Confirm,
}

impl Safety {
    /// Whether the operation changes stored state.
    pub fn writes(self) -> bool {
        !matches!(self, Safety::Read)
    }
}

/// Which tools the first request of a reply carries when dynamic loading is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Residency {
    /// Always offered when tools are on (`tavo_tool_search`, `tavo_ask_user`, `tavo_web_fetch`…).
    Resident,
    /// Offered from the start only with dynamic loading off; otherwise found by `tavo_tool_search`.
    Discoverable,
}

/// What a handler produced.
pub enum Outcome {
    /// Finished. `expose` lists tools that become callable from the next round on
    /// (what `tavo_tool_search` found).
    Done {
        /// The result before budgets.
        result: ToolResult,
        /// Tool names to add to the reply's exposed set.
        expose: Vec<String>,
    },
    /// The operation needs the user (`tavo_ask_user`, an overwrite-or-copy decision). The engine
    /// pauses the reply (status `waiting`; waiting never counts toward the call's time-out),
    /// shows `question` on the reply's own chat, and calls `resume` with the answer.
    NeedsUser {
        /// What to ask.
        question: Question,
        /// How the operation continues once answered or cancelled.
        resume: Resume,
    },
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Done { result, expose } => f
                .debug_struct("Done")
                .field("result", result)
                .field("expose", expose)
                .finish(),
            Outcome::NeedsUser { question, .. } => f
                .debug_struct("NeedsUser")
                .field("question", question)
                .finish_non_exhaustive(),
        }
    }
}

impl Outcome {
    /// A finished structured result.
    pub fn value(v: impl Serialize) -> Result<Self, ToolError> {
        let result =
            serde_json::to_value(v).map_err(|_| ToolError::internal("serialising the result"))?;
        Ok(Outcome::Done {
            result: ToolResult::Value(result),
            expose: Vec::new(),
        })
    }

    /// A finished result from a ready JSON value.
    pub fn json(v: Value) -> Self {
        Outcome::Done {
            result: ToolResult::Value(v),
            expose: Vec::new(),
        }
    }
}

/// The static description of an operation, given at registration.
#[derive(Debug, Clone)]
pub struct OpSpec {
    /// Operation name, `namespace.method` (`character.find`, `file.save`).
    pub name: &'static str,
    /// Description sent to the model: what it does and when to use it.
    pub description: Cow<'static, str>,
    /// Write-safety.
    pub safety: Safety,
    /// Resident or discoverable.
    pub residency: Residency,
    /// Extra search words for `tavo_tool_search` (synonyms the description lacks).
    pub keywords: &'static [&'static str],
}

impl OpSpec {
    /// A discoverable operation.
    pub const fn new(name: &'static str, safety: Safety, description: &'static str) -> Self {
        Self {
            name,
            description: Cow::Borrowed(description),
            safety,
            residency: Residency::Discoverable,
            keywords: &[],
        }
    }

    /// A discoverable operation whose description is built at run time.
    pub fn described(name: &'static str, safety: Safety, description: String) -> Self {
        Self {
            name,
            description: Cow::Owned(description),
            safety,
            residency: Residency::Discoverable,
            keywords: &[],
        }
    }

    /// Adds search keywords.
    pub const fn keywords(mut self, keywords: &'static [&'static str]) -> Self {
        self.keywords = keywords;
        self
    }

    /// Marks the operation resident.
    pub const fn resident(mut self) -> Self {
        self.residency = Residency::Resident;
        self
    }
}

/// `character.find` → `tavo_character_find`. Names that already are tool names are kept.
pub fn tool_name_for(op_name: &str) -> String {
    if op_name.starts_with("tavo_") || op_name.starts_with("extension_") {
        return op_name.to_owned();
    }
    format!("tavo_{}", op_name.replace('.', "_"))
}

/// A registered operation.
pub struct Operation {
    pub(crate) spec: OpSpec,
    pub(crate) tool_name: String,
    pub(crate) validator: ArgValidator,
    pub(crate) handler: Box<Handler>,
}

impl std::fmt::Debug for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operation")
            .field("name", &self.spec.name)
            .field("tool", &self.tool_name)
            .finish()
    }
}

impl Operation {
    /// `namespace.method`.
    pub fn name(&self) -> &'static str {
        self.spec.name
    }
    /// `tavo_namespace_method`.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }
    /// The model-facing description.
    pub fn description(&self) -> &str {
        &self.spec.description
    }
    /// The strict JSON Schema of the arguments.
    pub fn schema(&self) -> &Value {
        self.validator.schema()
    }
    /// Write-safety.
    pub fn safety(&self) -> Safety {
        self.spec.safety
    }
    /// Resident or discoverable.
    pub fn residency(&self) -> Residency {
        self.spec.residency
    }
    /// Search keywords.
    pub fn keywords(&self) -> &'static [&'static str] {
        self.spec.keywords
    }
    /// Checks arguments against the strict schema.
    pub fn validate(&self, args: &Value) -> Result<(), ToolError> {
        self.validator.check(&self.tool_name, args)
    }
    /// Runs the handler on arguments that were already validated.
    pub fn run(&self, args: Value, ctx: OpContext) -> BoxFuture<Result<Outcome, ToolError>> {
        (self.handler)(args, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_door_names() {
        assert_eq!(tool_name_for("character.find"), "tavo_character_find");
        assert_eq!(tool_name_for("memory.append"), "tavo_memory_append");
        assert_eq!(tool_name_for("tavo_tool_search"), "tavo_tool_search");
        assert_eq!(
            tool_name_for("extension_tool_search"),
            "extension_tool_search"
        );
    }
}
