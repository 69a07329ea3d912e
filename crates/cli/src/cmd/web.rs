//! `tavo fetch`, `tavo search` and `tavo search-api`: the web tools from a terminal.
//!
//! `fetch` prints exactly what the model receives. A reply's cursor cache lives in memory; a
//! terminal has no reply, so the CLI keeps the cache in `<data-dir>/cache/web-fetch.json` for
//! 30 minutes, which makes `tavo fetch --cursor C` work across invocations with the same
//! semantics (no re-download, evicted or stale cursors fail, foreign cursors are invalid).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, anyhow, bail};
use clap::{Args, Subcommand};
use serde::{Deserialize, Serialize};
use tavo_web::search::{SearchApi, SearchArgs, SearchDepth, SearchSettings, TavilyClient};
use tavo_web::{FetchArgs, FetchCache, FetchError, FetchRequest, WebFetcher};

use crate::context::Context;
use crate::library::open_store;

/// How long the CLI's fetch cache (and so its cursors) stays valid.
const CLI_CACHE_TTL: Duration = Duration::from_secs(30 * 60);

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
    let args = match cmd.cursor {
        Some(cursor) => FetchArgs::Cursor(cursor),
        None => {
            let url = cmd.url.ok_or_else(|| anyhow!("give a URL or --cursor"))?;
            let headers = cmd
                .headers
                .iter()
                .map(|h| parse_header(h))
                .collect::<anyhow::Result<Vec<_>>>()?;
            FetchArgs::Url(FetchRequest { url, headers })
        }
    };
    let fetcher = WebFetcher::new(tavo_tools::web::load_fetch_policy(&open_store(ctx)?))?;
    let cache_path = ctx.data_dir().join("cache").join("web-fetch.json");
    let (cache, stale) = load_cache(&cache_path, &fetcher);
    let is_cursor = matches!(args, FetchArgs::Cursor(_));
    if let (true, FetchArgs::Cursor(cursor)) = (stale, &args) {
        // A cursor of the stale cache has expired; anything else was never valid.
        return Err(report(match cache.page(cursor) {
            Ok(_) | Err(FetchError::CursorExpired) => FetchError::CursorExpired,
            Err(other) => other,
        }));
    }
    let cache = if stale { fetcher.new_cache() } else { cache };
    let cache = Mutex::new(cache);
    let fetched = runtime()?.block_on(tavo_tools::web::fetch_page(&fetcher, &cache, args));
    let fetched = fetched.map_err(report)?;
    let result = &fetched.page;
    if !is_cursor && result.next_cursor.is_some() {
        let cache = cache
            .into_inner()
            .map_err(|_| anyhow!("the fetch cache lock was poisoned"))?;
        if let Err(e) = save_cache(&cache_path, &cache) {
            eprintln!("warning: could not save the page cache ({e:#}); --cursor will not work");
        }
    }
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

fn report(err: FetchError) -> anyhow::Error {
    anyhow!("{} ({})", err, err.code())
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

/// The on-disk CLI cache: a reply's cache plus when it was saved.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SavedCache {
    saved_at_ms: u64,
    cache: FetchCache,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The saved cache and whether it is stale; a fresh cache when none is readable.
fn load_cache(path: &Path, fetcher: &WebFetcher) -> (FetchCache, bool) {
    let saved = std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<SavedCache>(&bytes).ok());
    match saved {
        Some(saved) => {
            let age = now_ms().saturating_sub(saved.saved_at_ms);
            (saved.cache, u128::from(age) > CLI_CACHE_TTL.as_millis())
        }
        None => (fetcher.new_cache(), false),
    }
}

fn save_cache(path: &Path, cache: &FetchCache) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let tmp: PathBuf = path.with_extension("json.tmp");
    let saved = SavedCache {
        saved_at_ms: now_ms(),
        cache: cache.clone(),
    };
    std::fs::write(&tmp, serde_json::to_vec(&saved)?)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

fn load_settings(ctx: &Context) -> anyhow::Result<SearchSettings> {
    let store = open_store(ctx)?;
    let value = store.setting_get(SearchSettings::SETTINGS_KEY)?;
    let mut settings: SearchSettings = match value {
        Some(v) => serde_json::from_value(v).with_context(|| {
            format!(
                "the saved setting {} is not valid",
                SearchSettings::SETTINGS_KEY
            )
        })?,
        None => SearchSettings::default(),
    };
    settings.normalise();
    Ok(settings)
}

fn save_settings(ctx: &Context, settings: &SearchSettings) -> anyhow::Result<()> {
    let store = open_store(ctx)?;
    store.setting_set(
        SearchSettings::SETTINGS_KEY,
        &serde_json::to_value(settings)?,
    )?;
    Ok(())
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
    let args = SearchArgs::from_json(&json_args).map_err(|e| anyhow!("{e} ({})", e.code()))?;
    let settings = load_settings(ctx)?;
    let Some(api) = settings.runnable() else {
        bail!(
            "no complete default search API; add one with `tavo search-api add --name NAME --api-key-env VAR` (search_not_configured)"
        );
    };
    let client = match std::env::var(TAVILY_URL_ENV) {
        Ok(url) if !url.is_empty() => TavilyClient::with_loopback_base_url(&url),
        _ => TavilyClient::new(),
    }
    .map_err(|e| anyhow!("{e}"))?;
    let output = runtime()?
        .block_on(client.search(api, &args))
        .map_err(|e| anyhow!("{e} ({})", e.code()))?;
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
    let mut settings = load_settings(ctx)?;
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
            let depth = SearchDepth::parse(&add.depth).ok_or_else(|| {
                anyhow!(
                    "--depth {:?}: use basic, advanced, fast or ultra-fast",
                    add.depth
                )
            })?;
            let id = add.id.clone().unwrap_or_else(|| settings.next_id());
            let api = SearchApi {
                search_depth: depth,
                chunks_per_source: add.chunks,
                max_results: add.max_results,
                ..SearchApi::tavily(id.clone(), add.name.clone(), api_key)
            };
            let complete = api.is_complete();
            settings.save(api).map_err(|e| anyhow!("{e}"))?;
            if add.default {
                settings.set_default(&id).map_err(|e| anyhow!("{e}"))?;
            }
            save_settings(ctx, &settings)?;
            if !complete {
                eprintln!("note: saved without an API key; it cannot run until a key is added");
            }
            println!("{id}");
        }
        SearchApiCmd::List { json } => {
            if json {
                let apis: Vec<serde_json::Value> = settings
                    .apis
                    .iter()
                    .map(|a| {
                        serde_json::json!({
                            "id": a.id,
                            "name": a.name,
                            "provider": a.provider,
                            "searchDepth": a.search_depth,
                            "chunksPerSource": a.chunks_per_source,
                            "maxResults": a.max_results,
                            "complete": a.is_complete(),
                            "apiKey": a.masked_key(),
                        })
                    })
                    .collect();
                let out = serde_json::json!({ "defaultId": settings.default_id, "apis": apis });
                println!("{}", serde_json::to_string_pretty(&out)?);
            } else {
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
            settings.remove(&id).map_err(|e| anyhow!("{e}"))?;
            save_settings(ctx, &settings)?;
        }
        SearchApiCmd::Default { id } => {
            settings.set_default(&id).map_err(|e| anyhow!("{e}"))?;
            save_settings(ctx, &settings)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tavo_web::search::{TimeRange, Topic};

    #[test]
    fn header_flags_split_on_the_first_colon() {
        let parsed = parse_header("Authorization: Bearer a:b").ok();
        assert_eq!(parsed, Some(("Authorization".into(), "Bearer a:b".into())));
        assert!(parse_header("no colon").is_err());
        assert!(parse_header(": v").is_err());
    }

    #[test]
    fn topic_and_range_parsing_lives_in_the_library() {
        // The CLI passes strings through; the library's validation is the single source.
        let args = SearchArgs::from_json(
            &serde_json::json!({"query": "q", "topic": "news", "time_range": "week"}),
        );
        let args = args.ok();
        assert_eq!(args.as_ref().and_then(|a| a.topic), Some(Topic::News));
        assert_eq!(args.and_then(|a| a.time_range), Some(TimeRange::Week));
    }
}
