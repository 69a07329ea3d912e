//! NovelAI image generation.
//!
//! Request: `POST {base}/ai/generate-image` (Bearer token; base `https://image.novelai.net`)
//! `{input, model, action: "generate" | "img2img", parameters: {width, height, scale, sampler,
//! steps, n_samples: 1, negative_prompt, …}}`; V4 models (`nai-diffusion-4…`) also take the
//! prompt as `parameters.v4_prompt.caption.base_caption` and the negative prompt as
//! `parameters.v4_negative_prompt.caption.base_caption`. img2img sends the first reference
//! image (base64) as `parameters.image` with `strength` and `noise` — the protocol takes one.
//! Answer: `application/zip` (or `application/x-zip-compressed`) holding `image_0.png`.
//!
//! `extraBody` fields other than `input`, `model`, `action` and `parameters` go into
//! `parameters` (`seed`, `scale`, `sampler`, …), as NovelAI has them there.

use std::io::Read as _;

use serde_json::{Map, Value, json};

use super::{
    Answer, Auth, ImageConnection, ImageData, ImageRequest, MAX_ANSWER_BYTES, WireBody,
    WireRequest, deep_merge, json_body, no_image, parse_ratio, parse_size, sniff_mime,
};
use crate::error::{ErrorKind, LlmError};

const ID: &str = "novelai";

/// The pixel size: the given one, else one of NovelAI's normal sizes by ratio (portrait
/// 832x1216 by default).
pub fn dimensions(size: Option<&str>, ratio: Option<&str>) -> (u32, u32) {
    if let Some(s) = size.and_then(parse_size) {
        return s;
    }
    match ratio.and_then(parse_ratio).map(|(w, h)| w.cmp(&h)) {
        Some(std::cmp::Ordering::Greater) => (1216, 832),
        Some(std::cmp::Ordering::Equal) => (1024, 1024),
        _ => (832, 1216),
    }
}

fn is_v4(model: &str) -> bool {
    model.starts_with("nai-diffusion-4")
}

/// Builds the request.
pub fn build(
    conn: &ImageConnection,
    key: Option<&str>,
    req: &ImageRequest,
) -> Result<WireRequest, LlmError> {
    let (width, height) = dimensions(req.size.as_deref(), req.aspect_ratio.as_deref());
    let negative = req.negative_prompt.clone().unwrap_or_default();
    let mut params = Map::new();
    for (k, v) in [
        ("width", json!(width)),
        ("height", json!(height)),
        ("scale", json!(5)),
        ("sampler", json!("k_euler_ancestral")),
        ("steps", json!(28)),
        ("n_samples", json!(1)),
        ("ucPreset", json!(0)),
        ("qualityToggle", json!(true)),
        ("negative_prompt", json!(negative)),
    ] {
        params.insert(k.into(), v);
    }
    if is_v4(&conn.model) {
        params.insert("params_version".into(), json!(3));
        params.insert(
            "v4_prompt".into(),
            json!({"caption": {"base_caption": req.prompt, "char_captions": []},
                   "use_coords": false, "use_order": true}),
        );
        params.insert(
            "v4_negative_prompt".into(),
            json!({"caption": {"base_caption": negative, "char_captions": []}, "legacy_uc": false}),
        );
    }
    let action = match req.reference_images.first() {
        Some(img) => {
            params.insert("image".into(), json!(img.base64()));
            params.insert("strength".into(), json!(0.7));
            params.insert("noise".into(), json!(0));
            "img2img"
        }
        None => "generate",
    };
    let mut body = Map::new();
    body.insert("input".into(), json!(req.prompt));
    body.insert("model".into(), json!(conn.model));
    body.insert("action".into(), json!(action));
    body.insert("parameters".into(), Value::Object(params));
    for over in [&conn.options, &req.extra_body] {
        let mut top = Map::new();
        let mut inner = Map::new();
        for (k, v) in over {
            match k.as_str() {
                "input" | "model" | "action" => {
                    top.insert(k.clone(), v.clone());
                }
                "parameters" => {
                    if let Value::Object(p) = v {
                        deep_merge(&mut inner, p);
                    }
                }
                _ => {
                    inner.insert(k.clone(), v.clone());
                }
            }
        }
        top.insert("parameters".into(), Value::Object(inner));
        deep_merge(&mut body, &top);
    }
    Ok(WireRequest {
        url: format!("{}/ai/generate-image", conn.base()),
        auth: key.map_or(Auth::None, |k| Auth::Bearer(k.to_owned())),
        headers: vec![("accept", "application/zip, image/png".to_owned())],
        body: WireBody::Json(Value::Object(body)),
    })
}

/// Reads the first image in the ZIP answer (or a bare image).
pub fn parse(content_type: &str, body: &[u8]) -> Result<Answer, LlmError> {
    if sniff_mime(body).is_some() {
        return Ok(Answer::Image(ImageData::sniffed(body.to_vec())));
    }
    if !body.starts_with(b"PK") {
        if content_type.contains("json") {
            let _ = json_body(ID, body)?;
        }
        return Err(no_image(ID, "the answer is not a ZIP"));
    }
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(body))
        .map_err(|_| no_image(ID, "the ZIP answer cannot be read"))?;
    for i in 0..zip.len() {
        let mut file = zip
            .by_index(i)
            .map_err(|_| no_image(ID, "a ZIP member cannot be read"))?;
        if file.is_dir() {
            continue;
        }
        if file.size() > MAX_ANSWER_BYTES as u64 {
            return Err(LlmError::new(
                ErrorKind::InvalidResponse,
                "the novelai image is larger than the limit",
            ));
        }
        let mut bytes = Vec::new();
        (&mut file)
            .take(MAX_ANSWER_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|_| no_image(ID, "a ZIP member cannot be inflated"))?;
        if bytes.len() > MAX_ANSWER_BYTES {
            return Err(LlmError::new(
                ErrorKind::InvalidResponse,
                "the novelai image is larger than the limit",
            ));
        }
        if sniff_mime(&bytes).is_some() {
            return Ok(Answer::Image(ImageData::sniffed(bytes)));
        }
    }
    Err(no_image(ID, "the ZIP holds no image"))
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;
    use crate::media::image::ImagePlatform;
    use crate::media::image::tests::{conn, png};

    pub fn zip_of(name: &str, bytes: &[u8]) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        let mut w = zip::ZipWriter::new(&mut out);
        w.start_file(name, zip::write::SimpleFileOptions::default())
            .expect("start");
        w.write_all(bytes).expect("write");
        w.finish().expect("finish");
        out.into_inner()
    }

    #[test]
    fn v4_request_has_captions_negative_and_extras_in_parameters() {
        let mut c = conn(ImagePlatform::Novelai, "nai-diffusion-4-5-full");
        c.base_url = "http://127.0.0.1:9".into();
        let mut req = ImageRequest {
            prompt: "1girl, cat ears".into(),
            aspect_ratio: Some("16:9".into()),
            negative_prompt: Some("lowres".into()),
            reference_images: vec![ImageData::sniffed(png()), ImageData::sniffed(png())],
            ..ImageRequest::default()
        };
        req.extra_body.insert("seed".into(), json!(42));
        let w = build(&c, Some("pst-x"), &req).expect("built");
        assert_eq!(w.url, "http://127.0.0.1:9/ai/generate-image");
        let WireBody::Json(b) = w.body else {
            panic!("json")
        };
        assert_eq!(b["action"], "img2img", "a reference image makes it img2img");
        let p = &b["parameters"];
        assert_eq!(
            (p["width"].clone(), p["height"].clone()),
            (json!(1216), json!(832))
        );
        assert_eq!(p["negative_prompt"], "lowres");
        assert_eq!(p["v4_prompt"]["caption"]["base_caption"], "1girl, cat ears");
        assert_eq!(p["v4_negative_prompt"]["caption"]["base_caption"], "lowres");
        assert_eq!(p["seed"], 42);
        assert_eq!(
            p["image"],
            ImageData::sniffed(png()).base64(),
            "only the first"
        );
        let v3 = build(
            &conn(ImagePlatform::Novelai, "nai-diffusion-3"),
            None,
            &ImageRequest {
                prompt: "x".into(),
                ..ImageRequest::default()
            },
        )
        .expect("built");
        let WireBody::Json(b) = v3.body else {
            panic!("json")
        };
        assert_eq!(b["action"], "generate");
        assert!(b["parameters"].get("v4_prompt").is_none());
    }

    #[test]
    fn the_zip_answer_gives_its_png() {
        let z = zip_of("image_0.png", &png());
        let Answer::Image(img) = parse("application/zip", &z).expect("parsed") else {
            panic!("image")
        };
        assert_eq!(img.bytes, png());
        assert!(parse("application/zip", &zip_of("readme.txt", b"hi")).is_err());
        assert!(parse("application/json", b"{\"message\":\"x\"}").is_err());
    }
}
