//! The image codecs against the wire fixtures in `tests/fixtures/media/image/` (see its README
//! for where each shape comes from): requests built field by field as the providers document
//! them, answers parsed, failures mapped — and the same through the loopback mock of
//! `tavo_testkit::image`, where no key and no provider message may reach an error.

use std::path::PathBuf;

use serde_json::{Map, Value, json};
use tavo_llm::ErrorKind;
use tavo_llm::media::Platform as _;
use tavo_llm::media::image::{
    self, Answer, Auth, FormValue, ImageConnection, ImageData, ImagePlatform, ImageRequest,
    WireBody,
};
use tavo_testkit::image::{MockImage, png, stored_zip};

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/media/image")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn model_of(platform: ImagePlatform) -> &'static str {
    match platform {
        ImagePlatform::Openai => "dall-e-3",
        ImagePlatform::Gemini => "gemini-2.5-flash-image",
        ImagePlatform::Openrouter => "google/gemini-2.5-flash-image-preview",
        ImagePlatform::Novelai => "nai-diffusion-4-5-full",
    }
}

fn prompt_of(platform: ImagePlatform) -> &'static str {
    match platform {
        ImagePlatform::Openai => "A cute baby sea otter",
        ImagePlatform::Gemini => {
            "Create a picture of a nano banana dish in a fancy restaurant with a Gemini theme"
        }
        ImagePlatform::Openrouter => "Generate a beautiful sunset over mountains",
        ImagePlatform::Novelai => "1girl, cat ears, library",
    }
}

fn request_from(options: &Value, prompt: &str) -> ImageRequest {
    let s = |k: &str| options.get(k).and_then(Value::as_str).map(str::to_owned);
    ImageRequest {
        prompt: prompt.into(),
        size: s("size"),
        aspect_ratio: s("aspectRatio"),
        negative_prompt: s("negativePrompt"),
        reference_images: Vec::new(),
        extra_body: options
            .get("extraBody")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
    }
}

fn conn(platform: ImagePlatform) -> ImageConnection {
    let mut c = ImageConnection::new("img", platform, model_of(platform));
    c.api_key = Some("test-key".into());
    c
}

#[test]
fn requests_are_the_documented_shapes() {
    for platform in ImagePlatform::all().iter().copied() {
        let want = fixture(&format!("{}.request.json", platform.id()));
        let req = request_from(&want["options"], prompt_of(platform));
        let built = image::build(&conn(platform), Some("test-key"), &req).expect("built");
        assert_eq!(built.url, want["url"], "{platform:?} url");
        let header = match &built.auth {
            Auth::Bearer(k) => ("authorization", format!("Bearer {k}")),
            Auth::Header(h, k) => (*h, k.clone()),
            Auth::None => ("none", String::new()),
        };
        assert_eq!(
            want["headers"][header.0],
            header.1.as_str(),
            "{platform:?} key header"
        );
        let WireBody::Json(body) = built.body else {
            panic!("{platform:?}: a JSON body")
        };
        assert_eq!(body, want["body"], "{platform:?} body");
    }
}

#[test]
fn openai_reference_images_go_to_edits_as_multipart() {
    let want = fixture("openai.edits.request.json");
    let mut c = conn(ImagePlatform::Openai);
    c.model = "gpt-image-1".into();
    let req = ImageRequest {
        prompt: "Generate a photorealistic image of a gift basket labeled 'Relax & Unwind'".into(),
        reference_images: vec![ImageData::sniffed(png()), ImageData::sniffed(png())],
        ..ImageRequest::default()
    };
    let built = image::build(&c, Some("test-key"), &req).expect("built");
    assert_eq!(built.url, want["url"]);
    let WireBody::Multipart(parts) = built.body else {
        panic!("multipart")
    };
    let seen: Vec<Value> = parts
        .iter()
        .map(|p| match &p.value {
            FormValue::Text(t) => json!({"name": p.name, "value": t}),
            FormValue::File { filename, mime, .. } => {
                json!({"name": p.name, "filename": filename, "contentType": mime})
            }
        })
        .collect();
    assert_eq!(Value::Array(seen), want["multipart"]);
}

fn body_bytes(resp: &Value) -> Vec<u8> {
    if resp.get("zip").is_some() {
        return stored_zip("image_0.png", &png());
    }
    serde_json::to_vec(&resp["body"]).expect("json")
}

#[test]
fn answers_parse_to_the_image() {
    for platform in ImagePlatform::all().iter().copied() {
        let resp = fixture(&format!("{}.response.json", platform.id()));
        let ct = resp["headers"]["content-type"].as_str().unwrap_or("");
        match image::parse(platform, ct, &body_bytes(&resp)).expect("parsed") {
            Answer::Image(img) => {
                assert_eq!(img.bytes, png(), "{platform:?}");
                assert_eq!(img.mime, "image/png");
            }
            Answer::Url(u) => panic!("{platform:?}: a URL {u}"),
        }
    }
    let blocked = fixture("gemini.blocked.json");
    let e = image::parse(
        ImagePlatform::Gemini,
        "application/json",
        &body_bytes(&blocked),
    )
    .expect_err("blocked");
    assert_eq!(e.kind.as_str(), blocked["kind"]);
}

#[test]
fn error_answers_map_to_kinds_without_the_provider_text() {
    for (platform, name) in [
        (ImagePlatform::Openai, "openai.error-401.json"),
        (ImagePlatform::Openai, "openai.error-400-policy.json"),
        (ImagePlatform::Gemini, "gemini.error-429.json"),
    ] {
        let f = fixture(name);
        let status = f["status"].as_u64().expect("status") as u16;
        let code = f["body"]["error"]["code"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| f["body"]["error"]["status"].as_str().map(str::to_owned));
        let e = image::status_error(platform, status, code);
        let want = if name.contains("policy") {
            "content_filtered"
        } else {
            f["kind"].as_str().expect("kind")
        };
        assert_eq!(e.kind.as_str(), want, "{name}");
        let provider_text = f["body"]["error"]["message"].as_str().expect("message");
        assert!(!e.message.contains(provider_text), "{name}: {}", e.message);
        assert!(!e.message.contains("test-key"), "{name}: {}", e.message);
    }
}

async fn through_mock(
    mock: &MockImage,
    platform: ImagePlatform,
    key: &str,
    prompt: &str,
) -> Result<ImageData, tavo_llm::LlmError> {
    let base = match platform {
        ImagePlatform::Openai => format!("{}/v1", mock.base()),
        ImagePlatform::Gemini => format!("{}/v1beta", mock.base()),
        ImagePlatform::Openrouter => format!("{}/api/v1", mock.base()),
        ImagePlatform::Novelai => mock.base(),
    };
    let mut c = conn(platform);
    c.base_url = base;
    c.api_key = Some(key.into());
    let client = tavo_llm::Client::new().expect("client");
    let req = ImageRequest {
        prompt: prompt.into(),
        extra_body: Map::new(),
        ..ImageRequest::default()
    };
    image::generate(&client, &c, &req).await
}

#[tokio::test]
async fn every_platform_through_the_loopback_mock() {
    let mock = MockImage::start().await.expect("mock");
    for platform in ImagePlatform::all().iter().copied() {
        let img = through_mock(&mock, platform, "good-key", "a cat")
            .await
            .unwrap_or_else(|e| panic!("{platform:?}: {e}"));
        assert_eq!(
            (img.bytes, img.mime.as_str()),
            (png(), "image/png"),
            "{platform:?}"
        );
    }
    let paths: Vec<String> = mock.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        paths,
        [
            "/v1/images/generations",
            "/v1beta/models/gemini-2.5-flash-image:generateContent",
            "/api/v1/chat/completions",
            "/ai/generate-image",
        ]
    );
    let seen = mock.requests();
    assert_eq!(seen[0].headers["authorization"], "Bearer good-key");
    assert_eq!(seen[1].headers["x-goog-api-key"], "good-key");
    assert_eq!(
        seen[1].body["generationConfig"]["responseModalities"],
        json!(["TEXT", "IMAGE"])
    );
    assert_eq!(seen[2].body["modalities"], json!(["image", "text"]));
    assert_eq!(seen[3].body["input"], "a cat");
    // An OpenAI answer with a URL instead of b64_json is downloaded.
    let img = through_mock(&mock, ImagePlatform::Openai, "good-key", "URL please")
        .await
        .expect("downloaded");
    assert_eq!(img.bytes, png());
}

#[tokio::test]
async fn failures_are_mapped_and_never_echo_the_key_or_the_body() {
    let mock = MockImage::start().await.expect("mock");
    for platform in ImagePlatform::all().iter().copied() {
        let e = through_mock(&mock, platform, "bad-key", "a cat")
            .await
            .expect_err("refused");
        assert_eq!(e.kind, ErrorKind::Authentication, "{platform:?}");
        assert_eq!(e.status, Some(401));
        assert!(
            !e.message.contains("bad-key"),
            "{platform:?}: {}",
            e.message
        );
        for (prompt, kind) in [
            ("FAIL 403", ErrorKind::Permission),
            ("FAIL 404", ErrorKind::NotFound),
            ("FAIL 429", ErrorKind::RateLimit),
            ("FAIL 500", ErrorKind::Server),
        ] {
            let e = through_mock(&mock, platform, "good-key", prompt)
                .await
                .expect_err(prompt);
            assert_eq!(e.kind, kind, "{platform:?} {prompt}");
            assert!(
                !e.message.contains("/srv/provider"),
                "{platform:?}: {}",
                e.message
            );
        }
    }
    for platform in [
        ImagePlatform::Openai,
        ImagePlatform::Gemini,
        ImagePlatform::Openrouter,
    ] {
        let e = through_mock(&mock, platform, "good-key", "REFUSE this")
            .await
            .expect_err("refused");
        assert_eq!(e.kind, ErrorKind::ContentFiltered, "{platform:?}: {e}");
    }
    // Nothing listens here: a network error that names the platform, not the URL's secrets.
    let mut c = conn(ImagePlatform::Openai);
    c.base_url = "http://127.0.0.1:9/v1".into();
    let client = tavo_llm::Client::new().expect("client");
    let e = image::generate(
        &client,
        &c,
        &ImageRequest {
            prompt: "x".into(),
            ..ImageRequest::default()
        },
    )
    .await
    .expect_err("no server");
    assert_eq!(e.kind, ErrorKind::Network);
}
