//! `tavo_ask_user` (seed 000, "向你提问"): the question, its options, and the answer shapes.
//!
//! The pause itself belongs to the engine: the operation returns
//! [`Outcome::NeedsUser`](crate::Outcome::NeedsUser) with a [`Question`], the engine shows it on
//! the reply's own chat (waiting never counts toward the tool time-out), and the answer comes
//! back through [`Question::resolve`]. The same [`Question`] type carries other decisions an
//! operation needs from the user (a theme import's overwrite-or-copy).

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};

/// One option as the model may give it: a plain string or an object.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OptionArg {
    /// A non-empty string: value and label at once.
    Plain(#[schemars(length(min = 1))] String),
    /// An option with a separate label.
    Full(OptionObject),
}

/// `{ value, label, description?, meta? }`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionObject {
    /// Returned as the answer when chosen. Non-empty; unique after trimming.
    #[schemars(length(min = 1))]
    pub value: String,
    /// Shown to the user. Non-empty.
    #[schemars(length(min = 1))]
    pub label: String,
    /// Optional longer explanation.
    #[serde(default)]
    pub description: Option<String>,
    /// Optional short supplementary note (a badge such as "recommended").
    #[serde(default)]
    pub meta: Option<String>,
}

/// Arguments of `tavo_ask_user`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AskUserArgs {
    /// The question, short and specific. Non-empty.
    #[schemars(length(min = 1))]
    pub question: String,
    /// Suggested answers: strings, or `{ value, label, description?, meta? }` objects.
    #[serde(default)]
    pub options: Option<Vec<OptionArg>>,
    /// Whether the user may type their own answer besides the options (default true). With
    /// `false` (strict mode) `options` is required.
    #[serde(default)]
    pub allow_other: Option<bool>,
    /// Pre-selected option value (in strict mode it must be one of the options).
    #[serde(default)]
    pub default_value: Option<String>,
    /// Hint shown in the empty custom-answer field.
    #[serde(default)]
    pub placeholder: Option<String>,
}

/// A normalised option.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionOption {
    /// The answer returned when chosen (trimmed).
    pub value: String,
    /// What the user sees.
    pub label: String,
    /// Longer explanation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Short supplementary note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<String>,
}

/// A question for the user, validated and normalised; what the engine renders.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Question {
    /// The question text.
    pub question: String,
    /// The options, in the model's order.
    pub options: Vec<QuestionOption>,
    /// Whether a custom typed answer is allowed.
    pub allow_other: bool,
    /// Pre-selected value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_value: Option<String>,
    /// Custom-field hint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
}

/// What the user did with a [`Question`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum UserAnswer {
    /// Picked the option with this value.
    Option {
        /// The option's value.
        value: String,
    },
    /// Typed and submitted their own text.
    Custom {
        /// The raw text (trimmed on resolve).
        text: String,
    },
    /// Closed the question.
    Cancelled,
}

fn invalid(path: &str, message: &str) -> ToolError {
    ToolError::new(
        ErrorCode::InvalidArguments,
        format!("invalid arguments for tavo_ask_user: {path}: {message}"),
    )
    .with_details(json!({"path": path, "expected": message, "actualType": "string"}))
}

impl Question {
    /// Validates the rules the schema cannot express and normalises the options.
    pub fn from_args(args: AskUserArgs) -> Result<Self, ToolError> {
        let question = args.question.trim().to_owned();
        if question.is_empty() {
            return Err(invalid("question", "a non-empty question"));
        }
        let mut options = Vec::new();
        let mut seen = HashSet::new();
        for (i, option) in args.options.unwrap_or_default().into_iter().enumerate() {
            let (value, label, description, meta) = match option {
                OptionArg::Plain(s) => (s.trim().to_owned(), s.trim().to_owned(), None, None),
                OptionArg::Full(o) => (
                    o.value.trim().to_owned(),
                    o.label.trim().to_owned(),
                    o.description,
                    o.meta,
                ),
            };
            if value.is_empty() {
                return Err(invalid(
                    &format!("options[{i}].value"),
                    "a non-empty option value",
                ));
            }
            if label.is_empty() {
                return Err(invalid(
                    &format!("options[{i}].label"),
                    "a non-empty option label",
                ));
            }
            if !seen.insert(value.clone()) {
                return Err(invalid(
                    &format!("options[{i}].value"),
                    "an option value not used by an earlier option",
                ));
            }
            options.push(QuestionOption {
                value,
                label,
                description,
                meta,
            });
        }
        let allow_other = args.allow_other.unwrap_or(true);
        if !allow_other && options.is_empty() {
            return Err(invalid(
                "options",
                "at least one option when allowOther is false",
            ));
        }
        let default_value = args.default_value.map(|d| d.trim().to_owned());
        if let Some(d) = &default_value
            && !allow_other
            && !options.iter().any(|o| &o.value == d)
        {
            return Err(invalid(
                "defaultValue",
                "the value of one of the options (allowOther is false)",
            ));
        }
        Ok(Self {
            question,
            options,
            allow_other,
            default_value,
            placeholder: args.placeholder,
        })
    }

    /// Turns the user's action into the tool result:
    /// `{"status":"answered","answer":…,"source":"option"|"custom"}` or `{"status":"cancelled"}`.
    /// An answer the question does not allow is refused (the engine asks again).
    pub fn resolve(&self, answer: UserAnswer) -> Result<Value, ToolError> {
        match answer {
            UserAnswer::Cancelled => Ok(json!({"status": "cancelled"})),
            UserAnswer::Option { value } => {
                let value = value.trim();
                if self.options.iter().any(|o| o.value == value) {
                    Ok(json!({"status": "answered", "answer": value, "source": "option"}))
                } else {
                    Err(ToolError::new(
                        ErrorCode::InvalidArguments,
                        format!("{value:?} is not one of the options"),
                    ))
                }
            }
            UserAnswer::Custom { text } => {
                let text = text.trim();
                if !self.allow_other {
                    Err(ToolError::new(
                        ErrorCode::InvalidArguments,
                        "this question only accepts one of its options",
                    ))
                } else if text.is_empty() {
                    Err(ToolError::new(
                        ErrorCode::InvalidArguments,
                        "a custom answer must not be empty",
                    ))
                } else {
                    Ok(json!({"status": "answered", "answer": text, "source": "custom"}))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> AskUserArgs {
        match serde_json::from_value(v) {
            Ok(a) => a,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn seed_example_is_accepted_and_answered() {
        let q = Question::from_args(args(json!({
            "question": "文件应该保存到哪个作用域？",
            "options": [{"value": "chat", "label": "当前聊天"}, {"value": "global", "label": "所有聊天"}],
            "allowOther": false,
            "defaultValue": "chat"
        })));
        let q = match q {
            Ok(q) => q,
            Err(e) => panic!("{e}"),
        };
        assert!(!q.allow_other);
        assert_eq!(
            q.resolve(UserAnswer::Option {
                value: "global".into()
            })
            .ok(),
            Some(json!({"status": "answered", "answer": "global", "source": "option"}))
        );
        assert!(
            q.resolve(UserAnswer::Custom {
                text: "elsewhere".into()
            })
            .is_err()
        );
        assert_eq!(
            q.resolve(UserAnswer::Cancelled).ok(),
            Some(json!({"status": "cancelled"}))
        );
    }

    #[test]
    fn custom_answers_are_trimmed_and_allowed_by_default() {
        let q = Question::from_args(args(json!({"question": "Name?", "options": ["A", "B"]})));
        let q = q.unwrap_or_else(|e| panic!("{e}"));
        assert!(q.allow_other);
        assert_eq!(
            q.resolve(UserAnswer::Custom {
                text: "  Zed \n".into()
            })
            .ok(),
            Some(json!({"status": "answered", "answer": "Zed", "source": "custom"}))
        );
        assert!(
            q.resolve(UserAnswer::Custom { text: "   ".into() })
                .is_err()
        );
    }

    #[test]
    fn strict_rules() {
        let no_options = Question::from_args(args(json!({"question": "Q", "allowOther": false})));
        assert_eq!(
            no_options.err().map(|e| e.code),
            Some(ErrorCode::InvalidArguments)
        );
        let bad_default = Question::from_args(args(
            json!({"question": "Q", "options": ["a"], "allowOther": false, "defaultValue": "b"}),
        ));
        let e = bad_default.err().and_then(|e| e.details);
        assert_eq!(e.map(|d| d["path"].clone()), Some(json!("defaultValue")));
        let dup = Question::from_args(args(json!({"question": "Q", "options": ["a", " a "]})));
        assert!(dup.is_err());
        let blank = Question::from_args(args(json!({"question": "  "})));
        assert!(blank.is_err());
    }
}
