//! `tavo tool list [--json]` and `tavo tool call NAME JSON [--chat ID] [--yes]`.
//!
//! `call` takes the one call path of every door (`tavo_tools::Dispatcher`: strict validation
//! once, the approval policy, the handler under `tools.callTimeoutSeconds`, budgets, the
//! envelope), with the web tools a reply has, and prints the envelope on stdout. Writes whose
//! contract asks for a confirmation, and tools the approval policy asks about, are refused
//! unless `--yes`; a tool the policy denies is refused always. `tavo_ask_user` asks on the
//! terminal when stdin is one and is cancelled otherwise.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use tavo_model::ChatId;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use serde_json::{Value, json};
use tavo_tools::dispatch::{DoorFuture, PendingCall};
use tavo_tools::{
    Confirmation, DirectTarget, Door, Origin, Question, ToolCall, ToolError, UserAnswer,
    builtin_registry,
};

use crate::context::Context;

/// `tavo tool …`
#[derive(Debug, Args)]
pub struct ToolArgs {
    #[command(subcommand)]
    command: ToolCommand,
}

#[derive(Debug, Subcommand)]
enum ToolCommand {
    /// List every built-in tool (name, write-safety, description).
    List {
        /// Print a JSON array with each tool's full schema.
        #[arg(long)]
        json: bool,
    },
    /// Call one tool as a model would and print the result envelope.
    Call {
        /// Tool name (`tavo_file_save`) or operation name (`file.save`).
        name: String,
        /// Arguments as a JSON object, e.g. '{"name":"notes.txt","content":"hi"}'.
        #[arg(default_value = "{}")]
        arguments: String,
        /// The chat the call works on (chat-scope files, variables, messages, memory, draft).
        #[arg(long, value_name = "ID")]
        chat: Option<i64>,
        /// Confirm writes that would otherwise ask for confirmation.
        #[arg(long)]
        yes: bool,
    },
}

/// Runs `tavo tool …`.
pub fn run(args: ToolArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let registry = builtin_registry().context("building the tool registry")?;
    match args.command {
        ToolCommand::List { json } => {
            if json {
                let list: Vec<Value> = registry
                    .operations()
                    .map(|op| {
                        json!({
                            "name": op.tool_name(),
                            "operation": op.name(),
                            "description": op.description(),
                            "safety": op.safety(),
                            "residency": op.residency(),
                            "parameters": op.schema(),
                        })
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                for op in registry.operations() {
                    let safety = match op.safety() {
                        tavo_tools::Safety::Read => "read",
                        tavo_tools::Safety::Write => "write",
                        tavo_tools::Safety::Confirm => "confirm",
                    };
                    let first = op.description().split(". ").next().unwrap_or_default();
                    println!("{:<28} {:<8} {}", op.tool_name(), safety, first);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ToolCommand::Call {
            name,
            arguments,
            chat,
            yes,
        } => {
            let args: Value = match serde_json::from_str(&arguments) {
                Ok(v) => v,
                Err(e) => {
                    eprintln!(
                        "error: the arguments are not valid JSON ({e}); pass one JSON object"
                    );
                    return Ok(ExitCode::from(2));
                }
            };
            let store = ctx.open_store()?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let envelope = runtime.block_on(async {
                let engine =
                    crate::engine::build(store.clone(), tavo_engine::McpStart::Wait).await?;
                Ok::<Value, anyhow::Error>(call_tool(&engine, chat, &name, args, yes).await)
            })?;
            println!("{}", serde_json::to_string_pretty(&envelope)?);
            let ok = envelope.get("ok").and_then(Value::as_bool).unwrap_or(false);
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}

/// Calls tool `name` as `tavo tool call` does — the engine's dispatcher (validation, approval
/// policy, `tools.callTimeoutSeconds`) behind the terminal's door — and answers its envelope.
/// `yes`: the user has consented to a confirmation (`--yes`, or a flag that is the consent).
pub(crate) async fn call_tool(
    engine: &tavo_engine::Engine,
    chat: Option<i64>,
    name: &str,
    args: Value,
    yes: bool,
) -> Value {
    let call = ToolCall::new("cli", name, args);
    let door = TerminalDoor { yes };
    engine
        .dispatcher()
        .call_direct(
            Origin::Cli,
            chat.map(ChatId),
            DirectTarget::Named(&call),
            &door,
        )
        .await
        .completed
        .envelope
}

/// The terminal's door: `--yes` is the user's consent to calls that ask for confirmation
/// (without it they are refused with what to do); questions are asked on the terminal.
struct TerminalDoor {
    yes: bool,
}

impl Door for TerminalDoor {
    fn confirm<'a>(
        &'a self,
        call: PendingCall<'a>,
    ) -> DoorFuture<'a, Result<Confirmation, ToolError>> {
        let result = if self.yes {
            Ok(Confirmation::Allow { remember: false })
        } else {
            let tool = call.tool;
            eprintln!("{tool} asks for confirmation; re-run with --yes to allow it");
            Err(ToolError::denied(format!(
                "{tool} asks for confirmation and was not run; pass --yes to allow it"
            ))
            .with_details(json!({ "needsConfirmation": true })))
        };
        Box::pin(std::future::ready(result))
    }

    fn ask<'a>(&'a self, _call: PendingCall<'a>, question: Question) -> DoorFuture<'a, UserAnswer> {
        // The terminal blocks while the user types; nothing else runs on this runtime.
        let answer = ask_on_terminal(&question).unwrap_or_else(|e| {
            eprintln!("error: cannot read the answer: {e}");
            UserAnswer::Cancelled
        });
        Box::pin(std::future::ready(answer))
    }
}

/// Asks a paused call's question on the terminal; without a terminal the question is cancelled.
fn ask_on_terminal(q: &Question) -> anyhow::Result<UserAnswer> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        eprintln!("(no terminal to ask: {:?} — cancelled)", q.question);
        return Ok(UserAnswer::Cancelled);
    }
    let mut err = std::io::stderr();
    writeln!(err, "? {}", q.question)?;
    for (i, o) in q.options.iter().enumerate() {
        let mark = if q.default_value.as_deref() == Some(o.value.as_str()) {
            " (default)"
        } else {
            ""
        };
        let desc = o
            .description
            .as_deref()
            .map(|d| format!(" — {d}"))
            .unwrap_or_default();
        writeln!(err, "  {}. {}{}{}", i + 1, o.label, desc, mark)?;
    }
    let hint = match (q.options.is_empty(), q.allow_other) {
        (true, _) => q
            .placeholder
            .clone()
            .unwrap_or_else(|| "type your answer".into()),
        (false, true) => "a number, or type your own answer".into(),
        (false, false) => "a number".into(),
    };
    loop {
        write!(err, "[{hint}; empty line cancels] > ")?;
        err.flush()?;
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            return Ok(UserAnswer::Cancelled);
        }
        let line = line.trim();
        if line.is_empty() {
            if let Some(d) = &q.default_value
                && q.options.iter().any(|o| &o.value == d)
            {
                return Ok(UserAnswer::Option { value: d.clone() });
            }
            return Ok(UserAnswer::Cancelled);
        }
        if let Ok(n) = line.parse::<usize>()
            && let Some(o) = n.checked_sub(1).and_then(|i| q.options.get(i))
        {
            return Ok(UserAnswer::Option {
                value: o.value.clone(),
            });
        }
        if let Some(o) = q.options.iter().find(|o| o.value == line) {
            return Ok(UserAnswer::Option {
                value: o.value.clone(),
            });
        }
        if q.allow_other {
            return Ok(UserAnswer::Custom {
                text: line.to_owned(),
            });
        }
        writeln!(err, "please choose one of the numbers above")?;
    }
}
