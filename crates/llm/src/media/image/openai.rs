//! OpenAI images (and every OpenAI-compatible server).
//!
//! Text to image: `POST {base}/images/generations` `{model, prompt, n: 1, size,
//! response_format: "b64_json"}` → `{created, data: [{b64_json, revised_prompt?}]}` (or
//! `data[].url`). `gpt-image-*` models always answer base64 and refuse `response_format`, so it
//! is left out for them. With reference images: `POST {base}/images/edits` as multipart
//! (`image` for one, `image[]` for several, `prompt`, `model`, `n`, `size`).
//!
//! A ratio without a size picks the model's nearest size (dall-e-3: 1792x1024 / 1024x1792,
//! gpt-image: 1536x1024 / 1024x1536, else square).

use serde_json::{Map, Value, json};

use super::{
    Answer, Auth, FormPart, FormValue, ImageConnection, ImageRequest, WireBody, WireRequest,
    deep_merge, image_from_base64, json_body, no_image, parse_ratio, refused,
};
use crate::error::LlmError;

const ID: &str = "openai";

fn is_gpt_image(model: &str) -> bool {
    model.starts_with("gpt-image") || model.contains("/gpt-image")
}

/// The size to ask for.
pub fn size_for(model: &str, size: Option<&str>, ratio: Option<&str>) -> Option<String> {
    if let Some(s) = size {
        return Some(s.to_owned());
    }
    let (w, h) = parse_ratio(ratio?)?;
    let (wide, tall) = if is_gpt_image(model) {
        ("1536x1024", "1024x1536")
    } else if model.starts_with("dall-e-3") {
        ("1792x1024", "1024x1792")
    } else {
        ("1024x1024", "1024x1024")
    };
    Some(
        match w.cmp(&h) {
            std::cmp::Ordering::Greater => wide,
            std::cmp::Ordering::Less => tall,
            std::cmp::Ordering::Equal => "1024x1024",
        }
        .to_owned(),
    )
}

/// Builds the request.
pub fn build(
    conn: &ImageConnection,
    key: Option<&str>,
    req: &ImageRequest,
) -> Result<WireRequest, LlmError> {
    let auth = key.map_or(Auth::None, |k| Auth::Bearer(k.to_owned()));
    let size = size_for(
        &conn.model,
        req.size.as_deref(),
        req.aspect_ratio.as_deref(),
    );
    let mut body = Map::new();
    body.insert("model".into(), json!(conn.model));
    body.insert("prompt".into(), json!(req.prompt));
    body.insert("n".into(), json!(1));
    if let Some(size) = &size {
        body.insert("size".into(), json!(size));
    }
    if !is_gpt_image(&conn.model) {
        body.insert("response_format".into(), json!("b64_json"));
    }
    deep_merge(&mut body, &conn.options);
    deep_merge(&mut body, &req.extra_body);
    if req.reference_images.is_empty() {
        return Ok(WireRequest {
            url: format!("{}/images/generations", conn.base()),
            auth,
            headers: Vec::new(),
            body: WireBody::Json(Value::Object(body)),
        });
    }
    let field = if req.reference_images.len() == 1 {
        "image"
    } else {
        "image[]"
    };
    let mut parts: Vec<FormPart> = body
        .into_iter()
        .map(|(name, v)| FormPart {
            name,
            value: FormValue::Text(match v {
                Value::String(s) => s,
                other => other.to_string(),
            }),
        })
        .collect();
    for (i, img) in req.reference_images.iter().enumerate() {
        parts.push(FormPart {
            name: field.into(),
            value: FormValue::File {
                filename: format!("reference-{i}.{}", img.extension()),
                mime: img.mime.clone(),
                bytes: img.bytes.clone(),
            },
        });
    }
    Ok(WireRequest {
        url: format!("{}/images/edits", conn.base()),
        auth,
        headers: Vec::new(),
        body: WireBody::Multipart(parts),
    })
}

/// Parses `{data: [{b64_json | url}]}`.
pub fn parse(body: &[u8]) -> Result<Answer, LlmError> {
    let v = json_body(ID, body)?;
    let Some(first) = v
        .get("data")
        .and_then(Value::as_array)
        .and_then(|d| d.first())
    else {
        if v.get("error").is_some() {
            return Err(refused(ID, "an error object instead of data"));
        }
        return Err(no_image(ID, "no data[0]"));
    };
    if let Some(b64) = first.get("b64_json").and_then(Value::as_str) {
        let mime = v
            .get("output_format")
            .and_then(Value::as_str)
            .map(|f| format!("image/{f}"));
        return image_from_base64(ID, b64, mime.as_deref()).map(Answer::Image);
    }
    if let Some(url) = first.get("url").and_then(Value::as_str) {
        return Ok(Answer::Url(url.to_owned()));
    }
    Err(no_image(ID, "data[0] has neither b64_json nor url"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::image::tests::{PNG_1X1, conn, png};
    use crate::media::image::{ImageData, ImagePlatform};

    #[test]
    fn text_to_image_is_json_with_b64() {
        let mut c = conn(ImagePlatform::Openai, "dall-e-3");
        c.options.insert("quality".into(), json!("standard"));
        let mut req = ImageRequest {
            prompt: "a cat".into(),
            aspect_ratio: Some("16:9".into()),
            ..ImageRequest::default()
        };
        req.extra_body.insert("quality".into(), json!("hd"));
        let w = build(&c, Some("sk-1"), &req).expect("built");
        assert_eq!(w.url, "http://127.0.0.1:9/v1/images/generations");
        assert_eq!(w.auth, Auth::Bearer("sk-1".into()));
        assert_eq!(
            w.body,
            WireBody::Json(json!({"model": "dall-e-3", "prompt": "a cat", "n": 1,
                "size": "1792x1024", "response_format": "b64_json", "quality": "hd"}))
        );
        let g = build(&conn(ImagePlatform::Openai, "gpt-image-1"), None, &req).expect("built");
        let WireBody::Json(b) = g.body else {
            panic!("json")
        };
        assert_eq!(b.get("response_format"), None);
        assert_eq!(b["size"], "1536x1024");
        assert_eq!(g.auth, Auth::None);
    }

    #[test]
    fn reference_images_go_to_edits_as_multipart() {
        let req = ImageRequest {
            prompt: "the same cat, in red".into(),
            reference_images: vec![ImageData::sniffed(png()), ImageData::sniffed(png())],
            ..ImageRequest::default()
        };
        let w = build(&conn(ImagePlatform::Openai, "gpt-image-1"), None, &req).expect("built");
        assert_eq!(w.url, "http://127.0.0.1:9/v1/images/edits");
        let WireBody::Multipart(parts) = w.body else {
            panic!("multipart")
        };
        let names: Vec<_> = parts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["model", "prompt", "n", "image[]", "image[]"]);
        assert_eq!(parts[2].value, FormValue::Text("1".into()));
    }

    #[test]
    fn answers_with_b64_or_url() {
        let body = json!({"created": 1, "data": [{"b64_json": PNG_1X1}]}).to_string();
        let Answer::Image(img) = parse(body.as_bytes()).expect("parsed") else {
            panic!("image")
        };
        assert_eq!(
            (img.mime.as_str(), img.bytes.len()),
            ("image/png", png().len())
        );
        let body = json!({"data": [{"url": "https://x.example/a.png"}]}).to_string();
        assert_eq!(
            parse(body.as_bytes()).expect("parsed"),
            Answer::Url("https://x.example/a.png".into())
        );
        assert!(parse(b"{\"data\": []}").is_err());
        assert!(parse(b"<html>").is_err());
    }
}
