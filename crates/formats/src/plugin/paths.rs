//! Package path rules (§6.3): every path a manifest names and every zip member is a
//! package-relative virtual path written with `/` on every OS.

/// Checks one package path; the error is the problem, worded for the user.
///
/// Refused: empty paths, absolute paths (`/x`, `C:/x`), backslashes, URLs (`http://`,
/// `https://`, any `scheme://`), and `..` segments — whether they would escape the root or not,
/// since Tavo refuses them outright. A leading `./` is not accepted either: the spec's paths are
/// plain (`entry.js`, `ui/panel.html`), and one spelling per file keeps lookups exact.
pub fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("the path is empty".into());
    }
    if path.contains('\\') {
        return Err(format!(
            "{path:?} contains a backslash; package paths use `/` on every OS"
        ));
    }
    if path.contains("://") || path.starts_with("data:") {
        return Err(format!(
            "{path:?} is a URL; package paths name files inside the package"
        ));
    }
    if path.starts_with('/') || has_drive_letter(path) {
        return Err(format!(
            "{path:?} is absolute; package paths are relative to the package root"
        ));
    }
    if path.split('/').any(|s| s == "..") {
        return Err(format!(
            "{path:?} contains `..`; paths may not leave the package root"
        ));
    }
    if path.split('/').any(|s| s == ".") {
        return Err(format!(
            "{path:?} contains a `.` segment; write the path without it"
        ));
    }
    if path.contains('\0') {
        return Err(format!("{path:?} contains a NUL character"));
    }
    Ok(())
}

fn has_drive_letter(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

#[cfg(test)]
mod tests {
    use super::check_path;

    #[test]
    fn plain_relative_paths_pass() {
        for p in [
            "entry.js",
            "ui/panel.html",
            "locales/zh-CN.json",
            "a/b/c.d.png",
        ] {
            assert_eq!(check_path(p), Ok(()), "{p}");
        }
    }

    #[test]
    fn unsafe_paths_are_refused() {
        for p in [
            "",
            "/etc/passwd",
            "C:/x.js",
            "ui\\entry.js",
            "https://x.org/a.js",
            "../evil.js",
            "ui/../../x",
            "./entry.js",
            "a/./b",
        ] {
            assert!(check_path(p).is_err(), "{p}");
        }
    }
}
