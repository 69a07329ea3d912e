//! Chat themes (seed 000 "聊天主题", reference §17 主题).
//!
//! A theme styles the chat page: background, message bubbles and their fonts, the avatar, the
//! thinking ("inner monologue") and status labels, and the input area, plus optional custom CSS.
//! Every nested field is listed explicitly so that the model-door create/update schema names
//! each legal field (bubble fill is `color`; bubble text colour is
//! `userBubbleFont.textStyle.color` / `characterBubbleFont.textStyle.color`; the input area uses
//! `color` for its background and `fontColor` for its text). All style fields are optional: an
//! absent field means "the app's default", and an update merges only the fields it carries.
//!
//! Official themes ship with the program and are read-only; users duplicate and edit a copy.

use serde::{Deserialize, Serialize};

use crate::common::Extra;
use crate::ids::Revision;

/// Id of a [`Theme`]. Official themes have small reserved ids (see [`OFFICIAL_THEME_IDS`]).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct ThemeId(pub i64);

impl ThemeId {
    /// The raw integer.
    pub fn get(self) -> i64 {
        self.0
    }
}

impl std::fmt::Display for ThemeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Ids at or below this value belong to official (built-in, read-only) themes.
pub const OFFICIAL_THEME_IDS: i64 = 100;

/// A colour: `#RRGGBB` or `#AARRGGBB` (the same notation as `tavo.chat.update({background})`).
pub type Color = String;

/// Text styling.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TextStyle {
    /// Text colour, `#RRGGBB` or `#AARRGGBB`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$"))]
    pub color: Option<Color>,
    /// Font size in logical pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 6.0, max = 72.0))]
    pub font_size: Option<f64>,
    /// Bold text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bold: Option<bool>,
    /// Italic text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub italic: Option<bool>,
    /// Font family name (a system font or one bundled by the app).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub font_family: Option<String>,
    /// Line height as a multiple of the font size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.8, max = 3.0))]
    pub line_height: Option<f64>,
}

/// The font of one kind of bubble.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BubbleFont {
    /// Normal text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_style: Option<TextStyle>,
    /// Quoted speech ("…").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote_style: Option<TextStyle>,
    /// Emphasis (*…*), often used for actions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emphasis_style: Option<TextStyle>,
}

/// Which side a bubble sits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum BubbleSide {
    /// Left.
    Left,
    /// Right.
    Right,
}

/// The shape and fill of one kind of bubble.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BubbleStyle {
    /// Fill colour, `#RRGGBB` or `#AARRGGBB`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$"))]
    pub color: Option<Color>,
    /// Border colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$"))]
    pub border_color: Option<Color>,
    /// Border width in logical pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 10.0))]
    pub border_width: Option<f64>,
    /// Corner radius in logical pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 64.0))]
    pub border_radius: Option<f64>,
    /// Fill opacity, 0-1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub opacity: Option<f64>,
    /// Side of the chat the bubble sits on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<BubbleSide>,
}

/// The page background.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ThemeBackground {
    /// Solid colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$"))]
    pub color: Option<Color>,
    /// Image: an http(s) URL or a virtual path such as `files/global/bg.png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Image opacity, 0-1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub opacity: Option<f64>,
    /// Blur radius applied to the image, in logical pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 50.0))]
    pub blur: Option<f64>,
}

/// A small label (the thinking / inner-monologue label, the status label).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelStyle {
    /// Label background colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$"))]
    pub color: Option<Color>,
    /// Label text colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$"))]
    pub font_color: Option<Color>,
    /// Whether the label is shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visible: Option<bool>,
}

/// The message input area.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InputAreaStyle {
    /// Background colour of the input area.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$"))]
    pub color: Option<Color>,
    /// Text colour of the input area.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$"))]
    pub font_color: Option<Color>,
}

/// Avatar shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum AvatarShape {
    /// Round.
    Circle,
    /// Rounded square.
    Rounded,
    /// Square.
    Square,
}

/// How avatars are shown in the chat.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AvatarStyle {
    /// Show avatars next to bubbles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visible: Option<bool>,
    /// Avatar shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<AvatarShape>,
    /// Size in logical pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 16.0, max = 128.0))]
    pub size: Option<f64>,
}

/// The styling part of a theme: what create and update accept besides `name`.
///
/// Not `deny_unknown_fields` itself because it is flattened into [`Theme`] (serde hands a
/// flattened struct the keys its parent did not claim); every nested style type is strict.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThemeStyle {
    /// Page background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<ThemeBackground>,
    /// The user's bubbles (fill: `color`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_bubble: Option<BubbleStyle>,
    /// The characters' bubbles (fill: `color`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub character_bubble: Option<BubbleStyle>,
    /// Font of the user's bubbles (text colour: `textStyle.color`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_bubble_font: Option<BubbleFont>,
    /// Font of the characters' bubbles (text colour: `textStyle.color`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub character_bubble_font: Option<BubbleFont>,
    /// The thinking (inner monologue) label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_label: Option<LabelStyle>,
    /// The status label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_label: Option<LabelStyle>,
    /// The input area (background `color`, text `fontColor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_area: Option<InputAreaStyle>,
    /// Avatars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avatar: Option<AvatarStyle>,
    /// Extra CSS applied to the chat page (see the theme guide).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_css: Option<String>,
}

/// A stored chat theme.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Theme {
    /// Unique id; `None` until stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<ThemeId>,
    /// Optimistic-concurrency revision.
    #[serde(default)]
    pub revision: Revision,
    /// Display name (unique among themes; import asks before replacing a same-name theme).
    pub name: String,
    /// Official themes ship with the app and cannot be changed or deleted.
    #[serde(default)]
    pub official: bool,
    /// The styling.
    #[serde(flatten)]
    pub style: ThemeStyle,
    /// Unknown top-level fields of an imported theme file, kept.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Overlays `patch` onto `base` field by field (nested objects merge; a present field wins).
pub fn merge_style(base: &mut ThemeStyle, patch: ThemeStyle) {
    fn text(b: &mut Option<TextStyle>, p: Option<TextStyle>) {
        let Some(p) = p else { return };
        let b = b.get_or_insert_with(Default::default);
        b.color = p.color.or(b.color.take());
        b.font_size = p.font_size.or(b.font_size);
        b.bold = p.bold.or(b.bold);
        b.italic = p.italic.or(b.italic);
        b.font_family = p.font_family.or(b.font_family.take());
        b.line_height = p.line_height.or(b.line_height);
    }
    fn font(b: &mut Option<BubbleFont>, p: Option<BubbleFont>) {
        let Some(p) = p else { return };
        let b = b.get_or_insert_with(Default::default);
        text(&mut b.text_style, p.text_style);
        text(&mut b.quote_style, p.quote_style);
        text(&mut b.emphasis_style, p.emphasis_style);
    }
    fn bubble(b: &mut Option<BubbleStyle>, p: Option<BubbleStyle>) {
        let Some(p) = p else { return };
        let b = b.get_or_insert_with(Default::default);
        b.color = p.color.or(b.color.take());
        b.border_color = p.border_color.or(b.border_color.take());
        b.border_width = p.border_width.or(b.border_width);
        b.border_radius = p.border_radius.or(b.border_radius);
        b.opacity = p.opacity.or(b.opacity);
        b.side = p.side.or(b.side);
    }
    fn label(b: &mut Option<LabelStyle>, p: Option<LabelStyle>) {
        let Some(p) = p else { return };
        let b = b.get_or_insert_with(Default::default);
        b.color = p.color.or(b.color.take());
        b.font_color = p.font_color.or(b.font_color.take());
        b.visible = p.visible.or(b.visible);
    }
    if let Some(p) = patch.background {
        let b = base.background.get_or_insert_with(Default::default);
        b.color = p.color.or(b.color.take());
        b.image = p.image.or(b.image.take());
        b.opacity = p.opacity.or(b.opacity);
        b.blur = p.blur.or(b.blur);
    }
    bubble(&mut base.user_bubble, patch.user_bubble);
    bubble(&mut base.character_bubble, patch.character_bubble);
    font(&mut base.user_bubble_font, patch.user_bubble_font);
    font(&mut base.character_bubble_font, patch.character_bubble_font);
    label(&mut base.thinking_label, patch.thinking_label);
    label(&mut base.status_label, patch.status_label);
    if let Some(p) = patch.input_area {
        let b = base.input_area.get_or_insert_with(Default::default);
        b.color = p.color.or(b.color.take());
        b.font_color = p.font_color.or(b.font_color.take());
    }
    if let Some(p) = patch.avatar {
        let b = base.avatar.get_or_insert_with(Default::default);
        b.visible = p.visible.or(b.visible);
        b.shape = p.shape.or(b.shape);
        b.size = p.size.or(b.size);
    }
    if patch.custom_css.is_some() {
        base.custom_css = patch.custom_css;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn seed_field_names() {
        let t: Theme = serde_json::from_value(json!({
            "name": "Night",
            "userBubble": {"color": "#112233"},
            "userBubbleFont": {"textStyle": {"color": "#FFFFFF"}},
            "characterBubbleFont": {"textStyle": {"color": "#EEEEEE"}},
            "inputArea": {"color": "#000000", "fontColor": "#FFFFFF"},
            "thinkingLabel": {"fontColor": "#999999"},
            "fromElsewhere": 1
        }))
        .unwrap();
        assert_eq!(
            t.style
                .user_bubble
                .as_ref()
                .and_then(|b| b.color.as_deref()),
            Some("#112233")
        );
        assert_eq!(t.extra.get("fromElsewhere"), Some(&json!(1)));
        let back = serde_json::to_value(&t).unwrap();
        assert_eq!(
            back["characterBubbleFont"]["textStyle"]["color"],
            json!("#EEEEEE")
        );
        assert_eq!(back["inputArea"]["fontColor"], json!("#FFFFFF"));
    }

    #[test]
    fn nested_style_fields_reject_unknown_names() {
        let r: Result<Theme, _> =
            serde_json::from_value(json!({"name": "x", "userBubble": {"fill": "#fff"}}));
        assert!(r.is_err());
    }

    #[test]
    fn merge_keeps_untouched_fields() {
        let mut base = ThemeStyle {
            user_bubble: Some(BubbleStyle {
                color: Some("#111111".into()),
                border_radius: Some(8.0),
                ..Default::default()
            }),
            ..Default::default()
        };
        let patch = ThemeStyle {
            user_bubble: Some(BubbleStyle {
                color: Some("#222222".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        merge_style(&mut base, patch);
        let b = base.user_bubble.unwrap();
        assert_eq!(b.color.as_deref(), Some("#222222"));
        assert_eq!(b.border_radius, Some(8.0));
    }
}
