//! Validation errors that name the field path (`entries[3].scanDepth: must be 1..=1000`).

use std::fmt;

/// One problem found in a value, with the JSON path of the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FieldError {
    /// Path in the seed's (camelCase) names, e.g. `entries[3].scanDepth`.
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every problem found in one value; empty means valid.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(transparent)]
pub struct ValidationErrors(pub Vec<FieldError>);

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join("; "))
    }
}

impl ValidationErrors {
    /// Records a problem at `path`.
    pub fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError {
            path: path.into(),
            message: message.into(),
        });
    }

    /// `Ok(())` when nothing was recorded.
    pub fn into_result(self) -> Result<(), ValidationErrors> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }

    /// Checks that a required string is not blank.
    pub fn require_non_blank(&mut self, path: &str, value: &str) {
        if value.trim().is_empty() {
            self.push(path, "is required and must not be blank");
        }
    }

    /// Checks `lo <= value <= hi`.
    pub fn check_range(&mut self, path: &str, value: i64, lo: i64, hi: i64) {
        if value < lo || value > hi {
            self.push(path, format!("must be {lo}..={hi}, found {value}"));
        }
    }
}

/// Joins a parent path and a child field name (`""` + `name` → `name`).
pub fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_owned()
    } else {
        format!("{parent}.{child}")
    }
}

/// Path of the `i`-th element of the array at `parent`.
pub fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_display_path_and_message() {
        let mut e = ValidationErrors::default();
        e.check_range(&join(&index("entries", 3), "scanDepth"), 0, 1, 1000);
        assert_eq!(
            e.to_string(),
            "entries[3].scanDepth: must be 1..=1000, found 0"
        );
        assert!(e.into_result().is_err());
        assert!(ValidationErrors::default().into_result().is_ok());
    }
}
