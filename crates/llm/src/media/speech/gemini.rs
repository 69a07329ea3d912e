//! Gemini TTS models (`gemini-2.5-flash-preview-tts`, …) through `generateContent`.
//!
//! Request: `POST {base}/models/{model}:generateContent` (key in `x-goog-api-key`)
//! `{contents: [{parts: [{text}]}], generationConfig: {responseModalities: ["AUDIO"],
//! speechConfig: {voiceConfig: {prebuiltVoiceConfig: {voiceName}}}}}` (`languageCode` inside
//! `speechConfig` when the connection's option sets it). Answer:
//! `candidates[0].content.parts[].inlineData {mimeType: "audio/L16;codec=pcm;rate=24000",
//! data}` — raw signed 16-bit little-endian PCM, mono, which is wrapped here in a WAV header
//! so that every player can play it. A blocked prompt has `promptFeedback.blockReason`.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::{Audio, VoiceConnection, no_audio, option_str};
use crate::error::{ErrorKind, LlmError};
use crate::media::image::{Auth, WireRequest};

const ID: &str = "gemini";
/// Gemini's PCM sample rate when the MIME type does not say.
pub const DEFAULT_RATE: u32 = 24_000;

/// Builds the request.
pub fn build(
    conn: &VoiceConnection,
    key: Option<&str>,
    text: &str,
    voice: &str,
) -> Result<WireRequest, LlmError> {
    let mut speech = Map::new();
    speech.insert(
        "voiceConfig".into(),
        json!({"prebuiltVoiceConfig": {"voiceName": voice}}),
    );
    if let Some(lang) = option_str(conn, "languageCode") {
        speech.insert("languageCode".into(), json!(lang));
    }
    let body = json!({
        "contents": [{"parts": [{"text": text}]}],
        "generationConfig": {"responseModalities": ["AUDIO"], "speechConfig": speech},
    });
    let model = conn.model.trim().trim_start_matches("models/");
    Ok(WireRequest {
        url: format!("{}/models/{model}:generateContent", conn.base()),
        auth: key.map_or(Auth::None, |k| Auth::Header("x-goog-api-key", k.to_owned())),
        headers: Vec::new(),
        body: super::json(body),
    })
}

/// Parses the first audio part of the first candidate.
pub fn parse(body: &[u8]) -> Result<Audio, LlmError> {
    let v: Value = serde_json::from_slice(body).map_err(|_| {
        LlmError::new(
            ErrorKind::InvalidResponse,
            "the gemini speech API answered something that is not JSON",
        )
    })?;
    if let Some(reason) = v
        .pointer("/promptFeedback/blockReason")
        .and_then(Value::as_str)
    {
        return Err(LlmError::new(
            ErrorKind::ContentFiltered,
            format!("the gemini speech API refused the text ({reason})"),
        ));
    }
    let parts = v
        .pointer("/candidates/0/content/parts")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            let why = v
                .pointer("/candidates/0/finishReason")
                .and_then(Value::as_str)
                .map_or("no candidate".to_owned(), |r| format!("finishReason {r}"));
            no_audio(ID, &why)
        })?;
    let inline = parts
        .iter()
        .find_map(|p| p.get("inlineData").or_else(|| p.get("inline_data")))
        .ok_or_else(|| no_audio(ID, "no inlineData part"))?;
    let data = inline
        .get("data")
        .and_then(Value::as_str)
        .ok_or_else(|| no_audio(ID, "inlineData without data"))?;
    let mime = inline
        .get("mimeType")
        .or_else(|| inline.get("mime_type"))
        .and_then(Value::as_str)
        .unwrap_or("audio/L16;codec=pcm;rate=24000");
    let clean: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(clean.as_bytes())
        .map_err(|_| no_audio(ID, "inlineData is not base64"))?;
    if bytes.is_empty() {
        return Err(no_audio(ID, "inlineData is empty"));
    }
    let base = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if base == "audio/l16" || base == "audio/pcm" {
        let rate = mime_param(mime, "rate").unwrap_or(DEFAULT_RATE);
        let channels = mime_param(mime, "channels").unwrap_or(1).clamp(1, 8) as u16;
        return Ok(Audio {
            bytes: wav(&bytes, rate, channels),
            mime: "audio/wav".into(),
        });
    }
    Ok(Audio {
        bytes,
        mime: mime.to_owned(),
    })
}

fn mime_param(mime: &str, name: &str) -> Option<u32> {
    mime.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().eq_ignore_ascii_case(name))
            .then(|| v.trim().parse().ok())
            .flatten()
            .filter(|n| *n > 0)
    })
}

/// A WAV file (RIFF, PCM format 1, 16 bits) around little-endian samples.
pub fn wav(pcm: &[u8], rate: u32, channels: u16) -> Vec<u8> {
    let data_len = u32::try_from(pcm.len()).unwrap_or(u32::MAX - 36);
    let block_align = channels * 2;
    let byte_rate = rate * u32::from(block_align);
    let mut out = Vec::with_capacity(44 + pcm.len());
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&channels.to_le_bytes());
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&byte_rate.to_le_bytes());
    out.extend_from_slice(&block_align.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    out.extend_from_slice(pcm);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcm_is_wrapped_as_wav_with_the_rate_of_the_mime_type() {
        let b64 = base64::engine::general_purpose::STANDARD.encode([1u8, 0, 2, 0]);
        let body = json!({"candidates": [{"content": {"parts": [{"inlineData": {
            "mimeType": "audio/L16;codec=pcm;rate=16000", "data": b64}}]}}]});
        let audio = parse(body.to_string().as_bytes()).expect("audio");
        assert_eq!(audio.mime, "audio/wav");
        assert_eq!(&audio.bytes[..4], b"RIFF");
        assert_eq!(&audio.bytes[8..16], b"WAVEfmt ");
        assert_eq!(
            u32::from_le_bytes(audio.bytes[24..28].try_into().expect("4")),
            16_000
        );
        assert_eq!(
            u32::from_le_bytes(audio.bytes[40..44].try_into().expect("4")),
            4
        );
        assert_eq!(&audio.bytes[44..], &[1, 0, 2, 0]);
    }

    #[test]
    fn refusals_and_empty_answers_are_errors() {
        let blocked = json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}});
        let e = parse(blocked.to_string().as_bytes()).expect_err("blocked");
        assert_eq!(e.kind, ErrorKind::ContentFiltered);
        let e = parse(br#"{"candidates": [{"finishReason": "OTHER"}]}"#).expect_err("none");
        assert!(e.message.contains("finishReason OTHER"), "{}", e.message);
        assert!(parse(b"<html>").is_err());
    }
}
