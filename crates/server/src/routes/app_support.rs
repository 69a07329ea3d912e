//! Routes the browser app needs that the library routes do not give: chats listed with their
//! members, a chat created with its greeting (alternate greetings as swipes, as Tavo's picker
//! offers them), and choosing which swipe of a message is shown.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tavo_engine::settings::{self, SettingSpec};
use tavo_model::{
    Character, CharacterId, CharacterSummary, Chat, ChatId, Message, MessageId, Persona, PersonaId,
    Role, Summary,
};
use tavo_store::{AssetKind, StoreError};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

/// Which chats to list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ChatsQuery {
    /// Only chats this character is a member of.
    pub character: Option<i64>,
}

/// One chat in a listing.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatRow {
    /// Id.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Current revision.
    pub revision: u64,
    /// Members, in order.
    #[schema(value_type = Vec<Object>)]
    pub characters: Vec<CharacterSummary>,
    /// Messages in the chat.
    pub messages: u64,
    /// RFC 3339.
    pub updated_at: String,
}

/// Chats with their members and message counts, most recently changed first.
#[utoipa::path(get, path = "/api/chats", tag = "chats",
    params(ChatsQuery),
    responses((status = 200, description = "The chats", body = [ChatRow])))]
pub async fn list_chats(
    State(state): State<AppState>,
    Query(q): Query<ChatsQuery>,
) -> ApiResult<Json<Vec<ChatRow>>> {
    let rows = state
        .blocking(move |s| {
            s.read(|tx| {
                let summaries = tx.asset_summaries(AssetKind::Chat)?;
                let mut rows = Vec::new();
                for summary in summaries {
                    let id = ChatId(summary.id);
                    let Some(chat) = tx.get::<Chat>(id)? else {
                        continue;
                    };
                    if let Some(c) = q.character
                        && !chat.characters.iter().any(|m| m.id == CharacterId(c))
                    {
                        continue;
                    }
                    rows.push(ChatRow {
                        id: summary.id,
                        name: summary.name,
                        revision: summary.revision,
                        characters: chat.characters,
                        messages: tx.message_count(id)?,
                        updated_at: summary.updated_at,
                    });
                }
                rows.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(b.id.cmp(&a.id)));
                Ok(rows)
            })
        })
        .await?;
    Ok(Json(rows))
}

/// A new chat.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NewChat {
    /// Member character ids (at least one); the first one greets.
    pub characters: Vec<i64>,
    /// Persona id; the default persona when absent.
    #[serde(default)]
    pub persona: Option<i64>,
    /// Name; the members' names when absent.
    #[serde(default)]
    pub name: Option<String>,
    /// Add the greeting as message 0 (default true).
    #[serde(default)]
    pub greeting: Option<bool>,
}

/// Creates a chat as `tavo chat create` does: the first character's greeting, macro-expanded,
/// becomes message 0, with its alternate greetings as that message's swipes.
#[utoipa::path(post, path = "/api/chats", tag = "chats",
    request_body = NewChat,
    responses((status = 201, description = "`{id, revision}`", body = Object),
              (status = 400, description = "No characters", body = ErrorBody),
              (status = 404, description = "A member or the persona does not exist", body = ErrorBody)))]
pub async fn create_chat(
    State(state): State<AppState>,
    Json(body): Json<NewChat>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    if body.characters.is_empty() {
        return Err(ApiError::bad_request(
            "characters must name at least one character id",
        ));
    }
    let now = tavo_prompt::local_now();
    let id = state
        .blocking(move |s| {
            s.write(|tx| {
                let mut characters = Vec::new();
                for id in &body.characters {
                    let c = tx.get::<Character>(CharacterId(*id))?.ok_or_else(|| {
                        StoreError::NotFound {
                            kind: "character",
                            id: id.to_string(),
                        }
                    })?;
                    characters.push(c);
                }
                let persona = match body.persona {
                    Some(p) => Some(tx.get::<Persona>(PersonaId(p))?.ok_or_else(|| {
                        StoreError::NotFound {
                            kind: "persona",
                            id: p.to_string(),
                        }
                    })?),
                    None => tx.list::<Persona>()?.into_iter().find(|p| p.active),
                };
                let mut chat = Chat {
                    name: body
                        .name
                        .clone()
                        .filter(|n| !n.trim().is_empty())
                        .unwrap_or_else(|| {
                            characters
                                .iter()
                                .map(|c| c.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        }),
                    ..Chat::default()
                };
                chat.characters = characters
                    .iter()
                    .map(|c| CharacterSummary {
                        id: c.id.unwrap_or(CharacterId(0)),
                        name: c.name.clone(),
                        avatar: None,
                    })
                    .collect();
                chat.persona = persona.as_ref().and_then(|p| {
                    p.id.map(|id| Summary {
                        id,
                        name: p.name.clone(),
                    })
                });
                let id = tx.chat_create(&chat)?;
                if body.greeting.unwrap_or(true)
                    && let Some(text) =
                        tavo_prompt::render_greeting(&characters, persona.as_ref(), now)
                {
                    let mut greeting = Message::new(Role::Assistant, text.clone());
                    let first = &characters[0];
                    greeting.character_id = first.id;
                    greeting.name = Some(first.name.clone());
                    greeting.send_date = Some(now.to_rfc3339());
                    if characters.len() == 1 {
                        let alternates: Vec<String> = first
                            .alternate_greetings
                            .iter()
                            .filter(|g| !g.trim().is_empty())
                            .filter_map(|g| {
                                let mut alt = vec![first.clone()];
                                alt[0].first_mes.clone_from(g);
                                tavo_prompt::render_greeting(&alt, persona.as_ref(), now)
                            })
                            .collect();
                        if !alternates.is_empty() {
                            greeting.swipes = std::iter::once(text).chain(alternates).collect();
                            greeting.swipe_id = Some(0);
                        }
                    }
                    tx.message_append(id, &greeting)?;
                }
                Ok(id)
            })
        })
        .await?;
    state.hub.library("chat", "created", Some(id.0));
    Ok((
        StatusCode::CREATED,
        Json(json!({ "id": id.0, "revision": 1 })),
    ))
}

/// The swipe to show.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SwipeChoice {
    /// 0-based index into the message's swipes.
    pub index: u64,
}

/// Shows another swipe of a message: the text shown now is kept in its slot (so an edit is
/// not lost), then the chosen swipe becomes the message's content. Answers the message.
#[utoipa::path(put, path = "/api/chats/{id}/messages/{message}/swipe", tag = "chats",
    params(("id" = i64, Path), ("message" = i64, Path)),
    request_body = SwipeChoice,
    responses((status = 200, description = "The message", body = Object),
              (status = 400, description = "No such swipe", body = ErrorBody),
              (status = 404, description = "No such message in this chat", body = ErrorBody)))]
pub async fn choose_swipe(
    State(state): State<AppState>,
    Path((chat, message)): Path<(i64, i64)>,
    Json(choice): Json<SwipeChoice>,
) -> ApiResult<Json<Message>> {
    if state.replies.for_chat(chat).is_some() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "busy",
            "the chat has a live reply; wait for it or stop it first",
        ));
    }
    let updated = state
        .blocking_api(move |s| {
            let missing = || ApiError::not_found(format!("chat {chat} has no message {message}"));
            if s.message_chat(MessageId(message))? != Some(ChatId(chat)) {
                return Err(missing());
            }
            let mut m = s.message_get(MessageId(message))?.ok_or_else(missing)?;
            let index = choice.index as usize;
            if index >= m.swipes.len() {
                return Err(ApiError::bad_request(format!(
                    "message {message} has {} swipes; index {index} does not exist",
                    m.swipes.len()
                )));
            }
            let current = m.swipe_id.unwrap_or(0) as usize;
            if let Some(slot) = m.swipes.get_mut(current) {
                slot.clone_from(&m.content);
            }
            m.content = m.swipes[index].clone();
            m.swipe_id = Some(choice.index);
            s.message_update(&m, None)?;
            Ok(s.message_get(MessageId(message))?.unwrap_or(m))
        })
        .await?;
    state.hub.library("message", "updated", Some(message));
    Ok(Json(updated))
}

/// One setting of the catalogue, as the settings screen shows it.
fn setting_row(store: &tavo_store::Store, spec: &SettingSpec) -> ApiResult<Value> {
    let value = settings::get(store, spec.key).map_err(setting_error)?;
    let kind = match spec.kind {
        settings::Kind::Bool => json!({ "type": "bool" }),
        settings::Kind::Int { min, max } => json!({ "type": "int", "min": min, "max": max }),
        settings::Kind::Enum(values) => json!({ "type": "enum", "values": values }),
    };
    Ok(json!({ "key": spec.key, "value": value, "kind": kind, "about": spec.about }))
}

fn setting_error(e: settings::SettingError) -> ApiError {
    match e {
        settings::SettingError::Unknown(_) => ApiError::not_found(e.to_string()),
        settings::SettingError::Invalid { .. } => ApiError::bad_request(e.to_string()),
        settings::SettingError::Store(s) => s.into(),
    }
}

/// The settings `tavo settings` knows (`tools.*`, `web.fetchAddresses`), each with its
/// effective value, type and bounds.
#[utoipa::path(get, path = "/api/settings", tag = "settings",
    responses((status = 200, description = "`[{key, value, kind, about}]`", body = Object)))]
pub async fn list_settings(State(state): State<AppState>) -> ApiResult<Json<Vec<Value>>> {
    let rows = state
        .blocking_api(|s| {
            settings::SETTINGS
                .iter()
                .map(|spec| setting_row(s, spec))
                .collect()
        })
        .await?;
    Ok(Json(rows))
}

/// A setting's new value.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingValue {
    /// true/false, an integer, or one of the named values.
    #[schema(value_type = Object)]
    pub value: Value,
}

/// Sets one setting, checked against the catalogue as `tavo settings set` checks it.
#[utoipa::path(put, path = "/api/settings/{key}", tag = "settings",
    params(("key" = String, Path)),
    request_body = SettingValue,
    responses((status = 200, description = "`{key, value, kind, about}`", body = Object),
              (status = 400, description = "Not a value this setting takes", body = ErrorBody),
              (status = 404, description = "Unknown setting", body = ErrorBody)))]
pub async fn set_setting(
    State(state): State<AppState>,
    Path(key): Path<String>,
    Json(body): Json<SettingValue>,
) -> ApiResult<Json<Value>> {
    let raw = match &body.value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let shown = key.clone();
    let row = state
        .blocking_api(move |s| {
            settings::set(s, &key, &raw).map_err(setting_error)?;
            let spec = settings::spec(&key)
                .ok_or_else(|| ApiError::not_found(format!("unknown setting {key:?}")))?;
            setting_row(s, spec)
        })
        .await?;
    state.hub.library("setting", "updated", None);
    tracing::debug!(key = %shown, "setting changed");
    Ok(Json(row))
}

/// Sends one tiny request through a connection, as `tavo connection test` does: the latency
/// and the reply, or the provider's error mapped to its kind.
#[utoipa::path(post, path = "/api/connections/{name}/test", tag = "connections",
    params(("name" = String, Path)),
    responses((status = 200, description = "`{ok, connection, latencyMs, reply|error}`", body = Object),
              (status = 404, description = "No such connection", body = ErrorBody)))]
pub async fn test_connection(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    use tavo_llm::{ChatRequest, Client, ConnectionBook, Endpoint};
    let book = state
        .blocking(|s| s.setting_get(tavo_llm::connection::SETTINGS_KEY))
        .await?;
    let book =
        ConnectionBook::from_setting(book).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let c = book
        .pick(Some(&name))
        .map_err(|e| ApiError::not_found(e.to_string()))?
        .clone();
    let mut req = ChatRequest::new(
        c.model.clone(),
        vec![tavo_llm::Message::text(
            tavo_llm::Role::User,
            "Reply with the single word: pong",
        )],
    );
    book.effective_parameters(&c).apply(&mut req);
    req.sampling.max_output_tokens = Some(req.sampling.max_output_tokens.unwrap_or(64).min(64));
    let started = std::time::Instant::now();
    let failure = |kind: Value, message: String, status: Option<u16>| {
        json!({ "ok": false, "connection": c.name, "latencyMs": started.elapsed().as_millis() as u64,
                "error": { "kind": kind, "message": message, "status": status } })
    };
    let endpoint = match c.resolve_key() {
        Ok(api_key) => Endpoint {
            protocol: c.protocol,
            base_url: c.base_url.clone(),
            api_key,
        },
        Err(e) => return Ok(Json(failure(json!("authentication"), e.to_string(), None))),
    };
    let client = Client::with(
        tavo_llm::retry::RetryPolicy::none(),
        tavo_llm::Timeouts {
            headers: std::time::Duration::from_secs(60),
            idle: std::time::Duration::from_secs(60),
            ..tavo_llm::Timeouts::default()
        },
    )
    .map_err(|e| ApiError::internal("the provider client", e.message))?;
    let answer = match client.complete(&endpoint, &req).await {
        Err(e) => failure(json!(e.kind), e.message.clone(), e.status),
        Ok(r) => match r.error.clone() {
            Some((kind, message)) => failure(json!(kind), message, None),
            None => json!({ "ok": true, "connection": c.name,
                            "latencyMs": started.elapsed().as_millis() as u64,
                            "reply": r.text(), "finish": r.finish, "usage": r.usage }),
        },
    };
    Ok(Json(answer))
}
