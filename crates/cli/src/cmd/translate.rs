//! `tavo translate --message ID [--to LANG] [--connection NAME] [--json]`: one message
//! translated (Tavo §11.5) and the translation stored on it, the original untouched. The
//! language is `--to`, else the chat's `translation.language`, else the `translation.language`
//! setting, else English; the connection likewise (`translation.connection`, else the default).

use std::process::ExitCode;
use tavo_model::MessageId;

use clap::Args;

use crate::context::Context;
use crate::library::open_store;

/// `tavo translate` flags.
#[derive(Debug, Args)]
pub struct TranslateArgs {
    /// The message to translate.
    #[arg(long, value_name = "ID")]
    message: i64,
    /// The target language, as the prompt names it (`French`, `简体中文`, `ja`).
    #[arg(long, value_name = "LANG")]
    to: Option<String>,
    /// The connection to use instead of `translation.connection` / the default.
    #[arg(long, value_name = "NAME")]
    connection: Option<String>,
    /// Print `{messageId, language, text, connection}`.
    #[arg(long)]
    json: bool,
}

/// Runs `tavo translate`.
pub fn run(args: TranslateArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (message, to, connection) = (args.message, args.to, args.connection);
    let result = runtime.block_on(async move {
        let engine = crate::engine::build(store, tavo_engine::McpStart::Off).await?;
        anyhow::Ok(
            engine
                .translate_message(MessageId(message), to, connection)
                .await,
        )
    });
    runtime.shutdown_background();
    match result? {
        Ok(t) if args.json => println!("{}", serde_json::to_string_pretty(&t)?),
        Ok(t) => println!("{}", t.text),
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}
