//! The registry of operations and the one path every call takes:
//! look up → validate strictly → deserialize → run → apply budgets → envelope.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ask::{Question, UserAnswer};
use crate::budget::{ReplyBudget, ToolResult};
use crate::context::OpContext;
use crate::error::{ErrorCode, ToolError, ok_envelope};
use crate::operation::{
    BoxFuture, Handler, OpSpec, Operation, Outcome, Resume, Safety, tool_name_for,
};
use crate::schema::strict_schema_for;
use crate::validate::{ArgValidator, SchemaError};

/// How a tool is declared to a provider.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDeclaration {
    /// Model-door name.
    pub name: String,
    /// Description for the model.
    pub description: String,
    /// Strict JSON Schema of the arguments.
    pub parameters: Value,
}

/// Every operation, addressable by tool name (`tavo_file_save`) or operation name (`file.save`).
#[derive(Default)]
pub struct Registry {
    ops: Vec<Operation>,
    index: HashMap<String, usize>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("operations", &self.ops.len())
            .finish()
    }
}

/// A call's final result: the envelope for the model plus what the engine records.
#[derive(Debug, Clone, PartialEq)]
pub struct Completed {
    /// `{ "ok": true, "result": … }` or `{ "ok": false, "error": … }`.
    pub envelope: Value,
    /// The result was cut to fit the per-result limit.
    pub truncated: bool,
    /// Tools that become callable from the next round.
    pub expose: Vec<String>,
    /// The error code, when the call failed.
    pub error: Option<ErrorCode>,
}

/// Where a call stands after one step.
pub enum CallStep {
    /// Finished (successfully or not).
    Finished(Completed),
    /// Waiting for the user; pass the answer to [`Registry::resume`].
    Paused {
        /// What to ask.
        question: Question,
        /// The continuation.
        resume: Resume,
    },
}

impl std::fmt::Debug for CallStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallStep::Finished(c) => f.debug_tuple("Finished").field(c).finish(),
            CallStep::Paused { question, .. } => f
                .debug_struct("Paused")
                .field("question", question)
                .finish(),
        }
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers an operation whose arguments are the Rust type `A`: the strict schema is
    /// generated from `A`, and the handler receives `A` already validated and deserialized.
    pub fn add<A, F, Fut>(&mut self, spec: OpSpec, handler: F) -> Result<(), SchemaError>
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, OpContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Outcome, ToolError>> + Send + 'static,
    {
        let tool = tool_name_for(spec.name);
        let schema = strict_schema_for::<A>();
        let handler = Arc::new(handler);
        let op_name = spec.name;
        let erased: Box<Handler> = Box::new(move |args: Value, ctx: OpContext| {
            let handler = Arc::clone(&handler);
            let tool = tool_name_for(op_name);
            Box::pin(async move {
                let typed: A = serde_json::from_value(args).map_err(|e| {
                    ToolError::new(
                        ErrorCode::InvalidArguments,
                        format!("invalid arguments for {tool}: {e}"),
                    )
                })?;
                handler(typed, ctx).await
            }) as BoxFuture<_>
        });
        self.insert(spec, tool, schema, erased)
    }

    /// Registers an operation with a hand-written schema (made strict) and a raw-JSON handler.
    pub fn add_raw(
        &mut self,
        spec: OpSpec,
        mut schema: Value,
        handler: Box<Handler>,
    ) -> Result<(), SchemaError> {
        crate::schema::make_strict(&mut schema);
        let tool = tool_name_for(spec.name);
        self.insert(spec, tool, schema, handler)
    }

    fn insert(
        &mut self,
        spec: OpSpec,
        tool: String,
        schema: Value,
        handler: Box<Handler>,
    ) -> Result<(), SchemaError> {
        if self.index.contains_key(&tool) || self.index.contains_key(spec.name) {
            return Err(SchemaError {
                tool,
                reason: "registered twice".into(),
            });
        }
        let validator = ArgValidator::new(schema);
        let at = self.ops.len();
        self.index.insert(tool.clone(), at);
        self.index.insert(spec.name.to_owned(), at);
        self.ops.push(Operation {
            spec,
            tool_name: tool,
            validator,
            handler,
        });
        Ok(())
    }

    /// The operation with this tool name or operation name.
    pub fn get(&self, name: &str) -> Option<&Operation> {
        self.index.get(name).map(|&i| &self.ops[i])
    }

    /// Compiles every operation's argument schema now (each is otherwise compiled on the
    /// operation's first call); the first that does not compile is the error.
    pub fn compile_all(&self) -> Result<(), SchemaError> {
        self.ops
            .iter()
            .try_for_each(|op| op.validator.compile(&op.tool_name))
    }

    /// Every operation in registration order.
    pub fn operations(&self) -> impl Iterator<Item = &Operation> {
        self.ops.iter()
    }

    /// The provider declaration of one tool.
    pub fn declaration(&self, name: &str) -> Option<ToolDeclaration> {
        self.get(name).map(|op| ToolDeclaration {
            name: op.tool_name().to_owned(),
            description: op.description().to_owned(),
            parameters: op.schema().clone(),
        })
    }

    /// Write-safety of a tool (`None` for an unknown name).
    pub fn safety(&self, name: &str) -> Option<Safety> {
        self.get(name).map(Operation::safety)
    }

    /// Validates and runs one call, without budgets: the raw outcome.
    pub async fn invoke(
        &self,
        name: &str,
        args: Value,
        ctx: OpContext,
    ) -> Result<Outcome, ToolError> {
        let op = self.get(name).ok_or_else(|| unknown_tool(name))?;
        // Providers send `""` or nothing for a call without arguments.
        let args = if args.is_null() {
            Value::Object(Default::default())
        } else {
            args
        };
        op.validate(&args)?;
        op.run(args, ctx).await
    }

    /// Runs one call to its first stop: finished (with budgets applied and the envelope built)
    /// or paused for the user.
    pub async fn call(
        &self,
        name: &str,
        args: Value,
        ctx: OpContext,
        budget: &mut ReplyBudget,
    ) -> CallStep {
        step(self.invoke(name, args, ctx).await, budget)
    }

    /// Continues a paused call with the user's answer.
    pub async fn resume(resume: Resume, answer: UserAnswer, budget: &mut ReplyBudget) -> CallStep {
        step(resume(answer).await, budget)
    }
}

fn unknown_tool(name: &str) -> ToolError {
    ToolError::new(
        ErrorCode::UnknownTool,
        format!("there is no tool named {name}; use tavo_tool_search to find the right tool"),
    )
}

fn step(outcome: Result<Outcome, ToolError>, budget: &mut ReplyBudget) -> CallStep {
    match outcome {
        Ok(Outcome::NeedsUser { question, resume }) => CallStep::Paused { question, resume },
        Ok(Outcome::Done { result, expose }) => {
            CallStep::Finished(complete(Ok((result, expose)), budget))
        }
        Err(e) => CallStep::Finished(complete(Err(e), budget)),
    }
}

/// Applies the per-result limit and the reply budget and builds the envelope.
pub fn complete(
    result: Result<(ToolResult, Vec<String>), ToolError>,
    budget: &mut ReplyBudget,
) -> Completed {
    let failed = |e: ToolError| Completed {
        envelope: e.to_envelope(),
        truncated: false,
        expose: Vec::new(),
        error: Some(e.code),
    };
    match result {
        Err(e) => failed(e),
        Ok((result, expose)) => {
            let shaped = budget.shape(result);
            match budget.admit(shaped.bytes) {
                Ok(()) => Completed {
                    envelope: ok_envelope(shaped.result),
                    truncated: shaped.truncated,
                    expose,
                    error: None,
                },
                Err(e) => failed(e),
            }
        }
    }
}
