//! Message translation (`shared/reference/tavo-docs.md` §11.5): one request that translates a
//! message's text into a target language, on the translation connection when one is set (else
//! the default connection), with a prompt template that keeps `{{language}}` and `{{content}}`.
//!
//! The translation is stored on the message under `translation` (`{language, text, at}`), next
//! to the original, which is never changed: the app shows it under the bubble, exports keep it,
//! and a second translation replaces the first. A chat may carry its own choices in its
//! `translation` object (`{language, connection, prompt}`), which win over the settings.

use serde::Serialize;
use serde_json::{Value, json};
use tavo_llm::connection::SETTINGS_KEY;
use tavo_llm::{ChatRequest, ConnectionBook, Endpoint, Message as LlmMessage, Role as LlmRole};
use tavo_model::MessageId;
use tavo_store::{Store, StoreError};

use crate::settings::text_setting;

/// The setting naming the target language (default [`DEFAULT_LANGUAGE`]).
pub const LANGUAGE_SETTING: &str = "translation.language";
/// The setting naming the connection translations use (unset: the default connection).
pub const CONNECTION_SETTING: &str = "translation.connection";
/// The setting holding the prompt template.
pub const PROMPT_SETTING: &str = "translation.prompt";
/// The language a translation goes into when nothing says otherwise.
pub const DEFAULT_LANGUAGE: &str = "English";
/// The built-in template: `{{language}}` and `{{content}}` are filled in, nothing else.
pub const DEFAULT_PROMPT: &str = "Translate the following text into {{language}}. Keep the formatting, \
names, quotes and line breaks; do not add notes or explanations. Answer with the translation only.\n\n{{content}}";
/// The longest text translated in one request.
pub const MAX_CONTENT_CHARS: usize = 60_000;

/// Why a translation did not happen. Nothing is stored in any of these cases.
#[derive(Debug, thiserror::Error)]
pub enum TranslateError {
    /// No such message.
    #[error("message {0} does not exist")]
    NotFound(MessageId),
    /// Nothing to translate.
    #[error("message {0} has no text to translate")]
    Empty(MessageId),
    /// The text is longer than [`MAX_CONTENT_CHARS`].
    #[error("message {0} is {1} characters long; translations take at most {MAX_CONTENT_CHARS}")]
    TooLong(MessageId, usize),
    /// The template lost a placeholder.
    #[error("the translation prompt must keep {{{{language}}}} and {{{{content}}}}")]
    Template,
    /// No usable connection.
    #[error(transparent)]
    Connection(#[from] tavo_llm::connection::ConnectionError),
    /// The provider refused or failed.
    #[error("the translation request failed: {0}")]
    Provider(String),
    /// The model answered nothing.
    #[error("the model answered an empty translation")]
    NoAnswer,
    /// The library.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A task of the engine failed.
    #[error("{0}")]
    Internal(String),
}

impl TranslateError {
    /// A stable code for every door.
    pub fn code(&self) -> &'static str {
        match self {
            TranslateError::NotFound(_) => "resource_not_found",
            TranslateError::Empty(_) | TranslateError::TooLong(..) | TranslateError::Template => {
                "invalid_arguments"
            }
            TranslateError::Connection(_) => "invalid_arguments",
            TranslateError::Provider(_) | TranslateError::NoAnswer => "unavailable",
            TranslateError::Store(_) | TranslateError::Internal(_) => "internal_error",
        }
    }
}

/// A stored translation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Translation {
    /// The message translated.
    pub message_id: MessageId,
    /// The target language.
    pub language: String,
    /// The translated text.
    pub text: String,
    /// The connection used.
    pub connection: String,
}

/// The prompt with its two placeholders filled; the content goes in last, so `{{…}}` in the
/// message's own text stays as written.
pub fn render(template: &str, language: &str, content: &str) -> Result<String, TranslateError> {
    if !template.contains("{{language}}") || !template.contains("{{content}}") {
        return Err(TranslateError::Template);
    }
    Ok(template
        .replace("{{language}}", language)
        .replace("{{content}}", content))
}

struct Prepared {
    request: ChatRequest,
    endpoint: Endpoint,
    language: String,
    connection: String,
}

fn prepare(
    store: &Store,
    message: MessageId,
    language: Option<String>,
    connection: Option<String>,
) -> Result<Prepared, TranslateError> {
    let m = store
        .message_get(message)?
        .ok_or(TranslateError::NotFound(message))?;
    let content = m.content.trim();
    if content.is_empty() {
        return Err(TranslateError::Empty(message));
    }
    let chars = content.chars().count();
    if chars > MAX_CONTENT_CHARS {
        return Err(TranslateError::TooLong(message, chars));
    }
    let chat_choice = match store.message_chat(message)? {
        Some(chat) => store
            .chat_get(chat)?
            .and_then(|c| c.extra.get("translation").cloned())
            .unwrap_or(Value::Null),
        None => Value::Null,
    };
    let pick = |field: &str| {
        chat_choice
            .get(field)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
    };
    let language = language
        .or_else(|| pick("language"))
        .map_or_else(|| text_setting(store, LANGUAGE_SETTING), |l| Ok(Some(l)))?
        .unwrap_or_else(|| DEFAULT_LANGUAGE.to_owned());
    let template = pick("prompt")
        .map_or_else(|| text_setting(store, PROMPT_SETTING), |p| Ok(Some(p)))?
        .unwrap_or_else(|| DEFAULT_PROMPT.to_owned());
    let wanted = connection
        .or_else(|| pick("connection"))
        .map_or_else(|| text_setting(store, CONNECTION_SETTING), |c| Ok(Some(c)))?;
    let book = ConnectionBook::from_setting(store.setting_get(SETTINGS_KEY)?)?;
    let conn = book.pick(wanted.as_deref())?.clone();
    let parameters = book.effective_parameters(&conn);
    let endpoint = conn.endpoint()?;
    // The template is a prompt field of the chat: its EJS and macros first, then the two
    // placeholders — the message's text last, so what it contains is never expanded.
    let template = match store.message_chat(message)? {
        Some(chat) => {
            let ejs = crate::prompt::ejs_enabled(store)?;
            crate::display::DisplayContext::load(store, chat)?.expand_template(
                &template,
                message.get() as u64,
                ejs,
            )
        }
        None => template,
    };
    let prompt = render(&template, &language, content)?;
    let mut request = ChatRequest::new(
        conn.model.clone(),
        vec![LlmMessage::text(LlmRole::User, prompt)],
    );
    parameters.apply(&mut request);
    Ok(Prepared {
        request,
        endpoint,
        language,
        connection: conn.name.clone(),
    })
}

/// Translates message `message` into `language` (else the chat's, else the setting's, else
/// English) on `connection` (else the chat's, else `translation.connection`, else the
/// default) and stores the translation on the message.
pub(crate) async fn translate(
    store: &Store,
    client: &tavo_llm::Client,
    gate: &tavo_tools::Gate,
    message: MessageId,
    language: Option<String>,
    connection: Option<String>,
) -> Result<Translation, TranslateError> {
    let prepared = blocking(store, gate, move |s| {
        prepare(s, message, language, connection)
    })
    .await?;
    let response = client
        .complete(&prepared.endpoint, &prepared.request)
        .await
        .map_err(|e| TranslateError::Provider(e.message))?;
    if let Some((_, why)) = &response.error {
        return Err(TranslateError::Provider(why.clone()));
    }
    let text = response.text().trim().to_owned();
    if text.is_empty() {
        return Err(TranslateError::NoAnswer);
    }
    let done = Translation {
        message_id: message,
        language: prepared.language,
        text,
        connection: prepared.connection,
    };
    let stored = done.clone();
    blocking(store, gate, move |s| {
        s.write(|tx| {
            let mut m = tx.message_get(message)?.ok_or_else(|| StoreError::NotFound { kind: "message", id: message.to_string() })?;
            m.extra.insert(
                "translation".into(),
                json!({"language": stored.language, "text": stored.text,
                       "at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)}),
            );
            tx.message_update(&m, None)
        })
        .map_err(TranslateError::from)
    })
    .await?;
    Ok(done)
}

async fn blocking<T: Send + 'static>(
    store: &Store,
    gate: &tavo_tools::Gate,
    f: impl FnOnce(&Store) -> Result<T, TranslateError> + Send + 'static,
) -> Result<T, TranslateError> {
    crate::offload::gated(store, gate, TranslateError::Internal, f).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_keeps_both_placeholders_and_content_goes_in_last() {
        let out = render(DEFAULT_PROMPT, "French", "Hi {{language}} {{user}}").unwrap();
        assert!(out.contains("into French") && out.ends_with("Hi {{language}} {{user}}"));
        assert!(matches!(
            render("Translate: {{content}}", "x", "y"),
            Err(TranslateError::Template)
        ));
    }
}
