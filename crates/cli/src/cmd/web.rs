//! `tavo fetch`, `tavo search` and `tavo search-api`: the web tools from a terminal, through
//! [`tavo_tools::web_session`].
//!
//! `fetch` prints exactly what the model receives. A terminal has no reply to hold the cursor
//! cache, so it lives in `<data-dir>/cache/web-fetch.json` for 30 minutes, which makes
//! `tavo fetch --cursor C` work across invocations with the same semantics (no re-download,
//! evicted or stale cursors fail, foreign cursors are invalid).

use std::process::ExitCode;

use anyhow::{Context as _, anyhow, bail};
use clap::{Args, Subcommand};
use tavo_tools::search_apis;
use tavo_tools::web_session::{self, FetchInput, NewSearchApi};

use crate::context::Context;
use crate::library::open_store;

/// Hidden: points `tavo search` at a local Tavily mock (loopback addresses only).
const TAVILY_URL_ENV: &str = "TAVO_TAVILY_BASE_URL";

/// The web commands, flattened into the top level (`tavo fetch`, `tavo search`, ...).
#[derive(Debug, Subcommand)]
pub enum WebCommand {
    /// Read one HTTP(S) URL as Markdown, exactly as the model receives it (tavo_web_fetch).
    Fetch(FetchCmd),
    /// Search the web with the default saved search API (tavo_web_search).
    Search(SearchCmd),
    /// Manage saved web search APIs (Tavily).
    #[command(subcommand, name = "search-api")]
    SearchApi(SearchApiCmd),
}

/// `tavo fetch URL [--header 'K: V']... [--cursor C] [--json]`.
#[derive(Debug, Args)]
pub struct FetchCmd {
    /// The http:// or https:// URL (ignored when --cursor is given).
    #[arg(required_unless_present = "cursor")]
    pub url: Option<String>,
    /// A request header as 'Name: value' (repeatable).
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Read the next page of a previous fetch (its nextCursor); wins over URL and headers.
    #[arg(long)]
    pub cursor: Option<String>,
    /// Print the result JSON {url, finalUrl, status, contentType, title, markdown, truncated,
    /// nextCursor, warnings}.
    #[arg(long)]
    pub json: bool,
}

/// `tavo search QUERY [--json]`.
#[derive(Debug, Args)]
pub struct SearchCmd {
    /// What to search for.
    pub query: String,
    /// 1–20 results (default: the saved API's default).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=20))]
    pub max_results: Option<u8>,
    /// general, news or finance.
    #[arg(long)]
    pub topic: Option<String>,
    /// day, week, month or year.
    #[arg(long)]
    pub time_range: Option<String>,
    /// Only results from this domain (repeatable).
    #[arg(long = "include-domain")]
    pub include_domains: Vec<String>,
    /// Never results from this domain (repeatable).
    #[arg(long = "exclude-domain")]
    pub exclude_domains: Vec<String>,
    /// Print the result JSON {results: [{title, url, snippet, score?, publishedDate?}], warnings}.
    #[arg(long)]
    pub json: bool,
}

/// `tavo search-api add|list|remove|default`.
#[derive(Debug, Subcommand)]
pub enum SearchApiCmd {
    /// Save a Tavily API (validated locally; no request is made). Prints its id.
    Add(AddApi),
    /// List saved APIs (keys masked). `*` marks the default.
    List {
        /// Print JSON {defaultId, apis: [{id, name, provider, searchDepth, chunksPerSource,
        /// maxResults, complete, apiKey (masked)}]}.
        #[arg(long)]
        json: bool,
    },
    /// Remove a saved API; the first remaining one becomes the default if it was the default.
    Remove {
        /// The API id.
        id: String,
    },
    /// Make a saved API the default (the only one that runs).
    Default {
        /// The API id.
        id: String,
    },
}

/// Fields of a saved Tavily API.
#[derive(Debug, Args)]
pub struct AddApi {
    /// A label for the API.
    #[arg(long)]
    pub name: String,
    /// The id to save under (replaces an API with the same id). Default: a new `tavily-N`.
    #[arg(long)]
    pub id: Option<String>,
    /// Read the Tavily key from this environment variable (keeps it out of the process list).
    #[arg(long, value_name = "VAR", conflicts_with = "api_key")]
    pub api_key_env: Option<String>,
    /// The Tavily key (tvly-...). Without a key the API is saved as incomplete.
    #[arg(long)]
    pub api_key: Option<String>,
    /// basic, advanced, fast or ultra-fast.
    #[arg(long, default_value = "basic")]
    pub depth: String,
    /// Chunks per source, 1–3 (not sent with ultra-fast).
    #[arg(long, default_value_t = 3)]
    pub chunks: u8,
    /// Default number of results, 1–20.
    #[arg(long, default_value_t = 5)]
    pub max_results: u8,
    /// Also make it the default.
    #[arg(long)]
    pub default: bool,
}

/// Dispatches one web command.
pub fn run(command: WebCommand, ctx: &Context) -> anyhow::Result<ExitCode> {
    match command {
        WebCommand::Fetch(cmd) => fetch(cmd, ctx),
        WebCommand::Search(cmd) => search(cmd, ctx),
        WebCommand::SearchApi(cmd) => search_api(cmd, ctx),
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn fetch(cmd: FetchCmd, ctx: &Context) -> anyhow::Result<ExitCode> {
    let input = match cmd.cursor {
        Some(cursor) => FetchInput {
            cursor: Some(cursor),
            ..FetchInput::default()
        },
        None => FetchInput {
            url: Some(cmd.url.ok_or_else(|| anyhow!("give a URL or --cursor"))?),
            headers: cmd
                .headers
                .iter()
                .map(|h| parse_header(h))
                .collect::<anyhow::Result<Vec<_>>>()?,
            cursor: None,
        },
    };
    let store = open_store(ctx)?;
    let cache_path = ctx.data_dir().join("cache").join("web-fetch.json");
    let session = runtime()?.block_on(web_session::fetch_with_saved_cache(
        &store,
        &cache_path,
        input,
    ))?;
    if let Some(warning) = &session.save_warning {
        eprintln!("warning: {warning}");
    }
    let fetched = &session.fetched;
    let result = &fetched.page;
    if cmd.json {
        // The model's JSON, `contentBytes` included.
        println!("{}", serde_json::to_string_pretty(&fetched.to_json())?);
    } else {
        print!("{}", result.markdown);
        if !result.markdown.ends_with('\n') {
            println!();
        }
        for w in &result.warnings {
            eprintln!("warning: {}", w.code());
        }
        if let Some(cursor) = &result.next_cursor {
            eprintln!("next page: tavo fetch --cursor {cursor}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_header(raw: &str) -> anyhow::Result<(String, String)> {
    let (name, value) = raw
        .split_once(':')
        .ok_or_else(|| anyhow!("--header {raw:?}: write it as 'Name: value'"))?;
    let name = name.trim();
    if name.is_empty() {
        bail!("--header: the header name is empty; write it as 'Name: value'");
    }
    Ok((name.to_string(), value.trim().to_string()))
}

fn search(cmd: SearchCmd, ctx: &Context) -> anyhow::Result<ExitCode> {
    let mut json_args = serde_json::json!({ "query": cmd.query });
    if let Some(obj) = json_args.as_object_mut() {
        if let Some(n) = cmd.max_results {
            obj.insert("max_results".into(), n.into());
        }
        if let Some(t) = &cmd.topic {
            obj.insert("topic".into(), t.as_str().into());
        }
        if let Some(t) = &cmd.time_range {
            obj.insert("time_range".into(), t.as_str().into());
        }
        if !cmd.include_domains.is_empty() {
            obj.insert("include_domains".into(), cmd.include_domains.clone().into());
        }
        if !cmd.exclude_domains.is_empty() {
            obj.insert("exclude_domains".into(), cmd.exclude_domains.clone().into());
        }
    }
    let store = open_store(ctx)?;
    let mock = std::env::var(TAVILY_URL_ENV).ok().filter(|u| !u.is_empty());
    let output = runtime()?.block_on(web_session::search_with_saved_api(
        &store,
        &json_args,
        mock.as_deref(),
    ))?;
    if cmd.json {
        println!("{}", serde_json::to_string_pretty(&output)?);
    } else {
        for (i, hit) in output.results.iter().enumerate() {
            println!(
                "{}. {}\n   {}\n   {}\n",
                i + 1,
                hit.title,
                hit.url,
                hit.snippet
            );
        }
        for w in &output.warnings {
            eprintln!("warning: {w}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn search_api(cmd: SearchApiCmd, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    match cmd {
        SearchApiCmd::Add(add) => {
            let api_key = match (&add.api_key, &add.api_key_env) {
                (Some(k), _) => k.trim().to_string(),
                (None, Some(var)) => std::env::var(var)
                    .with_context(|| {
                        format!("--api-key-env: the environment variable {var} is not set")
                    })?
                    .trim()
                    .to_string(),
                (None, None) => String::new(),
            };
            let (id, complete) = web_session::add_search_api(
                &store,
                NewSearchApi {
                    name: add.name,
                    id: add.id,
                    api_key,
                    depth: add.depth,
                    chunks: add.chunks,
                    max_results: add.max_results,
                    default: add.default,
                },
            )?;
            if !complete {
                eprintln!("note: saved without an API key; it cannot run until a key is added");
            }
            println!("{id}");
        }
        SearchApiCmd::List { json } => {
            if json {
                let out = search_apis::list(&store);
                println!("{}", serde_json::to_string_pretty(&out)?);
            } else {
                let settings = tavo_tools::web::load_search_settings(&store);
                for a in &settings.apis {
                    let mark = if settings.default_id.as_deref() == Some(a.id.as_str()) {
                        "*"
                    } else {
                        " "
                    };
                    let state = if a.is_complete() {
                        ""
                    } else {
                        "  (incomplete: no key)"
                    };
                    println!(
                        "{mark} {}\t{}\t{}\tchunks {}\tresults {}{state}",
                        a.id,
                        a.name,
                        a.search_depth.as_str(),
                        a.chunks_per_source,
                        a.max_results
                    );
                }
                if settings.apis.is_empty() {
                    eprintln!("no saved search APIs");
                }
            }
        }
        SearchApiCmd::Remove { id } => {
            search_apis::remove(&store, &id).map_err(|e| anyhow!(e.message))?;
        }
        SearchApiCmd::Default { id } => {
            search_apis::set_default(&store, &id).map_err(|e| anyhow!(e.message))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_flags_split_on_the_first_colon() {
        let parsed = parse_header("Authorization: Bearer a:b").ok();
        assert_eq!(parsed, Some(("Authorization".into(), "Bearer a:b".into())));
        assert!(parse_header("no colon").is_err());
        assert!(parse_header(": v").is_err());
    }
}
