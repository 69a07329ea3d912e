//! `contributes.settings.schema` (§6.6): a flat array of seven element types rendered in
//! order, and the checks a saved value must pass.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Map, Value};

use super::error::PluginError;
use super::i18n::{Catalogs, LocalText, kind};

/// The schema: elements in order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SettingsSchema {
    /// The elements, as declared.
    pub elements: Vec<SettingsElement>,
}

/// A select option: a plain string (the stored value is the literal label) or `{value, label}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectOption {
    /// What is stored.
    pub value: String,
    /// What is shown.
    pub label: LocalText,
}

/// One element of the settings page. Field names are the manifest's (§6.6): `key` is the
/// storage key, `label` the shown name, `default` the value until the user saves one.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SettingsElement {
    /// A boolean.
    Switch {
        key: String,
        label: LocalText,
        default: Option<bool>,
    },
    /// One of a non-empty list of options.
    Select {
        key: String,
        label: LocalText,
        options: Vec<SelectOption>,
        default: Option<String>,
    },
    /// A number in `min..=max` (`max > min`), moved by `step > 0`.
    Slider {
        key: String,
        label: LocalText,
        min: f64,
        max: f64,
        step: Option<f64>,
        default: Option<f64>,
    },
    /// One line of text.
    Text {
        key: String,
        label: LocalText,
        default: Option<LocalText>,
    },
    /// Several lines of text.
    Textarea {
        key: String,
        label: LocalText,
        default: Option<LocalText>,
    },
    /// A note; `icon` is `info` or `warning`.
    Info {
        text: LocalText,
        icon: Option<String>,
    },
    /// A full-width rule.
    Divider,
    /// Starts a new settings group (invisible).
    Break,
}

impl SettingsElement {
    /// The storage key of a field (`None` for info, divider and break).
    pub fn key(&self) -> Option<&str> {
        match self {
            SettingsElement::Switch { key, .. }
            | SettingsElement::Select { key, .. }
            | SettingsElement::Slider { key, .. }
            | SettingsElement::Text { key, .. }
            | SettingsElement::Textarea { key, .. } => Some(key),
            _ => None,
        }
    }

    /// The default value, resolved for `locale` (text defaults may be localised).
    pub fn default_value(&self, catalogs: &Catalogs, locale: &str) -> Value {
        match self {
            SettingsElement::Switch { default, .. } => {
                default.map(Value::Bool).unwrap_or(Value::Null)
            }
            SettingsElement::Select { default, .. } => {
                default.clone().map(Value::String).unwrap_or(Value::Null)
            }
            SettingsElement::Slider { default, .. } => default
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            SettingsElement::Text { default, .. } | SettingsElement::Textarea { default, .. } => {
                default
                    .as_ref()
                    .map(|t| Value::String(catalogs.text(t, locale)))
                    .unwrap_or(Value::Null)
            }
            _ => Value::Null,
        }
    }

    /// Checks a value the user saves for this field; the error is the problem.
    pub fn check_value(&self, v: &Value) -> Result<(), String> {
        match self {
            SettingsElement::Switch { .. } => v
                .is_boolean()
                .then_some(())
                .ok_or_else(|| format!("expected true or false, found {}", kind(v))),
            SettingsElement::Select { options, .. } => {
                let s = v.as_str().ok_or_else(|| {
                    format!("expected one of the option values, found {}", kind(v))
                })?;
                if options.iter().any(|o| o.value == s) {
                    Ok(())
                } else {
                    let all: Vec<&str> = options.iter().map(|o| o.value.as_str()).collect();
                    Err(format!(
                        "{s:?} is not one of the options ({})",
                        all.join(", ")
                    ))
                }
            }
            SettingsElement::Slider { min, max, .. } => {
                let n = v
                    .as_f64()
                    .ok_or_else(|| format!("expected a number, found {}", kind(v)))?;
                if n < *min || n > *max {
                    Err(format!("{n} is outside {min}..{max}"))
                } else {
                    Ok(())
                }
            }
            SettingsElement::Text { .. } | SettingsElement::Textarea { .. } => v
                .is_string()
                .then_some(())
                .ok_or_else(|| format!("expected a string, found {}", kind(v))),
            _ => Err("this element stores no value".into()),
        }
    }

    /// The element with its texts resolved for `locale`, as the settings page renders it.
    pub fn resolved(&self, catalogs: &Catalogs, locale: &str) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        let Some(obj) = v.as_object_mut() else {
            return v;
        };
        for field in ["label", "text"] {
            if let Some(t) = self.text_of(field) {
                obj.insert(field.into(), Value::String(catalogs.text(t, locale)));
            }
        }
        if let SettingsElement::Select { options, .. } = self {
            let opts = options
                .iter()
                .map(|o| serde_json::json!({"value": o.value, "label": catalogs.text(&o.label, locale)}))
                .collect();
            obj.insert("options".into(), Value::Array(opts));
        }
        if matches!(
            self,
            SettingsElement::Text { .. } | SettingsElement::Textarea { .. }
        ) {
            obj.insert("default".into(), self.default_value(catalogs, locale));
        }
        v
    }

    fn text_of(&self, field: &str) -> Option<&LocalText> {
        match (self, field) {
            (SettingsElement::Info { text, .. }, "text") => Some(text),
            (
                SettingsElement::Switch { label, .. }
                | SettingsElement::Select { label, .. }
                | SettingsElement::Slider { label, .. }
                | SettingsElement::Text { label, .. }
                | SettingsElement::Textarea { label, .. },
                "label",
            ) => Some(label),
            _ => None,
        }
    }

    /// Every `{"$t"}` key the element uses.
    pub fn keys(&self) -> Vec<&str> {
        let mut out: Vec<&str> = ["label", "text"]
            .iter()
            .filter_map(|f| self.text_of(f)?.key())
            .collect();
        if let SettingsElement::Select { options, .. } = self {
            out.extend(options.iter().filter_map(|o| o.label.key()));
        }
        if let SettingsElement::Text {
            default: Some(d), ..
        }
        | SettingsElement::Textarea {
            default: Some(d), ..
        } = self
        {
            out.extend(d.key());
        }
        out
    }
}

/// Reads `contributes.settings` (`{"schema": [...]}`).
pub(super) fn read(v: &Value, spec: u32) -> Result<SettingsSchema, PluginError> {
    let base = "contributes.settings";
    let obj = v.as_object().ok_or_else(|| {
        PluginError::field(
            base,
            format!("expected {{\"schema\": [...]}}, found {}", kind(v)),
        )
    })?;
    if let Some(k) = obj.keys().find(|k| *k != "schema") {
        return Err(PluginError::field(
            format!("{base}.{k}"),
            "is not a settings field (only \"schema\")",
        ));
    }
    let Some(schema) = obj.get("schema") else {
        return Ok(SettingsSchema::default());
    };
    let arr = schema.as_array().ok_or_else(|| {
        PluginError::field(
            format!("{base}.schema"),
            format!("expected an array, found {}", kind(schema)),
        )
    })?;
    let mut keys = BTreeSet::new();
    let mut elements = Vec::with_capacity(arr.len());
    for (i, el) in arr.iter().enumerate() {
        let field = format!("{base}.schema[{i}]");
        let el = element(el, &field, spec)?;
        if let Some(k) = el.key()
            && !keys.insert(k.to_owned())
        {
            return Err(PluginError::field(
                format!("{field}.key"),
                format!("{k:?} is used by an earlier field"),
            ));
        }
        elements.push(el);
    }
    Ok(SettingsSchema { elements })
}

fn element(v: &Value, field: &str, spec: u32) -> Result<SettingsElement, PluginError> {
    let o = v.as_object().ok_or_else(|| {
        PluginError::field(field, format!("expected an object, found {}", kind(v)))
    })?;
    let ty = o.get("type").and_then(Value::as_str).ok_or_else(|| {
        PluginError::field(
            format!("{field}.type"),
            "is required (switch, select, slider, text, textarea, info, divider, break)",
        )
    })?;
    let r = Element { o, field, spec };
    Ok(match ty {
        "switch" => SettingsElement::Switch {
            key: r.key()?,
            label: r.label()?,
            default: match o.get("default") {
                None => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(v) => {
                    return Err(PluginError::field(
                        r.path("default"),
                        format!("expected true or false, found {}", kind(v)),
                    ));
                }
            },
        },
        "select" => select(&r)?,
        "slider" => slider(&r)?,
        "text" => SettingsElement::Text {
            key: r.key()?,
            label: r.label()?,
            default: r.text_default()?,
        },
        "textarea" => SettingsElement::Textarea {
            key: r.key()?,
            label: r.label()?,
            default: r.text_default()?,
        },
        "info" => info(&r)?,
        "divider" => SettingsElement::Divider,
        "break" => SettingsElement::Break,
        other => {
            return Err(PluginError::field(
                r.path("type"),
                format!(
                    "{other:?} is not a settings element (switch, select, slider, text, textarea, info, divider, break)"
                ),
            ));
        }
    })
}

/// One settings element's object as it is read: its fields, with errors that name their path.
struct Element<'a> {
    o: &'a Map<String, Value>,
    field: &'a str,
    spec: u32,
}

impl Element<'_> {
    fn path(&self, name: &str) -> String {
        format!("{}.{name}", self.field)
    }

    /// `key`: the storage key, required and not blank.
    fn key(&self) -> Result<String, PluginError> {
        match self.o.get("key").and_then(Value::as_str) {
            Some(k) if !k.trim().is_empty() => Ok(k.to_owned()),
            _ => Err(PluginError::field(
                self.path("key"),
                "is required: a non-empty string (the storage key)",
            )),
        }
    }

    fn label(&self) -> Result<LocalText, PluginError> {
        let v = self
            .o
            .get("label")
            .ok_or_else(|| PluginError::field(self.path("label"), "is required"))?;
        LocalText::read(v, &self.path("label"), self.spec)
    }

    fn num(&self, name: &str) -> Result<Option<f64>, PluginError> {
        match self.o.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or_else(|| {
                PluginError::field(
                    self.path(name),
                    format!("expected a number, found {}", kind(v)),
                )
            }),
        }
    }

    fn text_default(&self) -> Result<Option<LocalText>, PluginError> {
        self.o
            .get("default")
            .map(|d| LocalText::read(d, &self.path("default"), self.spec))
            .transpose()
    }
}

/// A `select`: a non-empty `options` list (strings or `{value, label}`), a `default` among
/// their values.
fn select(r: &Element<'_>) -> Result<SettingsElement, PluginError> {
    let opts = r
        .o
        .get("options")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| PluginError::field(r.path("options"), "is required: a non-empty array"))?;
    let mut options = Vec::with_capacity(opts.len());
    for (j, opt) in opts.iter().enumerate() {
        let of = format!("{}.options[{j}]", r.field);
        options.push(match opt {
            Value::String(s) => SelectOption {
                value: s.clone(),
                label: LocalText::Literal(s.clone()),
            },
            Value::Object(m) => {
                let value = m.get("value").and_then(Value::as_str).ok_or_else(|| {
                    PluginError::field(format!("{of}.value"), "is required: a string")
                })?;
                let label = m
                    .get("label")
                    .ok_or_else(|| PluginError::field(format!("{of}.label"), "is required"))?;
                SelectOption {
                    value: value.to_owned(),
                    label: LocalText::read(label, &format!("{of}.label"), r.spec)?,
                }
            }
            other => {
                return Err(PluginError::field(
                    of,
                    format!(
                        "expected a string or {{value, label}}, found {}",
                        kind(other)
                    ),
                ));
            }
        });
    }
    let default = match r.o.get("default") {
        None => None,
        Some(Value::String(s)) if options.iter().any(|x| &x.value == s) => Some(s.clone()),
        Some(v) => {
            return Err(PluginError::field(
                r.path("default"),
                format!("{v} is not one of the option values"),
            ));
        }
    };
    Ok(SettingsElement::Select {
        key: r.key()?,
        label: r.label()?,
        options,
        default,
    })
}

/// A `slider`: `min` < `max`, a positive `step`, a `default` within the range.
fn slider(r: &Element<'_>) -> Result<SettingsElement, PluginError> {
    let min = r
        .num("min")?
        .ok_or_else(|| PluginError::field(r.path("min"), "is required"))?;
    let max = r
        .num("max")?
        .ok_or_else(|| PluginError::field(r.path("max"), "is required"))?;
    if max <= min {
        return Err(PluginError::field(
            r.path("max"),
            format!("must be greater than min ({min})"),
        ));
    }
    let step = r.num("step")?;
    if step.is_some_and(|s| s <= 0.0) {
        return Err(PluginError::field(r.path("step"), "must be greater than 0"));
    }
    let default = r.num("default")?;
    if default.is_some_and(|d| d < min || d > max) {
        return Err(PluginError::field(
            r.path("default"),
            format!("must be within {min}..{max}"),
        ));
    }
    Ok(SettingsElement::Slider {
        key: r.key()?,
        label: r.label()?,
        min,
        max,
        step,
        default,
    })
}

/// An `info` line: its `text`, and an `icon` of `info` or `warning`.
fn info(r: &Element<'_>) -> Result<SettingsElement, PluginError> {
    let text =
        r.o.get("text")
            .ok_or_else(|| PluginError::field(r.path("text"), "is required"))?;
    let icon = match r.o.get("icon") {
        None => None,
        Some(Value::String(s)) if s == "info" || s == "warning" => Some(s.clone()),
        Some(v) => {
            return Err(PluginError::field(
                r.path("icon"),
                format!("{v} is not \"info\" or \"warning\""),
            ));
        }
    };
    Ok(SettingsElement::Info {
        text: LocalText::read(text, &r.path("text"), r.spec)?,
        icon,
    })
}

/// The effective configuration: a saved value, else the schema default, else `null`, for every
/// field of the schema (saved values of keys the schema no longer has are ignored).
pub fn effective(
    schema: &SettingsSchema,
    saved: &Map<String, Value>,
    catalogs: &Catalogs,
    locale: &str,
) -> Map<String, Value> {
    schema
        .elements
        .iter()
        .filter_map(|el| {
            let k = el.key()?;
            Some((
                k.to_owned(),
                saved
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| el.default_value(catalogs, locale)),
            ))
        })
        .collect()
}
