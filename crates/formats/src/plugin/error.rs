//! The one refusal type of plugin packages.

use std::fmt;

/// Why a package was refused: the package file (added by the door that knows it), the member
/// (`manifest.json`, `../evil.js`, `locales/en.json`), the manifest field when there is one
/// (`contributes.inputActions[0].label`) and the problem.
///
/// Display is `FILE: MEMBER: FIELD: problem`, parts omitted when empty, e.g.
/// `hello.tpg: manifest.json: version: "01.2" is not a valid SemVer version (major.minor.patch)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct PluginError {
    /// The package file name as the user gave it (may be empty).
    pub file: String,
    /// The package member concerned, empty for the whole archive.
    pub member: String,
    /// The manifest field path, empty when the problem is not about one field.
    pub field: String,
    /// What is wrong and, where possible, what to do.
    pub problem: String,
}

impl PluginError {
    /// A problem with the archive as a whole.
    pub fn whole(problem: impl Into<String>) -> Self {
        Self::member("", problem)
    }

    /// A problem with one member.
    pub fn member(member: &str, problem: impl Into<String>) -> Self {
        Self {
            file: String::new(),
            member: member.to_owned(),
            field: String::new(),
            problem: problem.into(),
        }
    }

    /// A problem with one manifest field.
    pub fn field(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self {
            file: String::new(),
            member: "manifest.json".to_owned(),
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// Sets the package file name.
    pub fn in_file(mut self, file: &str) -> Self {
        if self.file.is_empty() {
            self.file = file.to_owned();
        }
        self
    }
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for part in [&self.file, &self.member, &self.field] {
            if !part.is_empty() {
                write!(f, "{part}: ")?;
            }
        }
        f.write_str(&self.problem)
    }
}
