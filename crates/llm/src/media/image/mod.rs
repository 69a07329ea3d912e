//! Image generation (Tavo §14.3): one codec per platform — a pure request builder and a pure
//! response parser — and [`generate`], the HTTP call through the crate's [`Client`].
//!
//! - `openai`: `POST {base}/images/generations` (JSON, `b64_json` answers), reference images
//!   through `POST {base}/images/edits` (multipart). Also every OpenAI-compatible server.
//! - `gemini`: `POST {base}/models/{model}:generateContent` with `responseModalities`
//!   `["TEXT", "IMAGE"]`; the image comes back as an `inlineData` part.
//! - `openrouter`: `POST {base}/chat/completions` with `modalities: ["image", "text"]`; the
//!   image comes back in `choices[0].message.images[].image_url.url` as a data URL.
//! - `novelai`: `POST {base}/ai/generate-image`; the answer is a ZIP holding one PNG. Only the
//!   first reference image is used (the protocol takes one).
//!
//! Errors are [`LlmError`]s whose messages are ours: the provider's body is never copied into
//! them (it may echo the key or a server path), only its status and error code.

pub mod gemini;
pub mod novelai;
pub mod openai;
pub mod openrouter;
mod wire;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{ErrorKind, LlmError};
use crate::media::book::{MediaBook, MediaConnection, Platform};
use crate::media::http::{self, MediaApi};
use crate::transport::Client;

pub use wire::{Auth, FormPart, FormValue, WireBody, WireRequest};

/// The settings key of the image connection book.
pub const SETTINGS_KEY: &str = "image.connections";
/// The settings key of the injection template written into history with a generated image.
pub const INJECTION_TEMPLATE_KEY: &str = "image.injectionTemplate";
/// Tavo's default injection template (§14.3).
pub const DEFAULT_INJECTION_TEMPLATE: &str = "[生成了一张图片：{{prompt}}]";
/// The largest image answer accepted (bytes of the HTTP body).
pub use crate::media::http::MAX_ANSWER_BYTES;

/// An image platform (the protocol an image connection speaks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImagePlatform {
    /// OpenAI `/v1/images/generations` and every compatible server.
    Openai,
    /// Google Gemini `generateContent` with the IMAGE modality.
    Gemini,
    /// OpenRouter chat completions with `modalities: ["image", "text"]`.
    Openrouter,
    /// NovelAI `/ai/generate-image` (a ZIP answer).
    Novelai,
}

impl Platform for ImagePlatform {
    const SETTINGS_KEY: &'static str = SETTINGS_KEY;
    const COMMAND: &'static str = "tavo image connection";

    fn all() -> &'static [Self] {
        &[
            ImagePlatform::Openai,
            ImagePlatform::Gemini,
            ImagePlatform::Openrouter,
            ImagePlatform::Novelai,
        ]
    }

    fn id(self) -> &'static str {
        match self {
            ImagePlatform::Openai => "openai",
            ImagePlatform::Gemini => "gemini",
            ImagePlatform::Openrouter => "openrouter",
            ImagePlatform::Novelai => "novelai",
        }
    }

    fn default_base_url(self) -> Option<&'static str> {
        Some(match self {
            ImagePlatform::Openai => "https://api.openai.com/v1",
            ImagePlatform::Gemini => "https://generativelanguage.googleapis.com/v1beta",
            ImagePlatform::Openrouter => "https://openrouter.ai/api/v1",
            ImagePlatform::Novelai => "https://image.novelai.net",
        })
    }
}

/// An image connection.
pub type ImageConnection = MediaConnection<ImagePlatform>;
/// The image connection book (`image.connections`).
pub type ImageBook = MediaBook<ImagePlatform>;

/// Image bytes with their MIME type.
#[derive(Clone, PartialEq, Eq)]
pub struct ImageData {
    /// The encoded image file (PNG, JPEG, WebP, GIF); pixels are never decoded.
    pub bytes: Vec<u8>,
    /// Its MIME type (`image/png`), which picks the file extension and the data URL's type.
    pub mime: String,
}

impl std::fmt::Debug for ImageData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageData")
            .field("bytes", &self.bytes.len())
            .field("mime", &self.mime)
            .finish()
    }
}

impl ImageData {
    /// Bytes with the MIME type their signature says (`image/png` when unknown).
    pub fn sniffed(bytes: Vec<u8>) -> Self {
        let mime = sniff_mime(&bytes).unwrap_or("image/png").to_owned();
        Self { bytes, mime }
    }

    /// The image as a `data:` URL.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.mime, self.base64())
    }

    /// The bytes in standard base64.
    pub fn base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.bytes)
    }

    /// Decodes a `data:<mime>;base64,<data>` URL.
    pub fn from_data_url(url: &str) -> Result<Self, String> {
        let rest = url.strip_prefix("data:").ok_or("not a data: URL")?;
        let (head, data) = rest.split_once(',').ok_or("a data: URL needs a comma")?;
        let mime = head
            .strip_suffix(";base64")
            .ok_or("only base64 data: URLs are read")?;
        let bytes = decode_base64(data)?;
        let mime = if mime.is_empty() {
            sniff_mime(&bytes).unwrap_or("image/png")
        } else {
            mime
        };
        Ok(Self {
            bytes,
            mime: mime.to_owned(),
        })
    }

    /// The file extension for the MIME type.
    pub fn extension(&self) -> &'static str {
        extension_for(&self.mime)
    }
}

/// The file extension for an image MIME type (`png` when unknown).
pub(crate) fn extension_for(mime: &str) -> &'static str {
    match mime {
        "image/jpeg" => "jpg",
        "image/webp" => "webp",
        "image/gif" => "gif",
        _ => "png",
    }
}

/// The image type a byte signature says, for reading provider answers.
///
/// The library's one sniffer is `tavo_model::ImageType`, which every other layer asks; this
/// crate may not depend on the model (llm knows nothing of the library), so it keeps this
/// private reading of the same four signatures. The engine's tests check that the two agree.
pub(crate) fn sniff_mime(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else {
        None
    }
}

fn decode_base64(data: &str) -> Result<Vec<u8>, String> {
    let clean: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(clean.as_bytes())
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(clean.as_bytes()))
        .map_err(|e| format!("bad base64: {e}"))
}

/// One image to generate: the seed's `tavo_image_generate` options, reference images read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImageRequest {
    /// What to draw, in the words the model or the user wrote.
    pub prompt: String,
    /// `"1024x1024"`.
    pub size: Option<String>,
    /// `"16:9"`.
    pub aspect_ratio: Option<String>,
    /// NovelAI / SD only; ignored by OpenAI and Gemini.
    pub negative_prompt: Option<String>,
    /// For img2img. NovelAI takes only the first.
    pub reference_images: Vec<ImageData>,
    /// Provider fields merged over the body last (deep merge for objects).
    pub extra_body: Map<String, Value>,
}

/// What a response parser found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The image itself.
    Image(ImageData),
    /// An http(s) URL to download it from (OpenAI without `b64_json`).
    Url(String),
}

/// Builds the request for `conn` (pure: no I/O).
pub fn build(
    conn: &ImageConnection,
    key: Option<&str>,
    req: &ImageRequest,
) -> Result<WireRequest, LlmError> {
    if req.prompt.trim().is_empty() {
        return Err(LlmError::new(
            ErrorKind::InvalidRequest,
            "prompt: must not be empty",
        ));
    }
    match conn.platform {
        ImagePlatform::Openai => openai::build(conn, key, req),
        ImagePlatform::Gemini => gemini::build(conn, key, req),
        ImagePlatform::Openrouter => openrouter::build(conn, key, req),
        ImagePlatform::Novelai => novelai::build(conn, key, req),
    }
}

/// Parses a successful answer of `platform` (pure).
pub fn parse(platform: ImagePlatform, content_type: &str, body: &[u8]) -> Result<Answer, LlmError> {
    match platform {
        ImagePlatform::Openai => openai::parse(body),
        ImagePlatform::Gemini => gemini::parse(body),
        ImagePlatform::Openrouter => openrouter::parse(body),
        ImagePlatform::Novelai => novelai::parse(content_type, body),
    }
}

/// Reads a JSON answer body.
pub(crate) fn json_body(platform: &str, body: &[u8]) -> Result<Value, LlmError> {
    serde_json::from_slice(body).map_err(|_| {
        LlmError::new(
            ErrorKind::InvalidResponse,
            format!("the {platform} image API answered something that is not JSON"),
        )
    })
}

/// An answer without an image.
pub(crate) fn no_image(platform: &str, why: &str) -> LlmError {
    LlmError::new(
        ErrorKind::InvalidResponse,
        format!("the {platform} image API answered without an image ({why})"),
    )
}

/// A refusal by the provider's safety system.
pub(crate) fn refused(platform: &str, why: &str) -> LlmError {
    LlmError::new(
        ErrorKind::ContentFiltered,
        format!("the {platform} image API refused the prompt ({why})"),
    )
}

/// Decodes base64 image data from an answer.
pub(crate) fn image_from_base64(
    platform: &str,
    data: &str,
    mime: Option<&str>,
) -> Result<ImageData, LlmError> {
    let bytes = decode_base64(data).map_err(|e| no_image(platform, &e))?;
    let mime = sniff_mime(&bytes)
        .or(mime.filter(|m| m.starts_with("image/")))
        .unwrap_or("image/png")
        .to_owned();
    Ok(ImageData { bytes, mime })
}

/// Merges `over` into `base`: objects key by key, recursively; everything else replaced.
pub fn deep_merge(base: &mut Map<String, Value>, over: &Map<String, Value>) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(Value::Object(b)), Value::Object(o)) => deep_merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// `"1024x1536"` → (1024, 1536).
pub fn parse_size(size: &str) -> Option<(u32, u32)> {
    let (w, h) = size.trim().split_once(['x', 'X'])?;
    let (w, h) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
    (w > 0 && h > 0).then_some((w, h))
}

/// `"16:9"` → (16, 9).
pub fn parse_ratio(ratio: &str) -> Option<(u32, u32)> {
    let (w, h) = ratio.trim().split_once(':')?;
    let (w, h) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
    (w > 0 && h > 0).then_some((w, h))
}

/// The reduced ratio of a size (`1792x1024` → `"7:4"`).
pub fn ratio_of(w: u32, h: u32) -> String {
    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    let g = gcd(w, h).max(1);
    format!("{}:{}", w / g, h / g)
}

/// Which API an image platform's messages name.
fn api(platform: ImagePlatform) -> MediaApi {
    MediaApi {
        platform: platform.id(),
        medium: "image",
    }
}

/// What to check after a failed image request, by kind.
fn hint(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Authentication => "the key was refused; check the image connection's key",
        ErrorKind::Permission => "the key may not use this model or the prompt was refused",
        ErrorKind::NotFound => {
            "no such model or endpoint; check the connection's baseUrl and model"
        }
        ErrorKind::RateLimit => "too many requests; try again later",
        ErrorKind::QuotaExceeded => "the balance or quota is used up",
        ErrorKind::Overloaded | ErrorKind::Server => "the provider failed; try again later",
        ErrorKind::Timeout => "the provider timed out",
        ErrorKind::ContentFiltered => "the provider's safety system refused the prompt",
        _ => "the provider refused the request (check size, aspect ratio and extraBody)",
    }
}

/// The message for a failed HTTP status: ours, never the provider's body
/// ([`http::status_error`] with the image hints).
pub fn status_error(platform: ImagePlatform, status: u16, code: Option<String>) -> LlmError {
    http::status_error(api(platform), status, code, hint)
}

/// Generates one image with `conn`: builds, sends (no retries: a generation costs money),
/// maps failures, parses, downloads a URL answer.
pub async fn generate(
    client: &Client,
    conn: &ImageConnection,
    req: &ImageRequest,
) -> Result<ImageData, LlmError> {
    let key = conn
        .resolve_key()
        .map_err(|e| LlmError::new(ErrorKind::Authentication, e.to_string()))?;
    let wire = build(conn, key.as_deref(), req)?;
    let platform = conn.platform;
    let rb = wire.to_reqwest(client.http()).map_err(|e| {
        LlmError::new(
            ErrorKind::InvalidRequest,
            format!("cannot encode the request: {e}"),
        )
    })?;
    let answer = http::exchange(client, api(platform), rb).await?;
    if !answer.ok() {
        let err = status_error(platform, answer.status, http::error_code(&answer.body));
        tracing::debug!(
            platform = platform.id(),
            status = answer.status,
            "image generation failed"
        );
        return Err(err);
    }
    match parse(platform, &answer.content_type, &answer.body)? {
        Answer::Image(img) => Ok(img),
        Answer::Url(url) => download(client, platform, &url).await,
    }
}

async fn download(
    client: &Client,
    platform: ImagePlatform,
    url: &str,
) -> Result<ImageData, LlmError> {
    match url::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => {}
        _ => return Err(no_image(platform.id(), "the image URL is not http(s)")),
    }
    let timeouts = client.timeouts;
    let resp = tokio::time::timeout(timeouts.headers, client.http().get(url).send())
        .await
        .map_err(|_| {
            LlmError::new(
                ErrorKind::Timeout,
                "downloading the generated image timed out",
            )
        })?
        .map_err(|e| http::transport_error(api(platform), &e))?;
    let status = resp.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(LlmError {
            status: Some(status),
            ..LlmError::new(
                ErrorKind::InvalidResponse,
                format!("downloading the generated image answered HTTP {status}"),
            )
        });
    }
    let bytes = http::read_capped(api(platform), resp, timeouts.idle, MAX_ANSWER_BYTES).await?;
    if sniff_mime(&bytes).is_none() {
        return Err(no_image(
            platform.id(),
            "the downloaded file is not an image",
        ));
    }
    Ok(ImageData::sniffed(bytes))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 1×1 PNG.
    pub const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

    pub fn png() -> Vec<u8> {
        decode_base64(PNG_1X1).expect("png")
    }

    pub fn conn(platform: ImagePlatform, model: &str) -> ImageConnection {
        let mut c = ImageConnection::new("img", platform, model);
        c.base_url = "http://127.0.0.1:9/v1".into();
        c
    }

    #[test]
    fn data_urls_round_trip_and_sniff() {
        let img = ImageData::sniffed(png());
        assert_eq!(img.mime, "image/png");
        let back = ImageData::from_data_url(&img.data_url()).expect("decoded");
        assert_eq!(back, img);
        assert!(ImageData::from_data_url("data:image/png,xx").is_err());
        assert_eq!(sniff_mime(&[0xff, 0xd8, 0xff, 0]), Some("image/jpeg"));
    }

    #[test]
    fn sizes_and_ratios() {
        assert_eq!(parse_size("1024x1536"), Some((1024, 1536)));
        assert_eq!(parse_size("0x5"), None);
        assert_eq!(parse_ratio("16:9"), Some((16, 9)));
        assert_eq!(ratio_of(1792, 1024), "7:4");
        assert_eq!(ratio_of(1024, 1024), "1:1");
    }

    #[test]
    fn status_errors_are_ours_and_mapped() {
        let e = status_error(ImagePlatform::Openai, 401, Some("invalid_api_key".into()));
        assert_eq!(e.kind, ErrorKind::Authentication);
        assert!(
            e.message.contains("HTTP 401, code invalid_api_key"),
            "{}",
            e.message
        );
        assert_eq!(
            status_error(ImagePlatform::Gemini, 403, None).kind,
            ErrorKind::Permission
        );
        assert_eq!(
            status_error(ImagePlatform::Gemini, 404, None).kind,
            ErrorKind::NotFound
        );
        assert_eq!(
            status_error(ImagePlatform::Novelai, 429, None).kind,
            ErrorKind::RateLimit
        );
        assert_eq!(
            status_error(ImagePlatform::Novelai, 500, None).kind,
            ErrorKind::Server
        );
        let odd = status_error(
            ImagePlatform::Openai,
            400,
            Some("sk-secret value /etc/x".into()),
        );
        assert!(!odd.message.contains("sk-secret"), "odd codes are left out");
    }

    #[test]
    fn an_empty_prompt_is_refused_before_any_request() {
        let e = build(
            &conn(ImagePlatform::Openai, "m"),
            None,
            &ImageRequest::default(),
        )
        .expect_err("refused");
        assert!(e.message.starts_with("prompt"));
    }
}
