//! Gemini image models (`gemini-2.5-flash-image`, …) through `generateContent`.
//!
//! Request: `POST {base}/models/{model}:generateContent` (key in `x-goog-api-key`)
//! `{contents: [{role: "user", parts: [{text}, {inlineData: {mimeType, data}}…]}],
//! generationConfig: {responseModalities: ["TEXT", "IMAGE"], imageConfig: {aspectRatio}}}`.
//! Answer: `candidates[0].content.parts[]`, the image as `{inlineData: {mimeType, data}}`
//! beside optional text parts. A blocked prompt has `promptFeedback.blockReason`; a stopped
//! output a `finishReason` such as `SAFETY`, `IMAGE_SAFETY` or `PROHIBITED_CONTENT`.
//! A size without a ratio is sent as its reduced ratio.

use serde_json::{Map, Value, json};

use super::{
    Answer, Auth, ImageConnection, ImageRequest, WireBody, WireRequest, deep_merge,
    image_from_base64, json_body, no_image, parse_size, ratio_of, refused,
};
use crate::error::LlmError;
use crate::protocol::Protocol;
use crate::transport::endpoint_url;

const ID: &str = "gemini";

/// Builds the request.
pub fn build(
    conn: &ImageConnection,
    key: Option<&str>,
    req: &ImageRequest,
) -> Result<WireRequest, LlmError> {
    let mut parts = vec![json!({"text": req.prompt})];
    for img in &req.reference_images {
        parts.push(json!({"inlineData": {"mimeType": img.mime, "data": img.base64()}}));
    }
    let ratio = req.aspect_ratio.clone().or_else(|| {
        req.size
            .as_deref()
            .and_then(parse_size)
            .map(|(w, h)| ratio_of(w, h))
    });
    let mut config = Map::new();
    config.insert("responseModalities".into(), json!(["TEXT", "IMAGE"]));
    if let Some(r) = ratio {
        config.insert("imageConfig".into(), json!({"aspectRatio": r}));
    }
    let mut body = Map::new();
    body.insert("contents".into(), json!([{"role": "user", "parts": parts}]));
    body.insert("generationConfig".into(), Value::Object(config));
    deep_merge(&mut body, &conn.options);
    deep_merge(&mut body, &req.extra_body);
    Ok(WireRequest {
        url: endpoint_url(Protocol::Gemini, &conn.base_url, &conn.model, false),
        auth: key.map_or(Auth::None, |k| Auth::Header("x-goog-api-key", k.to_owned())),
        headers: Vec::new(),
        body: WireBody::Json(Value::Object(body)),
    })
}

/// Parses the first image part of the first candidate.
pub fn parse(body: &[u8]) -> Result<Answer, LlmError> {
    let v = json_body(ID, body)?;
    if let Some(reason) = v
        .pointer("/promptFeedback/blockReason")
        .and_then(Value::as_str)
    {
        return Err(refused(ID, &format!("blockReason {reason}")));
    }
    let candidate = v.pointer("/candidates/0");
    let parts = candidate
        .and_then(|c| c.pointer("/content/parts"))
        .and_then(Value::as_array);
    for part in parts.into_iter().flatten() {
        let Some(inline) = part.get("inlineData").or_else(|| part.get("inline_data")) else {
            continue;
        };
        let mime = inline
            .get("mimeType")
            .or_else(|| inline.get("mime_type"))
            .and_then(Value::as_str);
        if mime.is_some_and(|m| !m.starts_with("image/")) {
            continue;
        }
        if let Some(data) = inline.get("data").and_then(Value::as_str) {
            return image_from_base64(ID, data, mime).map(Answer::Image);
        }
    }
    let finish = candidate
        .and_then(|c| c.get("finishReason"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if matches!(
        finish,
        "SAFETY"
            | "IMAGE_SAFETY"
            | "PROHIBITED_CONTENT"
            | "BLOCKLIST"
            | "SPII"
            | "RECITATION"
            | "IMAGE_PROHIBITED_CONTENT"
    ) {
        return Err(refused(ID, &format!("finishReason {finish}")));
    }
    Err(no_image(
        ID,
        "no inlineData image part; is the model an image model?",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::media::image::tests::{PNG_1X1, conn, png};
    use crate::media::image::{ImageData, ImagePlatform};

    #[test]
    fn request_has_the_image_modality_ratio_and_references() {
        let mut c = conn(ImagePlatform::Gemini, "gemini-2.5-flash-image");
        c.base_url = "http://127.0.0.1:9".into();
        let req = ImageRequest {
            prompt: "a cat".into(),
            size: Some("1792x1024".into()),
            negative_prompt: Some("dogs".into()),
            reference_images: vec![ImageData::sniffed(png())],
            ..ImageRequest::default()
        };
        let w = build(&c, Some("g-key"), &req).expect("built");
        assert_eq!(
            w.url,
            "http://127.0.0.1:9/v1beta/models/gemini-2.5-flash-image:generateContent"
        );
        assert_eq!(w.auth, Auth::Header("x-goog-api-key", "g-key".into()));
        assert_eq!(
            w.body,
            WireBody::Json(json!({
                "contents": [{"role": "user", "parts": [{"text": "a cat"},
                    {"inlineData": {"mimeType": "image/png", "data": PNG_1X1}}]}],
                "generationConfig": {"responseModalities": ["TEXT", "IMAGE"],
                    "imageConfig": {"aspectRatio": "7:4"}}
            }))
        );
    }

    #[test]
    fn answers_images_refusals_and_text_only() {
        let ok = json!({"candidates": [{"content": {"parts": [{"text": "here"},
            {"inlineData": {"mimeType": "image/png", "data": PNG_1X1}}]}, "finishReason": "STOP"}]});
        let Answer::Image(img) = parse(ok.to_string().as_bytes()).expect("parsed") else {
            panic!("image")
        };
        assert_eq!(img.bytes, png());
        let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}});
        let e = parse(blocked.to_string().as_bytes()).expect_err("refused");
        assert_eq!(e.kind, ErrorKind::ContentFiltered);
        let stopped = json!({"candidates": [{"finishReason": "IMAGE_SAFETY"}]});
        assert_eq!(
            parse(stopped.to_string().as_bytes())
                .expect_err("refused")
                .kind,
            ErrorKind::ContentFiltered
        );
        let text = json!({"candidates": [{"content": {"parts": [{"text": "no"}]}, "finishReason": "STOP"}]});
        assert_eq!(
            parse(text.to_string().as_bytes()).expect_err("none").kind,
            ErrorKind::InvalidResponse
        );
    }
}
