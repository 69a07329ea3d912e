//! `tavo llm decode|encode`: the provider codecs as command-line tools, and the documented
//! contract of the canonical event stream (one JSON object per line on stdout).

use std::io::{Read, Write};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand, ValueEnum};
use tavo_llm::{ChatRequest, Protocol};

use crate::context::Context;

/// The protocol names of the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ProtocolArg {
    OpenaiChat,
    OpenaiResponses,
    Anthropic,
    Gemini,
}

impl From<ProtocolArg> for Protocol {
    fn from(p: ProtocolArg) -> Self {
        match p {
            ProtocolArg::OpenaiChat => Protocol::OpenaiChat,
            ProtocolArg::OpenaiResponses => Protocol::OpenaiResponses,
            ProtocolArg::Anthropic => Protocol::Anthropic,
            ProtocolArg::Gemini => Protocol::Gemini,
        }
    }
}

#[derive(Debug, Args)]
pub struct LlmArgs {
    #[command(subcommand)]
    command: LlmCommand,
}

#[derive(Debug, Subcommand)]
enum LlmCommand {
    /// Read a provider response from stdin (a whole body, or a raw SSE stream with
    /// --stream) and print the canonical events as JSON lines.
    Decode {
        #[arg(long, value_enum)]
        protocol: ProtocolArg,
        /// The input is a Server-Sent Events stream rather than one JSON body.
        #[arg(long)]
        stream: bool,
    },
    /// Read a canonical request (JSON) from stdin and print the provider's request body.
    /// Warnings (dropped native blocks, rewritten tool schemas) go to stderr.
    Encode {
        #[arg(long, value_enum)]
        protocol: ProtocolArg,
    },
}

pub fn run(args: LlmArgs, _ctx: &Context) -> anyhow::Result<ExitCode> {
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .context("reading stdin")?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.command {
        LlmCommand::Decode { protocol, stream } => {
            let protocol = Protocol::from(protocol);
            let events = if stream {
                tavo_llm::decode_stream(protocol, &input)
            } else {
                tavo_llm::decode_body(protocol, &input)
            };
            for e in &events {
                writeln!(out, "{}", e.to_json_line())?;
            }
        }
        LlmCommand::Encode { protocol } => {
            let req: ChatRequest = serde_json::from_slice(&input)
                .context("stdin is not a canonical request (see `tavo llm encode --help`)")?;
            let enc = tavo_llm::encode(protocol.into(), &req)?;
            for w in &enc.warnings {
                eprintln!("warning: {w}");
            }
            serde_json::to_writer_pretty(&mut out, &enc.body)?;
            writeln!(out)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
