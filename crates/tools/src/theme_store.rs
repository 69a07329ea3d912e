//! Persistence of chat themes in the settings key-value store.
//!
//! User themes live under `themes.user.<id>` (the theme's JSON) with the id counter in
//! `themes.nextId`; each write is one store transaction. Official themes are constants of this
//! module (ids up to [`OFFICIAL_THEME_IDS`]) and are never written. A chat's bound theme is the
//! chat state slot [`BINDING_KEY`].

use serde_json::{Value, json};
use tavo_model::ChatId;
use tavo_model::theme::{
    AvatarShape, AvatarStyle, BubbleFont, BubbleStyle, InputAreaStyle, LabelStyle,
    OFFICIAL_THEME_IDS, TextStyle, Theme, ThemeBackground, ThemeId, ThemeStyle,
};
use tavo_store::{Store, StoreError, Tx};

/// Chat state slot holding the id of the chat's theme.
pub const BINDING_KEY: &str = "theme";
const PREFIX: &str = "themes.user.";
const NEXT_ID: &str = "themes.nextId";

fn color(c: &str) -> Option<String> {
    Some(c.to_owned())
}

fn official(id: i64, name: &str, dark: bool) -> Theme {
    let (bg, user, character, text, input) = if dark {
        (
            "#FF14161A",
            "#FF3A5BA0",
            "#FF2A2D34",
            "#FFECEFF4",
            "#FF1E2127",
        )
    } else {
        (
            "#FFF5F5F7",
            "#FF4F7CFF",
            "#FFFFFFFF",
            "#FF1C1C1E",
            "#FFFFFFFF",
        )
    };
    let user_text = "#FFFFFFFF";
    Theme {
        id: Some(ThemeId(id)),
        revision: 1,
        name: name.to_owned(),
        official: true,
        style: ThemeStyle {
            background: Some(ThemeBackground {
                color: color(bg),
                ..Default::default()
            }),
            user_bubble: Some(BubbleStyle {
                color: color(user),
                border_radius: Some(16.0),
                ..Default::default()
            }),
            character_bubble: Some(BubbleStyle {
                color: color(character),
                border_radius: Some(16.0),
                ..Default::default()
            }),
            user_bubble_font: Some(BubbleFont {
                text_style: Some(TextStyle {
                    color: color(user_text),
                    font_size: Some(15.0),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            character_bubble_font: Some(BubbleFont {
                text_style: Some(TextStyle {
                    color: color(text),
                    font_size: Some(15.0),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            thinking_label: Some(LabelStyle {
                color: color(character),
                font_color: color(text),
                visible: Some(true),
            }),
            status_label: Some(LabelStyle {
                color: color(character),
                font_color: color(text),
                visible: Some(true),
            }),
            input_area: Some(InputAreaStyle {
                color: color(input),
                font_color: color(text),
            }),
            avatar: Some(AvatarStyle {
                visible: Some(true),
                shape: Some(AvatarShape::Circle),
                size: Some(40.0),
            }),
            custom_css: None,
        },
        extra: Default::default(),
    }
}

/// The official themes, read-only.
pub fn official_themes() -> Vec<Theme> {
    vec![
        official(1, "Default Light", false),
        official(2, "Default Dark", true),
    ]
}

/// Whether an id belongs to an official theme.
pub fn is_official(id: i64) -> bool {
    (1..=OFFICIAL_THEME_IDS).contains(&id)
}

fn parse(key: &str, v: Value) -> Result<Theme, StoreError> {
    serde_json::from_value(v)
        .map_err(|e| StoreError::InvalidArgument(format!("stored theme {key} is unreadable: {e}")))
}

/// Every theme: official ones first, then user themes by id.
pub fn all(store: &Store) -> Result<Vec<Theme>, StoreError> {
    let mut out = official_themes();
    let mut user: Vec<Theme> = Vec::new();
    for (key, v) in store.setting_list(PREFIX)? {
        user.push(parse(&key, v)?);
    }
    user.sort_by_key(|t| t.id.map(|i| i.0));
    out.extend(user);
    Ok(out)
}

/// One theme.
pub fn get(store: &Store, id: i64) -> Result<Option<Theme>, StoreError> {
    if is_official(id) {
        return Ok(official_themes()
            .into_iter()
            .find(|t| t.id == Some(ThemeId(id))));
    }
    let key = format!("{PREFIX}{id}");
    store.setting_get(&key)?.map(|v| parse(&key, v)).transpose()
}

fn put(tx: &Tx<'_>, theme: &Theme) -> Result<(), StoreError> {
    let id = theme
        .id
        .map(|i| i.0)
        .ok_or_else(|| StoreError::InvalidArgument("theme.id is missing".into()))?;
    let value =
        serde_json::to_value(theme).map_err(|e| StoreError::InvalidArgument(e.to_string()))?;
    tx.setting_set(&format!("{PREFIX}{id}"), &value)
}

/// Stores a new user theme; returns it with its id and revision 1.
pub fn create(store: &Store, mut theme: Theme) -> Result<Theme, StoreError> {
    store.write(|tx| {
        let next = tx
            .setting_get(NEXT_ID)?
            .and_then(|v| v.as_i64())
            .unwrap_or(OFFICIAL_THEME_IDS + 1);
        theme.id = Some(ThemeId(next));
        theme.revision = 1;
        theme.official = false;
        put(tx, &theme)?;
        tx.setting_set(NEXT_ID, &json!(next + 1))?;
        Ok(theme)
    })
}

/// Replaces a user theme, bumping its revision.
pub fn replace(store: &Store, mut theme: Theme) -> Result<Theme, StoreError> {
    store.write(|tx| {
        let id = theme.id.map(|i| i.0).unwrap_or_default();
        let key = format!("{PREFIX}{id}");
        let current = tx.setting_get(&key)?.map(|v| parse(&key, v)).transpose()?;
        let current = current.ok_or(StoreError::NotFound {
            kind: "theme",
            id: id.to_string(),
        })?;
        theme.revision = current.revision + 1;
        theme.official = false;
        put(tx, &theme)?;
        Ok(theme)
    })
}

/// Deletes a user theme; returns whether it existed. Chats bound to it fall back to the default.
pub fn delete(store: &Store, id: i64) -> Result<bool, StoreError> {
    store.setting_delete(&format!("{PREFIX}{id}"))
}

/// The theme bound to a chat: its stored binding when that theme still exists, else the first
/// official theme.
pub fn bound(store: &Store, chat: ChatId) -> Result<Theme, StoreError> {
    let id = store
        .chat_state_get(chat, BINDING_KEY)?
        .and_then(|v| v.as_i64());
    if let Some(id) = id
        && let Some(theme) = get(store, id)?
    {
        return Ok(theme);
    }
    official_themes()
        .into_iter()
        .next()
        .ok_or(StoreError::NotFound {
            kind: "theme",
            id: "official".into(),
        })
}

/// The setting that names the app's current theme (`0` or absent: the app's own look).
pub const CURRENT_KEY: &str = "theme.current";

/// Makes `id` the app's current theme (seed 000: "重新绑定当前主题"; every open page follows the
/// setting at once).
pub fn set_current(store: &Store, id: i64) -> Result<(), StoreError> {
    store.setting_set(CURRENT_KEY, &json!(id))
}

/// Binds a chat to a theme (the UI re-renders without a reload).
pub fn bind(store: &Store, chat: ChatId, theme: i64) -> Result<(), StoreError> {
    if get(store, theme)?.is_none() {
        return Err(StoreError::NotFound {
            kind: "theme",
            id: theme.to_string(),
        });
    }
    store.chat_state_set(chat, BINDING_KEY, &json!(theme))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn official_themes_are_marked_and_reserved() {
        for t in official_themes() {
            assert!(t.official);
            assert!(t.id.is_some_and(|i| is_official(i.0)));
        }
        assert!(!is_official(OFFICIAL_THEME_IDS + 1));
    }

    #[test]
    fn user_themes_get_ids_after_the_official_range() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let t = create(
            &store,
            Theme {
                name: "Mine".into(),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.id, Some(ThemeId(OFFICIAL_THEME_IDS + 1)));
        let again = replace(&store, t.clone()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(again.revision, 2);
        assert_eq!(all(&store).map(|v| v.len()).ok(), Some(3));
        let chat = store
            .chat_create(&tavo_model::Chat {
                name: "c".into(),
                ..Default::default()
            })
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            bound(&store, chat).ok().and_then(|t| t.id),
            Some(ThemeId(1))
        );
        assert!(bind(&store, chat, OFFICIAL_THEME_IDS + 1).is_ok());
        assert_eq!(
            bound(&store, chat).ok().and_then(|t| t.id),
            Some(ThemeId(OFFICIAL_THEME_IDS + 1))
        );
        assert!(bind(&store, chat, 9999).is_err());
        assert_eq!(delete(&store, OFFICIAL_THEME_IDS + 1).ok(), Some(true));
        assert_eq!(
            bound(&store, chat).ok().and_then(|t| t.id),
            Some(ThemeId(1)),
            "falls back"
        );
        assert_eq!(get(&store, OFFICIAL_THEME_IDS + 1).ok(), Some(None));
    }
}
