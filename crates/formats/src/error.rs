//! Errors and warnings of the readers and writers.

use serde::Serialize;
use std::fmt;

/// A refusal: the file, the JSON path inside it, and what is wrong.
///
/// Display is `FILE: PATH: MESSAGE` (file and path omitted when unknown), e.g.
/// `card.json: data.character_book.entries[0].keys: expected an array of strings, found a number`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct FormatError {
    /// File name as the caller passed it (may be empty).
    pub file: String,
    /// JSON path (`data.character_book.entries[3].keys`), PNG chunk or zip member; empty when the
    /// problem concerns the whole file.
    pub path: String,
    /// What is wrong and, where possible, what to do.
    pub message: String,
}

impl FormatError {
    /// An error at `path` (no file name yet; the public entry points add it).
    pub fn at(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            file: String::new(),
            path: path.into(),
            message: message.into(),
        }
    }

    /// An error about the whole input.
    pub fn whole(message: impl Into<String>) -> Self {
        Self::at("", message)
    }

    /// Sets the file name when none is set yet.
    pub fn in_file(mut self, file: &str) -> Self {
        if self.file.is_empty() {
            self.file = file.to_owned();
        }
        self
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.file.is_empty() {
            write!(f, "{}: ", self.file)?;
        }
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}

/// Something tolerated while reading (a BOM, a number written as a string, a repaired encoding).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// Stable machine code, e.g. `encoding.cp1252`, `json.control-chars`, `value.coerced`.
    pub code: String,
    /// JSON path concerned, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Human explanation saying what was done.
    pub message: String,
}

impl Warning {
    /// A warning without a path.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            path: None,
            message: message.into(),
        }
    }

    /// A warning about `path`.
    pub fn at(code: &str, path: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            path: (!path.is_empty()).then(|| path.to_owned()),
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) => write!(f, "[{}] {}: {}", self.code, p, self.message),
            None => write!(f, "[{}] {}", self.code, self.message),
        }
    }
}

/// Result type of this crate.
pub type Result<T, E = FormatError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_path_and_problem() {
        let e = FormatError::at(
            "data.character_book.entries[0].keys",
            "expected an array of strings, found a number",
        )
        .in_file("card.json");
        assert_eq!(
            e.to_string(),
            "card.json: data.character_book.entries[0].keys: expected an array of strings, found a number"
        );
        assert_eq!(FormatError::whole("empty").to_string(), "empty");
    }
}
