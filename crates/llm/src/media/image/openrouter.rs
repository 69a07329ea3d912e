//! OpenRouter image models through chat completions.
//!
//! Request: `POST {base}/chat/completions` `{model, messages: [{role: "user", content:
//! [{type: "text", text}, {type: "image_url", image_url: {url: <data URL>}}…]}], modalities:
//! ["image", "text"], image_config: {aspect_ratio}}` (content is a plain string without
//! reference images). Answer: `choices[0].message.images[] = {type: "image_url", image_url:
//! {url: "data:image/png;base64,…"}}`.

use serde_json::{Map, Value, json};

use super::{
    Answer, Auth, ImageConnection, ImageData, ImageRequest, WireBody, WireRequest, deep_merge,
    json_body, no_image, parse_size, ratio_of, refused,
};
use crate::error::LlmError;

const ID: &str = "openrouter";

/// Builds the request.
pub fn build(
    conn: &ImageConnection,
    key: Option<&str>,
    req: &ImageRequest,
) -> Result<WireRequest, LlmError> {
    let content = if req.reference_images.is_empty() {
        json!(req.prompt)
    } else {
        let mut parts = vec![json!({"type": "text", "text": req.prompt})];
        for img in &req.reference_images {
            parts.push(json!({"type": "image_url", "image_url": {"url": img.data_url()}}));
        }
        Value::Array(parts)
    };
    let ratio = req.aspect_ratio.clone().or_else(|| {
        req.size
            .as_deref()
            .and_then(parse_size)
            .map(|(w, h)| ratio_of(w, h))
    });
    let mut body = Map::new();
    body.insert("model".into(), json!(conn.model));
    body.insert(
        "messages".into(),
        json!([{"role": "user", "content": content}]),
    );
    body.insert("modalities".into(), json!(["image", "text"]));
    body.insert("stream".into(), json!(false));
    if let Some(r) = ratio {
        body.insert("image_config".into(), json!({"aspect_ratio": r}));
    }
    deep_merge(&mut body, &conn.options);
    deep_merge(&mut body, &req.extra_body);
    Ok(WireRequest {
        url: format!("{}/chat/completions", conn.base()),
        auth: key.map_or(Auth::None, |k| Auth::Bearer(k.to_owned())),
        headers: vec![("x-title", "Tavo".to_owned())],
        body: WireBody::Json(Value::Object(body)),
    })
}

/// Parses the first image of the first choice.
pub fn parse(body: &[u8]) -> Result<Answer, LlmError> {
    let v = json_body(ID, body)?;
    let choice = v.pointer("/choices/0");
    let images = choice
        .and_then(|c| c.pointer("/message/images"))
        .and_then(Value::as_array);
    for img in images.into_iter().flatten() {
        let url = img
            .pointer("/image_url/url")
            .or_else(|| img.get("url"))
            .and_then(Value::as_str);
        match url {
            Some(u) if u.starts_with("data:") => {
                return ImageData::from_data_url(u)
                    .map(Answer::Image)
                    .map_err(|e| no_image(ID, &e));
            }
            Some(u) if u.starts_with("http://") || u.starts_with("https://") => {
                return Ok(Answer::Url(u.to_owned()));
            }
            _ => {}
        }
    }
    if choice
        .and_then(|c| c.get("finish_reason"))
        .and_then(Value::as_str)
        == Some("content_filter")
    {
        return Err(refused(ID, "finish_reason content_filter"));
    }
    Err(no_image(
        ID,
        "no choices[0].message.images; does the model output images?",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::image::ImagePlatform;
    use crate::media::image::tests::{PNG_1X1, conn, png};

    #[test]
    fn request_asks_for_image_output() {
        let c = conn(ImagePlatform::Openrouter, "google/gemini-2.5-flash-image");
        let req = ImageRequest {
            prompt: "a cat".into(),
            aspect_ratio: Some("1:1".into()),
            ..ImageRequest::default()
        };
        let w = build(&c, Some("or-key"), &req).expect("built");
        assert_eq!(w.url, "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(
            w.body,
            WireBody::Json(json!({"model": "google/gemini-2.5-flash-image",
                "messages": [{"role": "user", "content": "a cat"}],
                "modalities": ["image", "text"], "stream": false,
                "image_config": {"aspect_ratio": "1:1"}}))
        );
        let req = ImageRequest {
            prompt: "same".into(),
            reference_images: vec![ImageData::sniffed(png())],
            ..ImageRequest::default()
        };
        let WireBody::Json(b) = build(&c, None, &req).expect("built").body else {
            panic!("json")
        };
        assert_eq!(
            b["messages"][0]["content"][1]["image_url"]["url"],
            format!("data:image/png;base64,{PNG_1X1}")
        );
    }

    #[test]
    fn answers_data_urls() {
        let ok = json!({"choices": [{"message": {"role": "assistant", "content": "",
            "images": [{"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_1X1}")}}]}}]});
        let Answer::Image(img) = parse(ok.to_string().as_bytes()).expect("parsed") else {
            panic!("image")
        };
        assert_eq!(img.bytes, png());
        let none =
            json!({"choices": [{"message": {"content": "I can't draw"}, "finish_reason": "stop"}]});
        assert!(parse(none.to_string().as_bytes()).is_err());
    }
}
