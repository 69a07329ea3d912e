//! TTS playback (seed 002 🔊 TTS, seed 000 `tavo_tts_play` / `tavo_tts_stop`; Tavo §14.1).
//!
//! The model must choose a voice explicitly (a character's or a persona's binding). A missing
//! target or binding is `resource_not_found`, a playback that cannot start `internal_error`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tavo_model::{Character, CharacterId, Persona, PersonaId};

use crate::context::{OpContext, store_error};
use crate::error::{ErrorCode, ToolError};
use crate::operation::{OpSpec, Outcome, Safety};
use crate::ops::common::{IdRef, NoArgs, missing};
use crate::ops::require_chat;
use crate::registry::Registry;
use crate::validate::SchemaError;

/// A voice target: a character's or a persona's voice binding.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum VoiceArg {
    /// `{ "character": 12 }` or `{ "character": { "id": 12 } }`.
    Character(CharacterVoice),
    /// `{ "persona": 5 }` or `{ "persona": { "id": 5 } }`.
    Persona(PersonaVoice),
}

/// A character's voice.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CharacterVoice {
    /// Character id or `{id}`.
    pub character: IdRef,
}

/// A persona's voice.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PersonaVoice {
    /// Persona id or `{id}`.
    pub persona: IdRef,
}

/// `options` of `tavo_tts_play`.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlayOptions {
    /// Whose voice binding to use (required for the model: a character or a persona).
    pub voice: VoiceArg,
    /// Queue after what is playing instead of interrupting it (default false).
    #[serde(default)]
    pub queue: Option<bool>,
    /// Apply the chat's playback rules (default false).
    #[serde(default)]
    pub apply_playback_rules: Option<bool>,
}

/// Arguments of `tavo_tts_play`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlayArgs {
    /// The text to speak. Non-empty.
    #[schemars(length(min = 1))]
    pub text: String,
    /// The voice and playback options.
    pub options: PlayOptions,
}

async fn play(args: PlayArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    if args.text.trim().is_empty() {
        return Err(ToolError::invalid_at(
            "text",
            "non-empty text",
            "empty string",
        ));
    }
    let voice = args.options.voice;
    ctx.blocking("checking the voice", move |store| {
        require_chat(store, Some(chat))?;
        match voice {
            VoiceArg::Character(CharacterVoice { character }) => {
                let id = character.get();
                let found: Option<Character> = store
                    .get(CharacterId(id))
                    .map_err(|e| store_error("checking the voice", e))?;
                found.map(|_| ()).ok_or_else(|| missing("character", id))
            }
            VoiceArg::Persona(PersonaVoice { persona }) => {
                let id = persona.get();
                let found: Option<Persona> = store
                    .get(PersonaId(id))
                    .map_err(|e| store_error("checking the voice", e))?;
                found.map(|_| ()).ok_or_else(|| missing("persona", id))
            }
        }
    })
    .await?;
    let Some(player) = ctx.services.tts.clone() else {
        return Err(ToolError::new(
            ErrorCode::ResourceNotFound,
            "this voice has no TTS binding (no TTS provider is configured); answer in text instead",
        ));
    };
    let voice = match voice {
        VoiceArg::Character(c) => json!({"character": c.character.get()}),
        VoiceArg::Persona(p) => json!({"persona": p.persona.get()}),
    };
    let out = player
        .play(
            chat,
            args.text,
            voice,
            args.options.queue.unwrap_or(false),
            args.options.apply_playback_rules.unwrap_or(false),
        )
        .await?;
    Outcome::value(out)
}

async fn stop(_: NoArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    match ctx.services.tts.clone() {
        Some(player) => {
            let heard = player.stop(chat).await?;
            Outcome::value(json!({"stopped": heard}))
        }
        None => Outcome::value(json!({"stopped": false})),
    }
}

/// Registers TTS playback.
pub fn register(r: &mut Registry) -> Result<(), SchemaError> {
    r.add(
        OpSpec::new(
            "tts.play",
            Safety::Read,
            "Speak text aloud with the TTS voice bound to a character ({voice: {character: id}}) or a persona \
             ({voice: {persona: id}}); the voice must be chosen explicitly. queue waits for the current speech; \
             applyPlaybackRules speaks only what the user's voice settings allow. The result says whether an \
             open app plays it (playing) and why not.",
        )
        .keywords(&["tts", "speak", "voice", "read aloud", "audio", "语音"]),
        play,
    )?;
    r.add(
        OpSpec::new(
            "tts.stop",
            Safety::Read,
            "Stop TTS playback in this chat and clear its queue.",
        )
        .keywords(&["tts", "stop speaking", "voice", "audio"]),
        stop,
    )
}
