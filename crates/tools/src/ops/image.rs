//! Image generation (seed 002 🎨 生图, seed 000 `tavo_image_generate`; Tavo §14.3).
//!
//! The operation resolves the arguments (reference images read from data URLs or the chat's
//! and global file storage), asks the image service of [`Services`](crate::context::Services)
//! — the engine's, over the chat's image connection — and stores the image. Without an image
//! service or connection it fails with the seed's `resource_not_found`; provider refusals are
//! `permission_denied` and other failures `internal_error`, never with the provider's body or
//! a physical path.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tavo_store::files::FileScope;

use crate::context::{OpContext, store_error};
use crate::error::{ErrorCode, ToolError};
use crate::operation::{OpSpec, Outcome, Safety};
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

/// Registers image generation.
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
    )
}
