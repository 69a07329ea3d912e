//! Image generation and TTS (seed 002 🎨 生图 / 🔊 TTS; seed 000 error rules).
//!
//! This project has no image or TTS provider yet. The tools are registered with the seed's
//! exact schemas so that models see the real contract, and they fail with the seed's code for
//! a missing endpoint or voice binding — `resource_not_found` — until a provider is plugged in
//! through [`Services`](crate::context::Services). Provider refusals are `permission_denied`
//! and other failures `internal_error`, never with the provider's body or a physical path.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tavo_model::{Character, CharacterId, Persona, PersonaId};
use tavo_store::files::FileScope;

use crate::context::{OpContext, store_error};
use crate::error::{ErrorCode, ToolError};
use crate::operation::{OpSpec, Outcome, Safety};
use crate::ops::common::{IdRef, NoArgs, missing};
use crate::ops::files::{ScopeArg, check_name, decode_data_url, resolve_scope};
use crate::ops::require_chat;
use crate::registry::Registry;
use crate::schema::open_object;
use crate::validate::SchemaError;

fn extra_body(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    open_object(
        "Extra fields passed through to the image provider's API (seed, guidance_scale, quality, …).",
    )
}

/// A reference image: a data URL or a virtual path (`files/chat/…`, `files/global/…`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct ImageRef(#[schemars(regex(pattern = r"^(data:|files/(chat|global)/)"))] pub String);

/// `options` of `tavo_image_generate`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImageOptions {
    /// Pixel size such as "1024x1024" (OpenAI-style providers).
    #[serde(default)]
    #[schemars(regex(pattern = r"^[1-9][0-9]*x[1-9][0-9]*$"))]
    pub size: Option<String>,
    /// Aspect ratio such as "16:9" or "1:1" (providers that take ratios).
    #[serde(default)]
    #[schemars(regex(pattern = r"^[1-9][0-9]*:[1-9][0-9]*$"))]
    pub aspect_ratio: Option<String>,
    /// What the image must not contain (NovelAI / SD; ignored by OpenAI and Gemini).
    #[serde(default)]
    pub negative_prompt: Option<String>,
    /// Reference images for img2img: data URLs or virtual paths returned by tavo_file_save
    /// (files/chat/… or files/global/…).
    #[serde(default)]
    pub reference_images: Option<Vec<ImageRef>>,
    /// Extra provider request fields.
    #[serde(default)]
    #[schemars(schema_with = "extra_body")]
    pub extra_body: Option<Map<String, Value>>,
    /// File name to store the image under (same rules as tavo_file_save); the result is its path.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub save_as: Option<String>,
    /// Scope of saveAs: chat (default) or global.
    #[serde(default)]
    pub scope: Option<ScopeArg>,
}

/// Arguments of `tavo_image_generate`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImageArgs {
    /// What to draw. Non-empty.
    #[schemars(length(min = 1))]
    pub prompt: String,
    /// Size, ratio, negative prompt, reference images, provider extras, storage.
    #[serde(default)]
    pub options: Option<ImageOptions>,
}

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

fn extension_of(mime: &str) -> &'static str {
    match mime {
        "image/jpeg" => "jpg",
        "image/webp" => "webp",
        "image/gif" => "gif",
        _ => "png",
    }
}

async fn generate(args: ImageArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let opts = args.options.unwrap_or_default();
    if let Some(name) = &opts.save_as {
        check_name("options.saveAs", name)?;
    }
    for (i, ImageRef(r)) in opts.reference_images.iter().flatten().enumerate() {
        if r.starts_with("data:") {
            decode_data_url(r).map_err(|e| {
                ToolError::invalid_at(
                    &format!("options.referenceImages[{i}]"),
                    format!("a data URL: {e}"),
                    "string",
                )
            })?;
        }
    }
    if prompt_is_blank(&args.prompt) {
        return Err(ToolError::invalid_at(
            "prompt",
            "a non-empty prompt",
            "empty string",
        ));
    }
    let scope = resolve_scope(&ctx, opts.scope)?;
    let Some(generator) = ctx.services.image.clone() else {
        return Err(ToolError::new(
            ErrorCode::ResourceNotFound,
            "no image generation endpoint is configured for this chat; tell the user to set one up",
        ));
    };
    let options = json!({
        "size": opts.size, "aspectRatio": opts.aspect_ratio, "negativePrompt": opts.negative_prompt,
        "referenceImages": opts.reference_images.map(|v| v.into_iter().map(|r| r.0).collect::<Vec<_>>()), "extraBody": opts.extra_body,
    });
    let (bytes, mime) = generator.generate(args.prompt, options).await?;
    let name = opts.save_as.unwrap_or_else(|| {
        format!(
            "image-{}.{}",
            chrono::Utc::now().format("%Y%m%d-%H%M%S%3f"),
            extension_of(&mime)
        )
    });
    ctx.blocking("storing the image", move |store| {
        if let FileScope::Chat(id) = scope {
            require_chat(store, Some(id))?;
        }
        let path = store
            .files()
            .save(scope, &name, &bytes)
            .map_err(|e| store_error("storing the image", e))?;
        Outcome::value(json!({"path": path, "mimeType": mime, "size": bytes.len()}))
    })
    .await
}

fn prompt_is_blank(p: &str) -> bool {
    p.trim().is_empty()
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
    let started = player
        .play(chat, args.text, voice, args.options.queue.unwrap_or(false))
        .await?;
    if !started {
        return Err(ToolError::new(
            ErrorCode::InternalError,
            "playback could not start",
        ));
    }
    Outcome::value(json!({"playing": true}))
}

async fn stop(_: NoArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let chat = ctx.chat_id()?;
    match ctx.services.tts.clone() {
        Some(player) => {
            player.stop(chat).await?;
            Outcome::value(json!({"stopped": true}))
        }
        None => Outcome::value(json!({"stopped": false})),
    }
}

/// Registers image generation and TTS.
pub fn register(r: &mut Registry) -> Result<(), SchemaError> {
    r.add(
        OpSpec::new(
            "image.generate",
            Safety::Write,
            "Generate an image with the chat's image API. options: size (\"1024x1024\"), aspectRatio (\"16:9\"), \
             negativePrompt, referenceImages (data URLs or files/chat/… paths, for img2img), extraBody \
             (provider fields such as seed), saveAs (file name) and scope. The image is stored as a file and \
             shown after this call; the result is its path.",
        )
        .keywords(&["image", "picture", "draw", "illustration", "generate image", "生图"]),
        generate,
    )?;
    r.add(
        OpSpec::new(
            "tts.play",
            Safety::Read,
            "Speak text aloud with the TTS voice bound to a character ({voice: {character: id}}) or a persona \
             ({voice: {persona: id}}); the voice must be chosen explicitly. queue waits for the current speech.",
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
