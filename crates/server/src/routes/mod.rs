//! The router: every route, grouped by body limit, with the OpenAPI document collected from
//! the handlers' `#[utoipa::path]` annotations.

pub mod app_support;
pub mod approvals;
pub mod assets;
pub mod audit;
pub mod backup;
pub mod bubble;
pub mod connections;
pub mod events;
pub mod generate;
pub mod group;
pub mod health;
pub mod images;
pub mod mcp_servers;
pub mod media;
pub mod memory;
pub mod ops;
pub mod pages;
pub mod plugins;
pub mod replies;
pub mod search_apis;
pub mod signed_files;
pub mod transfer;
pub mod translate;
pub mod tts;
pub mod workbench;

use axum::Router;
use axum::body::Body;
use axum::extract::DefaultBodyLimit;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::state::AppState;

/// The document's fixed parts; paths and schemas are added by the routers below.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "tavo",
        description = "The tavo HTTP API: the operation door, the library, replies and their event \
                       streams. Authenticate with `Authorization: Bearer <token>` (or the session \
                       cookie); requests that change state also accept `X-Tavo-Request: 1` instead \
                       of the bearer header as proof that they are not a cross-site form."
    ),
    components(schemas(crate::error::ErrorBody, crate::error::ErrorDetail))
)]
struct ApiDoc;

/// All routes with their state, and the OpenAPI document describing them.
pub fn router(state: AppState) -> (Router, utoipa::openapi::OpenApi) {
    let limits = state.config.limits.clone();
    // Small JSON bodies: sessions, connections, messages, decisions.
    let small = OpenApiRouter::new()
        .routes(routes!(health::health))
        .routes(routes!(health::login, health::logout))
        .routes(routes!(connections::list, connections::add))
        .routes(routes!(connections::replace, connections::remove))
        .routes(routes!(connections::make_default))
        .routes(routes!(connections::sources))
        .routes(routes!(search_apis::list, search_apis::save))
        .routes(routes!(search_apis::remove))
        .routes(routes!(search_apis::make_default))
        .routes(routes!(events::global))
        .routes(routes!(media::character_avatar))
        .routes(routes!(media::persona_avatar))
        .routes(routes!(media::chat_file))
        .routes(routes!(media::global_file))
        .routes(routes!(transfer::export))
        .routes(routes!(assets::messages_page))
        .routes(routes!(replies::send_message))
        .routes(routes!(replies::start))
        .routes(routes!(replies::live))
        .routes(routes!(replies::get))
        .routes(routes!(replies::cancel))
        .routes(routes!(replies::confirm))
        .routes(routes!(replies::answer))
        .routes(routes!(replies::chat_reply))
        .routes(routes!(events::reply))
        .routes(routes!(app_support::list_chats, app_support::create_chat))
        .routes(routes!(app_support::choose_swipe))
        .routes(routes!(app_support::view_page))
        .routes(routes!(app_support::display_text))
        .routes(routes!(app_support::character_display))
        .routes(routes!(app_support::clone_chat))
        .routes(routes!(group::set_member))
        .routes(routes!(approvals::list))
        .routes(routes!(approvals::forget))
        .routes(routes!(approvals::all, approvals::reset))
        .routes(routes!(approvals::set, approvals::unset))
        .routes(routes!(app_support::list_settings))
        .routes(routes!(app_support::set_setting))
        .routes(routes!(app_support::test_connection))
        .routes(routes!(audit::list, audit::clear))
        .routes(routes!(mcp_servers::list, mcp_servers::add))
        .routes(routes!(mcp_servers::remove))
        .routes(routes!(mcp_servers::set_enabled))
        .routes(routes!(mcp_servers::set_tool_approval))
        .routes(routes!(mcp_servers::info))
        .routes(routes!(workbench::prompt))
        .routes(routes!(workbench::regex_test))
        .routes(routes!(workbench::character_owned))
        .routes(routes!(workbench::tokens))
        .routes(routes!(bubble::variables))
        .routes(routes!(bubble::chat_virtual_file))
        .routes(routes!(bubble::global_virtual_file))
        .routes(routes!(memory::get, memory::put))
        .routes(routes!(memory::extract))
        .routes(routes!(backup::get_backup, backup::post_backup))
        .routes(routes!(plugins::list))
        .routes(routes!(plugins::runtime))
        .routes(routes!(plugins::get, plugins::uninstall))
        .routes(routes!(plugins::set_enabled))
        .routes(routes!(
            plugins::get_config,
            plugins::set_config,
            plugins::reset_config
        ))
        .routes(routes!(plugins::file))
        .routes(routes!(pages::events))
        .routes(routes!(pages::tool_calling))
        .routes(routes!(pages::set_tools))
        .routes(routes!(pages::set_chat))
        .routes(routes!(translate::translate))
        .routes(routes!(translate::describe_image))
        .routes(routes!(tts::play))
        .routes(routes!(tts::stop))
        .routes(routes!(tts::say))
        .routes(routes!(tts::audio))
        .routes(routes!(tts::cache_usage, tts::cache_clear))
        .routes(routes!(tts::list_connections, tts::add_connection))
        .routes(routes!(tts::replace_connection, tts::remove_connection))
        .routes(routes!(tts::default_connection))
        .routes(routes!(tts::list_bindings))
        .routes(routes!(tts::set_binding, tts::remove_binding))
        .routes(routes!(tts::get_settings, tts::put_settings))
        .routes(routes!(generate::generate))
        .routes(routes!(signed_files::sign))
        .routes(routes!(signed_files::serve))
        .routes(routes!(images::list, images::add))
        .routes(routes!(images::update, images::remove))
        .routes(routes!(images::make_default))
        .layer(DefaultBodyLimit::max(limits.json_body));
    // The operation door and whole-asset writes: a lorebook or preset can be megabytes.
    let large = OpenApiRouter::new()
        .routes(routes!(ops::list))
        .routes(routes!(ops::call))
        .routes(routes!(pages::answer))
        .routes(routes!(assets::list, assets::create))
        .routes(routes!(assets::get, assets::replace, assets::delete))
        .routes(routes!(assets::lorebook_entries))
        .routes(routes!(workbench::set_character_avatar))
        .routes(routes!(workbench::set_persona_avatar))
        // Reference images arrive as data URLs.
        .routes(routes!(images::generate))
        .routes(routes!(images::imagine))
        .layer(DefaultBodyLimit::max(limits.op_body));
    // A plugin package arrives whole; the reader refuses anything bigger before unzipping.
    let package = OpenApiRouter::new()
        .routes(routes!(plugins::install))
        .layer(DefaultBodyLimit::max(
            tavo_tools::plugins::MAX_PACKAGE_BYTES,
        ));
    // Uploads stream to disk under their own per-file and per-request limits.
    let upload = OpenApiRouter::new()
        .routes(routes!(transfer::import))
        .routes(routes!(backup::restore))
        .layer(DefaultBodyLimit::disable());
    let (router, mut api) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(small)
        .merge(large)
        .merge(upload)
        .merge(package)
        .split_for_parts();
    api.info.version = env!("CARGO_PKG_VERSION").to_owned();
    // Serialised once and shared: a handler's captures are cloned with the router, and the
    // document as a value is almost a megabyte.
    let doc = bytes::Bytes::from(serde_json::to_vec(&api).unwrap_or_default());
    let router = router
        .route(
            "/api/openapi.json",
            axum::routing::get(move || {
                let doc = doc.clone();
                async move { ([(http::header::CONTENT_TYPE, "application/json")], doc) }
            }),
        )
        .fallback(crate::static_app::fallback)
        .with_state(state);
    (router, api)
}

pub(crate) async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such route; GET /api/openapi.json lists them all",
    )
}

/// Turns the plain-text error responses of extractors and layers (413 from a body limit, 405,
/// a malformed JSON body) into the JSON error shape every client can rely on.
pub async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_owned();
    let code = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY => "invalid_arguments",
        s if s.is_server_error() => "internal_error",
        _ => "error",
    };
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_owned()
    } else {
        text
    };
    let mut out = ApiError::new(status, code, message).into_response();
    for (name, value) in parts.headers.iter() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

/// A byte response with a content type.
pub fn bytes_response(mime: &str, bytes: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(bytes));
    if let Ok(v) = header::HeaderValue::from_str(mime) {
        response.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    response.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    response
}
