//! Group chats' members: mute and unmute (Tavo §12 群成员). The reply mode is a field of the
//! chat (`replyMode`, through `POST /api/chats` and `PUT /api/library/chat/{id}`); who answers
//! a reply is the engine's (`speaker` on the reply routes chooses one member).

use axum::Json;
use axum::extract::{Path, State};
use serde::Deserialize;
use serde_json::Value;
use tavo_model::{CharacterId, ChatId};

use crate::error::{ApiResult, ErrorBody};
use crate::state::AppState;

/// A member's muted switch.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberState {
    /// Muted members never answer unless chosen as a reply's `speaker`.
    pub muted: bool,
}

/// Mutes or unmutes a member of a group chat (`tavo chat mute|unmute ID --character CID`);
/// answers the chat as stored, its muted ids in `mutedCharacterIds`.
#[utoipa::path(put, path = "/api/chats/{id}/members/{character}", tag = "chats",
    params(("id" = i64, Path), ("character" = i64, Path)),
    request_body = MemberState,
    responses((status = 200, description = "The chat", body = Object),
              (status = 400, description = "Not a member of the chat", body = ErrorBody),
              (status = 404, description = "No such chat", body = ErrorBody)))]
pub async fn set_member(
    State(state): State<AppState>,
    Path((id, character)): Path<(i64, i64)>,
    Json(body): Json<MemberState>,
) -> ApiResult<Json<Value>> {
    let chat = state
        .blocking_api(move |s| {
            Ok(tavo_tools::group::set_muted(
                s,
                ChatId(id),
                CharacterId(character),
                body.muted,
            )?)
        })
        .await?;
    state.hub.library("chat", "updated", Some(id));
    Ok(Json(chat))
}
