//! The resident tools besides discovery: `tavo_ask_user`, and the slots of `tavo_web_fetch` and
//! `tavo_web_search` (implemented by `crates/web`, reached through [`WebTools`](crate::context::WebTools)).

use serde_json::Value;
use tavo_web::schema;

use crate::ask::{AskUserArgs, Question};
use crate::budget::ToolResult;
use crate::context::OpContext;
use crate::error::{ErrorCode, ToolError};
use crate::operation::{OpSpec, Outcome, Safety};
use crate::registry::Registry;
use crate::validate::SchemaError;

async fn ask_user(args: AskUserArgs, _ctx: OpContext) -> Result<Outcome, ToolError> {
    let question = Question::from_args(args)?;
    let asked = question.clone();
    Ok(Outcome::NeedsUser {
        question,
        resume: Box::new(move |answer| {
            Box::pin(async move {
                let value = asked.resolve(answer)?;
                Ok(Outcome::Done {
                    result: ToolResult::Value(value),
                    expose: Vec::new(),
                })
            })
        }),
    })
}

/// `crates/web`'s schema plus the rule that a call gives `url` or `cursor`, so that the model
/// door refuses an empty call before anything runs.
fn web_fetch_schema() -> Value {
    let mut schema = schema::web_fetch_parameters();
    if let Value::Object(m) = &mut schema {
        m.insert(
            "anyOf".into(),
            serde_json::json!([{"required": ["url"]}, {"required": ["cursor"]}]),
        );
    }
    schema
}

fn no_web(what: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ResourceNotFound,
        format!("{what}; answer without it"),
    )
}

/// Registers `tavo_ask_user`, `tavo_web_fetch` and `tavo_web_search`.
pub fn register(r: &mut Registry) -> Result<(), SchemaError> {
    r.add(
        OpSpec::new(
            "tavo_ask_user",
            Safety::Read,
            "Ask the user a question and wait for the answer. Call it instead of guessing, or of asking in \
             plain text, when information is missing, the request is ambiguous, or you need the user's \
             confirmation or preference and the answer materially changes the result. Offer short options \
             when they fit (strings or {value, label, description?, meta?}); the user may still type their \
             own answer unless allowOther is false, which requires options (and a defaultValue, if given, \
             must be one of them). Do not interrupt for minor details you can safely infer. Returns \
             {status: \"answered\", answer, source: \"option\"|\"custom\"} or {status: \"cancelled\"}.",
        )
        .resident()
        .keywords(&["ask", "question", "confirm", "choose", "select", "user input"]),
        ask_user,
    )?;
    r.add_raw(
        OpSpec::new(
            schema::WEB_FETCH,
            Safety::Read,
            schema::WEB_FETCH_DESCRIPTION,
        )
        .resident()
        .keywords(&["web", "url", "http", "page", "download", "read website"]),
        web_fetch_schema(),
        Box::new(|args: Value, ctx: OpContext| {
            Box::pin(async move {
                let web = ctx
                    .services
                    .web
                    .clone()
                    .ok_or_else(|| no_web("web fetching is not available here"))?;
                Ok(Outcome::json(web.fetch(args).await?))
            })
        }),
    )?;
    r.add_raw(
        OpSpec::new(
            schema::WEB_SEARCH,
            Safety::Read,
            schema::WEB_SEARCH_DESCRIPTION,
        )
        .resident()
        .keywords(&["web", "search", "internet", "news", "google"]),
        schema::web_search_parameters(),
        Box::new(|args: Value, ctx: OpContext| {
            Box::pin(async move {
                let web = ctx
                    .services
                    .web
                    .clone()
                    .ok_or_else(|| no_web("web search is not available here"))?;
                match web.search(args) {
                    Some(fut) => Ok(Outcome::json(fut.await?)),
                    None => Err(no_web("no complete default web search API is configured")),
                }
            })
        }),
    )
}
