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
use tavo_model::ChatId;
use tavo_model::ImageType;
use tavo_store::files::FileScope;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::context::{ImageJob, OpContext, store_error};
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

/// When the generated image is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// Always: under `saveAs`, else a fresh `image-<time>.<ext>` name (the model's tool, whose
    /// image is shown after the call, and `/imagine`).
    Always,
    /// Only with `saveAs`; otherwise the image comes back as a data URL and nothing is stored
    /// (`tavo.image.generate`, `POST /api/images/generate`).
    WhenSaveAs,
}

/// A generated image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedImage {
    /// Its MIME type.
    pub mime: String,
    /// Its size in bytes.
    pub size: usize,
    /// Its virtual path (`files/chat/…`) when it was stored.
    pub path: Option<String>,
    /// Its bytes when it was not stored.
    pub bytes: Option<Vec<u8>>,
}

impl GeneratedImage {
    /// The seed's result: `{path, mimeType, size}` when stored, else `{dataUrl, mimeType}`.
    pub fn to_json(&self) -> Value {
        match (&self.path, &self.bytes) {
            (Some(path), _) => json!({"path": path, "mimeType": self.mime, "size": self.size}),
            (None, Some(bytes)) => json!({
                "dataUrl": format!("data:{};base64,{}", self.mime, STANDARD.encode(bytes)),
                "mimeType": self.mime,
            }),
            (None, None) => json!({"mimeType": self.mime, "size": self.size}),
        }
    }
}

fn bad_option(path: &str, expected: &str, got: &str) -> ToolError {
    ToolError::invalid_at(path, expected, got)
}

fn check_dims(path: &str, value: Option<&str>, sep: char, expected: &str) -> Result<(), ToolError> {
    let Some(v) = value else { return Ok(()) };
    let ok = v.split_once(sep).is_some_and(|(a, b)| {
        [a, b].iter().all(|n| {
            !n.is_empty()
                && !n.starts_with('0')
                && n.len() <= 6
                && n.bytes().all(|c| c.is_ascii_digit())
        })
    });
    if ok {
        Ok(())
    } else {
        Err(bad_option(path, expected, "string"))
    }
}

/// Reads one reference image: a data URL or a stored file of the chat or the global storage.
fn read_reference(
    store: &tavo_store::Store,
    chat: Option<ChatId>,
    index: usize,
    r: &str,
) -> Result<(Vec<u8>, String), ToolError> {
    let path = format!("options.referenceImages[{index}]");
    let bytes = if r.starts_with("data:") {
        decode_data_url(r)
            .map_err(|e| ToolError::invalid_at(&path, format!("a data URL: {e}"), "string"))?
            .1
    } else {
        let (scope, name) = if let Some(name) = r.strip_prefix("files/chat/") {
            let chat = chat.ok_or_else(|| {
                ToolError::new(
                    ErrorCode::ResourceNotFound,
                    format!("{path}: files/chat/… needs a chat, and this call has none"),
                )
            })?;
            (FileScope::Chat(chat.get()), name)
        } else if let Some(name) = r.strip_prefix("files/global/") {
            (FileScope::Global, name)
        } else {
            return Err(bad_option(
                &path,
                "a data URL or a files/chat/… or files/global/… path",
                "string",
            ));
        };
        check_name(&path, name)?;
        store
            .files()
            .load(scope, name)
            .map_err(|e| store_error("reading a reference image", e))?
            .ok_or_else(|| {
                ToolError::new(
                    ErrorCode::ResourceNotFound,
                    format!("{path}: there is no file {r}"),
                )
            })?
    };
    let kind = ImageType::sniff(&bytes).ok_or_else(|| {
        ToolError::invalid_at(&path, "a PNG, JPEG, WebP or GIF image", "other data")
    })?;
    Ok((bytes, kind.mime_type().to_owned()))
}

/// Generates an image for every door: checks the arguments, reads the reference images, asks
/// the image service (over `connection`, else the chat's binding, else the default image
/// connection) and stores the image as `storage` says.
pub async fn generate_image(
    ctx: &OpContext,
    args: ImageArgs,
    connection: Option<String>,
    storage: Storage,
) -> Result<GeneratedImage, ToolError> {
    let opts = args.options.unwrap_or_default();
    if prompt_is_blank(&args.prompt) {
        return Err(ToolError::invalid_at(
            "prompt",
            "a non-empty prompt",
            "empty string",
        ));
    }
    check_dims(
        "options.size",
        opts.size.as_deref(),
        'x',
        "a size such as 1024x1024",
    )?;
    check_dims(
        "options.aspectRatio",
        opts.aspect_ratio.as_deref(),
        ':',
        "a ratio such as 16:9",
    )?;
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
    let store_it = storage == Storage::Always || opts.save_as.is_some();
    let scope = if store_it {
        Some(resolve_scope(ctx, opts.scope)?)
    } else {
        None
    };
    let Some(generator) = ctx.services.image.clone() else {
        return Err(ToolError::new(
            ErrorCode::ResourceNotFound,
            "no image generation endpoint is configured for this chat; tell the user to set one up",
        ));
    };
    let chat = ctx.chat;
    let refs: Vec<String> = opts
        .reference_images
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.0)
        .collect();
    let reference_images = if refs.is_empty() {
        Vec::new()
    } else {
        ctx.blocking("reading the reference images", move |store| {
            require_chat(store, chat)?;
            refs.iter()
                .enumerate()
                .map(|(i, r)| read_reference(store, chat, i, r))
                .collect::<Result<Vec<_>, _>>()
        })
        .await?
    };
    let job = ImageJob {
        chat,
        connection,
        prompt: args.prompt,
        size: opts.size,
        aspect_ratio: opts.aspect_ratio,
        negative_prompt: opts.negative_prompt,
        reference_images,
        extra_body: opts.extra_body.unwrap_or_default(),
    };
    let (bytes, mime) = generator.generate(job).await?;
    let Some(scope) = scope else {
        return Ok(GeneratedImage {
            size: bytes.len(),
            mime,
            path: None,
            bytes: Some(bytes),
        });
    };
    let name = opts.save_as.unwrap_or_else(|| {
        format!(
            "image-{}.{}",
            chrono::Utc::now().format("%Y%m%d-%H%M%S%3f"),
            // Named by what the bytes are, whatever type the provider declared.
            ImageType::sniff(&bytes).map_or("png", ImageType::extension)
        )
    });
    ctx.blocking("storing the image", move |store| {
        if let FileScope::Chat(id) = scope {
            require_chat(store, Some(ChatId(id)))?;
        }
        let path = store
            .files()
            .save(scope, &name, &bytes)
            .map_err(|e| store_error("storing the image", e))?;
        Ok(GeneratedImage {
            mime,
            size: bytes.len(),
            path: Some(path),
            bytes: None,
        })
    })
    .await
}

async fn generate(args: ImageArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let image = generate_image(&ctx, args, None, Storage::Always).await?;
    Outcome::value(image.to_json())
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
