//! `tavo tts …`: text-to-speech (Tavo §14.1–14.2) and the voice connections, bindings and
//! settings it uses.
//!
//! - `tavo tts say TEXT -o FILE [--character ID | --persona ID | --connection NAME] [--voice V]
//!   [--rules] [--json]`: synthesizes TEXT and writes the audio to FILE (mp3, or wav for
//!   Gemini). With `--character`/`--persona` that binding's connection and voice speak it;
//!   otherwise `--connection` (default: the default voice connection) with `--voice` (default:
//!   the connection's `voice` option). `--rules` first applies the playback rules. The audio is
//!   kept in the TTS cache too, so the same text and voice are synthesized once.
//! - `tavo tts connection add|list|show|update|remove|default`: the voice connection book
//!   (`tts.connections`). Keys are write-only: every output masks them.
//! - `tavo tts bind --character ID|--persona ID --voice V [--connection NAME]`, `tavo tts
//!   unbind --character ID|--persona ID`, `tavo tts bindings [--json]`: voice bindings
//!   (`tts.bindings`; Tavo's 角色语音绑定).
//! - `tavo tts settings [--json] [--set JSON]`: the voice settings (`tts.autoPlay` and the §14.2
//!   switches, also settable with `tavo settings set`, and the regex rules `tts.rules`); `--set`
//!   takes a partial object, checked whole (an error names the field: `rules[1].regex`).
//! - `tavo tts cache [--clear]`: the TTS cache's size, or empty it.
//!
//! Everything runs through `tavo_engine::speech`, the code `tavo serve` and the model's
//! `tavo_tts_play` run. Playback itself happens in an open app (`tavo serve`); the CLI writes
//! files.

use std::process::ExitCode;

use anyhow::{Context as _, anyhow};
use clap::{Args, Subcommand};
use serde_json::{Map, Value, json};
use tavo_engine::Engine;
use tavo_engine::speech::{SayRequest, SayVoice, SpeechError, VoiceBinding, VoiceTarget};
use tavo_llm::media::speech::{VoiceConnection, VoicePlatform};
use tavo_llm::media::{KeyChange, MediaPatch, Platform as _};

use crate::context::Context;
use crate::library::open_store;

/// `tavo tts` flags.
#[derive(Debug, Args)]
pub struct TtsArgs {
    #[command(subcommand)]
    command: TtsCommand,
}

/// Whose binding: exactly one of the two.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
struct Target {
    /// A character's voice binding.
    #[arg(long, value_name = "ID")]
    character: Option<i64>,
    /// A persona's voice binding.
    #[arg(long, value_name = "ID")]
    persona: Option<i64>,
}

impl Target {
    fn get(&self) -> Option<VoiceTarget> {
        self.character
            .map(VoiceTarget::Character)
            .or(self.persona.map(VoiceTarget::Persona))
    }
}

#[derive(Debug, Subcommand)]
enum TtsCommand {
    /// Synthesize TEXT into an audio file.
    Say {
        /// What to say.
        text: String,
        /// Where to write the audio.
        #[arg(short = 'o', long, value_name = "FILE")]
        output: std::path::PathBuf,
        /// Speak with this character's bound voice.
        #[arg(long, value_name = "ID", conflicts_with_all = ["persona", "connection", "voice"])]
        character: Option<i64>,
        /// Speak with this persona's bound voice.
        #[arg(long, value_name = "ID", conflicts_with_all = ["connection", "voice"])]
        persona: Option<i64>,
        /// A voice connection by name (default: the default voice connection).
        #[arg(long, value_name = "NAME")]
        connection: Option<String>,
        /// The voice id (default: the connection's `voice` option).
        #[arg(long, value_name = "V")]
        voice: Option<String>,
        /// Apply the playback rules (tts.onlyQuotes, tts.rules, …) first.
        #[arg(long)]
        rules: bool,
        /// Print `{file, mimeType, size, cached, connection, voice, text}`.
        #[arg(long)]
        json: bool,
    },
    /// Voice connections (keys are never printed).
    Connection {
        #[command(subcommand)]
        command: ConnectionCommand,
    },
    /// Bind a character's or persona's voice.
    Bind {
        #[command(flatten)]
        target: Target,
        /// The voice id (`alloy`, `Kore`, an ElevenLabs voice id).
        #[arg(long, value_name = "V")]
        voice: String,
        /// A voice connection by name (default: the default one at the time of speaking).
        #[arg(long, value_name = "NAME")]
        connection: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Remove a character's or persona's voice binding.
    Unbind {
        #[command(flatten)]
        target: Target,
    },
    /// List the voice bindings.
    Bindings {
        #[arg(long)]
        json: bool,
    },
    /// Show (or with --set change) the voice settings.
    Settings {
        /// A partial settings object, e.g. '{"onlyQuotes": true, "rules": [{"name": "ooc",
        /// "regex": "/\\(OOC.*?\\)/i", "mode": "exclude"}]}'.
        #[arg(long, value_name = "JSON")]
        set: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The TTS cache's size; --clear empties it.
    Cache {
        #[arg(long)]
        clear: bool,
    },
}

#[derive(Debug, Subcommand)]
enum ConnectionCommand {
    /// Add a voice connection (the first one becomes the default).
    Add {
        name: String,
        /// openai, gemini or elevenlabs.
        #[arg(long)]
        platform: String,
        /// The voice model (tts-1, gemini-2.5-flash-preview-tts, eleven_multilingual_v2, …).
        #[arg(long)]
        model: String,
        /// Default: the platform's endpoint (https://api.openai.com/v1, …).
        #[arg(long)]
        base_url: Option<String>,
        /// The API key, stored with the data and never printed.
        #[arg(long, conflicts_with = "api_key_env")]
        api_key: Option<String>,
        /// Read the key from this environment variable at request time instead.
        #[arg(long)]
        api_key_env: Option<String>,
        /// The voice used when a call names none.
        #[arg(long, value_name = "V")]
        voice: Option<String>,
        /// A platform option, KEY=VALUE (VALUE as JSON, else text): responseFormat, speed,
        /// instructions (openai), languageCode (gemini), outputFormat, voiceSettings
        /// (elevenlabs).
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// Make it the default voice connection.
        #[arg(long)]
        default: bool,
        #[arg(long)]
        json: bool,
    },
    /// List the voice connections (keys masked).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show one voice connection as JSON (key masked).
    Show { name: String },
    /// Change fields of a voice connection; the others stay.
    Update {
        name: String,
        /// A new name.
        #[arg(long, value_name = "NEW")]
        rename: Option<String>,
        #[arg(long)]
        platform: Option<String>,
        #[arg(long)]
        base_url: Option<String>,
        #[arg(long)]
        model: Option<String>,
        #[arg(long, conflicts_with_all = ["api_key_env", "no_key"])]
        api_key: Option<String>,
        #[arg(long, conflicts_with = "no_key")]
        api_key_env: Option<String>,
        /// Forget the key.
        #[arg(long)]
        no_key: bool,
        /// The voice used when a call names none.
        #[arg(long, value_name = "V")]
        voice: Option<String>,
        /// Set an option, KEY=VALUE (VALUE as JSON, else text).
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// Remove an option.
        #[arg(long = "unset-option", value_name = "KEY")]
        unset: Vec<String>,
        /// Make it the default.
        #[arg(long)]
        default: bool,
        #[arg(long)]
        json: bool,
    },
    /// Remove a voice connection.
    Remove { name: String },
    /// Make a voice connection the default.
    Default { name: String },
}

/// The `--option` flags, with `--voice` as the `voice` option.
fn parse_options(raw: &[String], voice: Option<String>) -> anyhow::Result<Map<String, Value>> {
    let mut out = super::media::parse_options(raw)?;
    if let Some(v) = voice {
        out.insert("voice".into(), Value::String(v));
    }
    Ok(out)
}

fn fail(e: &SpeechError) -> ExitCode {
    match e.path() {
        Some(p) if !e.to_string().starts_with(p) => {
            eprintln!("error: {p}: {e} ({})", e.code());
        }
        _ => eprintln!("error: {e} ({})", e.code()),
    }
    ExitCode::FAILURE
}

fn print_book(view: &Value, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(view)?);
        return Ok(());
    }
    let default = view["default"].as_str();
    let list = view["connections"].as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        println!("no voice connections (add one with `tavo tts connection add`)");
    }
    for c in list {
        let name = c["name"].as_str().unwrap_or_default();
        println!(
            "{}{}\t{}\t{}\t{}\t{}\t{}",
            if Some(name) == default { "* " } else { "  " },
            name,
            c["platform"].as_str().unwrap_or_default(),
            c["model"].as_str().unwrap_or_default(),
            c["options"]["voice"].as_str().unwrap_or("-"),
            c["baseUrl"].as_str().unwrap_or_default(),
            c["apiKey"]
                .as_str()
                .map(str::to_owned)
                .or_else(|| c["apiKeyEnv"].as_str().map(|v| format!("${v}")))
                .unwrap_or_else(|| "no key".into()),
        );
    }
    Ok(())
}

/// Runs `tavo tts`.
pub fn run(args: TtsArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = runtime.block_on(async move {
        let engine = crate::engine::build(store, tavo_engine::McpStart::Off).await?;
        run_in(&engine, args.command).await
    });
    runtime.shutdown_background();
    result
}

async fn run_in(engine: &Engine, command: TtsCommand) -> anyhow::Result<ExitCode> {
    let speech = engine.speech();
    match command {
        TtsCommand::Say {
            text,
            output,
            character,
            persona,
            connection,
            voice,
            rules,
            json,
        } => {
            let target = character
                .map(VoiceTarget::Character)
                .or(persona.map(VoiceTarget::Persona));
            let voice = match target {
                Some(t) => SayVoice::Bound(t),
                None => SayVoice::Connection {
                    name: connection,
                    voice,
                },
            };
            let request = SayRequest {
                text,
                voice,
                apply_playback_rules: rules,
            };
            let spoken = match speech.say(request).await {
                Ok(s) => s,
                Err(e) => return Ok(fail(&e)),
            };
            let bytes = match speech.audio(spoken.name.clone()).await {
                Ok(Some((bytes, _))) => bytes,
                Ok(None) => anyhow::bail!("the audio left the TTS cache before it was read"),
                Err(e) => return Ok(fail(&e)),
            };
            std::fs::write(&output, &bytes)
                .with_context(|| format!("writing {}", output.display()))?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&json!({
                        "file": output.display().to_string(), "mimeType": spoken.mime,
                        "size": bytes.len(), "cached": spoken.cached,
                        "connection": spoken.connection, "voice": spoken.voice, "text": spoken.text,
                    }))?
                );
            } else {
                println!("{}", output.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        TtsCommand::Connection { command } => connection(engine, command).await,
        TtsCommand::Bind {
            target,
            voice,
            connection,
            json,
        } => {
            let Some(t) = target.get() else {
                anyhow::bail!("give --character ID or --persona ID");
            };
            match speech
                .bind(t, Some(VoiceBinding { connection, voice }))
                .await
            {
                Ok(all) => print_bindings(&all, json),
                Err(e) => Ok(fail(&e)),
            }
        }
        TtsCommand::Unbind { target } => {
            let Some(t) = target.get() else {
                anyhow::bail!("give --character ID or --persona ID");
            };
            match speech.bind(t, None).await {
                Ok(all) => print_bindings(&all, false),
                Err(e) => Ok(fail(&e)),
            }
        }
        TtsCommand::Bindings { json } => match speech.bindings().await {
            Ok(all) => print_bindings(&all, json),
            Err(e) => Ok(fail(&e)),
        },
        TtsCommand::Settings { set, json } => {
            let result = match set {
                Some(raw) => {
                    let patch: Value = serde_json::from_str(&raw)
                        .map_err(|e| anyhow!("--set must be a JSON object: {e}"))?;
                    speech.update_settings(patch).await
                }
                None => speech.settings().await,
            };
            match result {
                Ok(s) => {
                    let v = serde_json::to_value(&s)?;
                    if json {
                        println!("{}", serde_json::to_string_pretty(&v)?);
                    } else {
                        for (k, val) in v.as_object().into_iter().flatten() {
                            if k != "rules" {
                                println!("{k}\t{val}");
                            }
                        }
                        for r in s.playback.rules {
                            println!(
                                "rule\t{}\t{:?}\t{}\t{}",
                                r.name,
                                r.mode,
                                r.regex,
                                if r.enabled { "on" } else { "off" }
                            );
                        }
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => Ok(fail(&e)),
            }
        }
        TtsCommand::Cache { clear } => {
            let result = if clear {
                speech.clear_cache()
            } else {
                speech.cache_usage()
            };
            match result {
                Ok(v) => {
                    println!("{v}");
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => Ok(fail(&e)),
            }
        }
    }
}

fn print_bindings(
    all: &tavo_engine::speech::VoiceBindings,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if json {
        println!("{}", serde_json::to_string_pretty(all)?);
        return Ok(ExitCode::SUCCESS);
    }
    if all.characters.is_empty() && all.personas.is_empty() {
        println!("no voice bindings (bind one with `tavo tts bind`)");
    }
    for (kind, map) in [("character", &all.characters), ("persona", &all.personas)] {
        for (id, b) in map {
            println!(
                "{kind} {id}\t{}\t{}",
                b.connection.as_deref().unwrap_or("(default)"),
                b.voice
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn connection(engine: &Engine, command: ConnectionCommand) -> anyhow::Result<ExitCode> {
    let speech = engine.speech();
    let (view, json) = match command {
        ConnectionCommand::List { json } => (speech.connections().await, json),
        ConnectionCommand::Show { name } => {
            let view = match speech.connections().await {
                Ok(v) => v,
                Err(e) => return Ok(fail(&e)),
            };
            let found = view["connections"]
                .as_array()
                .and_then(|l| l.iter().find(|c| c["name"] == name.as_str()).cloned());
            let Some(mut c) = found else {
                eprintln!(
                    "error: no voice connection named `{name}` (see `tavo tts connection list`)"
                );
                return Ok(ExitCode::FAILURE);
            };
            c["default"] = json!(view["default"] == name.as_str());
            println!("{}", serde_json::to_string_pretty(&c)?);
            return Ok(ExitCode::SUCCESS);
        }
        ConnectionCommand::Add {
            name,
            platform,
            model,
            base_url,
            api_key,
            api_key_env,
            voice,
            options,
            default,
            json,
        } => {
            let options = parse_options(&options, voice)?;
            let view = speech
                .change_connections(move |book| {
                    let mut c = VoiceConnection::new(name, VoicePlatform::parse(&platform)?, model);
                    if let Some(b) = base_url {
                        c.base_url = b;
                    }
                    c.api_key = api_key;
                    c.api_key_env = api_key_env;
                    c.options = options;
                    book.add(c, default)
                })
                .await;
            (view, json)
        }
        ConnectionCommand::Update {
            name,
            rename,
            platform,
            base_url,
            model,
            api_key,
            api_key_env,
            no_key,
            voice,
            options,
            unset,
            default,
            json,
        } => {
            let options = parse_options(&options, voice)?;
            let key = match (api_key, api_key_env, no_key) {
                (Some(k), _, _) => Some(KeyChange::Key(k)),
                (None, Some(v), _) => Some(KeyChange::Env(v)),
                (None, None, true) => Some(KeyChange::None),
                (None, None, false) => None,
            };
            let view = speech
                .change_connections(move |book| {
                    let patch = MediaPatch {
                        name: rename,
                        platform: platform.as_deref().map(VoicePlatform::parse).transpose()?,
                        base_url,
                        model,
                        key,
                        options,
                        unset,
                        make_default: default,
                    };
                    book.update(&name, patch).map(|_| ())
                })
                .await;
            (view, json)
        }
        ConnectionCommand::Remove { name } => (
            speech
                .change_connections(move |book| book.remove(&name).map(|_| ()))
                .await,
            false,
        ),
        ConnectionCommand::Default { name } => (
            speech
                .change_connections(move |book| book.set_default(&name))
                .await,
            false,
        ),
    };
    match view {
        Ok(v) => {
            print_book(&v, json)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(fail(&e)),
    }
}
