//! A built HTTP request, as data: what a codec produces and a test compares with a fixture.

use serde_json::Value;

/// How the key is sent.
#[derive(Clone, PartialEq, Eq)]
pub enum Auth {
    /// No key is sent (a connection without one, such as a local server).
    None,
    /// `Authorization: Bearer <key>`.
    Bearer(String),
    /// A named header (`x-goog-api-key`).
    Header(&'static str, String),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::None => f.write_str("None"),
            Auth::Bearer(_) => f.write_str("Bearer(****)"),
            Auth::Header(h, _) => write!(f, "Header({h}, ****)"),
        }
    }
}

/// A multipart value.
#[derive(Clone, PartialEq, Eq)]
pub enum FormValue {
    /// A text field (`prompt`, `model`, `size`).
    Text(String),
    /// An uploaded file (a reference image for OpenAI `/images/edits`).
    File {
        /// The name sent in `Content-Disposition` (quotes and line breaks replaced by `_`).
        filename: String,
        /// The part's `Content-Type` (`image/png`).
        mime: String,
        /// The file's content.
        bytes: Vec<u8>,
    },
}

impl std::fmt::Debug for FormValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormValue::Text(t) => write!(f, "Text({t:?})"),
            FormValue::File {
                filename,
                mime,
                bytes,
            } => write!(f, "File({filename}, {mime}, {} bytes)", bytes.len()),
        }
    }
}

/// One multipart field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormPart {
    /// The field name (`prompt`, `image[]`); several parts may share one.
    pub name: String,
    /// The field's text or file.
    pub value: FormValue,
}

/// A request body.
#[derive(Debug, Clone, PartialEq)]
pub enum WireBody {
    /// A JSON body, sent as `application/json`.
    Json(Value),
    /// A `multipart/form-data` body (RFC 7578), its parts in order.
    Multipart(Vec<FormPart>),
}

/// A request to send: `POST url` with the key and the body.
#[derive(Debug, Clone, PartialEq)]
pub struct WireRequest {
    /// The full endpoint URL (base, path and any query).
    pub url: String,
    /// How the key goes with the request; its `Debug` output masks the key.
    pub auth: Auth,
    /// Extra headers (`accept`).
    pub headers: Vec<(&'static str, String)>,
    /// What is posted; the body type sets the `content-type` header.
    pub body: WireBody,
}

/// The boundary of multipart bodies (fixed, so bodies are reproducible; a part that contains
/// it is refused by [`multipart_bytes`]).
pub const BOUNDARY: &str = "tavo-image-boundary-7f3a9c2e5b1d";

/// Encodes multipart/form-data (RFC 7578).
pub fn multipart_bytes(parts: &[FormPart]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let quote = |s: &str| s.replace(['"', '\r', '\n'], "_");
    for p in parts {
        out.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        match &p.value {
            FormValue::Text(t) => {
                if t.contains(BOUNDARY) {
                    return Err(format!("{}: contains the multipart boundary", p.name));
                }
                out.extend_from_slice(
                    format!(
                        "Content-Disposition: form-data; name=\"{}\"\r\n\r\n",
                        quote(&p.name)
                    )
                    .as_bytes(),
                );
                out.extend_from_slice(t.as_bytes());
            }
            FormValue::File {
                filename,
                mime,
                bytes,
            } => {
                if bytes
                    .windows(BOUNDARY.len())
                    .any(|w| w == BOUNDARY.as_bytes())
                {
                    return Err(format!("{}: contains the multipart boundary", p.name));
                }
                out.extend_from_slice(
                    format!(
                        "Content-Disposition: form-data; name=\"{}\"; filename=\"{}\"\r\nContent-Type: {}\r\n\r\n",
                        quote(&p.name),
                        quote(filename),
                        quote(mime)
                    )
                    .as_bytes(),
                );
                out.extend_from_slice(bytes);
            }
        }
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    Ok(out)
}

impl WireRequest {
    /// The request as a reqwest builder on `http`.
    pub fn to_reqwest(&self, http: &reqwest::Client) -> Result<reqwest::RequestBuilder, String> {
        let mut rb = http.post(&self.url);
        match &self.auth {
            Auth::None => {}
            Auth::Bearer(k) if k.is_empty() => {}
            Auth::Bearer(k) => rb = rb.bearer_auth(k),
            Auth::Header(h, k) => rb = rb.header(*h, k),
        }
        for (h, v) in &self.headers {
            rb = rb.header(*h, v);
        }
        Ok(match &self.body {
            WireBody::Json(v) => rb
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(serde_json::to_vec(v).map_err(|e| e.to_string())?),
            WireBody::Multipart(parts) => rb
                .header(
                    reqwest::header::CONTENT_TYPE,
                    format!("multipart/form-data; boundary={BOUNDARY}"),
                )
                .body(multipart_bytes(parts)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipart_is_rfc7578() {
        let parts = vec![
            FormPart {
                name: "prompt".into(),
                value: FormValue::Text("a cat".into()),
            },
            FormPart {
                name: "image[]".into(),
                value: FormValue::File {
                    filename: "ref-0.png".into(),
                    mime: "image/png".into(),
                    bytes: b"PNG".to_vec(),
                },
            },
        ];
        let body = String::from_utf8(multipart_bytes(&parts).expect("encoded")).expect("utf8");
        assert_eq!(
            body,
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"prompt\"\r\n\r\na cat\r\n\
                 --{BOUNDARY}\r\nContent-Disposition: form-data; name=\"image[]\"; filename=\"ref-0.png\"\r\nContent-Type: image/png\r\n\r\nPNG\r\n\
                 --{BOUNDARY}--\r\n"
            )
        );
        assert!(format!("{:?}", Auth::Bearer("sk-secret".into())).contains("****"));
    }
}
