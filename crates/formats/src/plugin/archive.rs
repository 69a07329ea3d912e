//! The zip side of a package: limits checked before memory is spent, zip-slip refused, and the
//! root chosen (Tavo §6.3): a `manifest.json` at the top wins, else exactly one nested one makes
//! its folder the root, several are ambiguous; files outside the root are not installed.

use std::collections::BTreeMap;
use std::io::{Cursor, Read, Write};

use super::error::PluginError;
use super::paths::check_path;
use crate::error::Warning;

/// Largest package file accepted (the zip itself).
pub const MAX_PACKAGE_BYTES: usize = 64 * 1024 * 1024;
/// Most zip members read.
pub const MAX_ENTRIES: usize = 2_000;
/// Largest single file, inflated.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Largest sum of the installed files, inflated.
pub const MAX_TOTAL_BYTES: u64 = 64 * 1024 * 1024;

/// Unzips a package: every member name is checked (one unsafe name refuses the whole package,
/// wherever it sits), the root is chosen, and the files under it are returned by their path
/// relative to that root.
pub(super) fn read(
    bytes: &[u8],
    warnings: &mut Vec<Warning>,
) -> Result<BTreeMap<String, Vec<u8>>, PluginError> {
    if bytes.len() > MAX_PACKAGE_BYTES {
        return Err(PluginError::whole(format!(
            "the package is {} bytes, more than the {MAX_PACKAGE_BYTES}-byte limit",
            bytes.len()
        )));
    }
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
        PluginError::whole(format!(
            "not a readable zip file (.tpg packages are zip archives): {e}"
        ))
    })?;
    if zip.len() > MAX_ENTRIES {
        return Err(PluginError::whole(format!(
            "the package has {} members, more than the {MAX_ENTRIES} allowed",
            zip.len()
        )));
    }
    let mut names = Vec::with_capacity(zip.len());
    for i in 0..zip.len() {
        let file = zip
            .by_index_raw(i)
            .map_err(|e| PluginError::whole(format!("cannot read zip member {i}: {e}")))?;
        let name = file
            .name()
            .map_err(|e| PluginError::whole(format!("zip member {i} has an unreadable name: {e}")))?
            .into_owned();
        if file.is_dir() || name.ends_with('/') {
            continue;
        }
        check_path(&name)
            .map_err(|p| PluginError::member(&name, format!("unsafe zip member: {p}")))?;
        if file.size() > MAX_FILE_BYTES {
            return Err(PluginError::member(
                &name,
                format!(
                    "declares {} bytes, more than the {MAX_FILE_BYTES}-byte limit per file",
                    file.size()
                ),
            ));
        }
        names.push((i, name));
    }
    let root = choose_root(names.iter().map(|(_, n)| n.as_str()))?;
    let mut files = BTreeMap::new();
    let mut total = 0u64;
    let mut outside = 0usize;
    for (i, name) in names {
        let Some(rel) = name.strip_prefix(root.as_str()) else {
            outside += 1;
            continue;
        };
        let file = zip
            .by_index(i)
            .map_err(|e| PluginError::member(&name, format!("cannot read zip member: {e}")))?;
        let mut data = Vec::new();
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut data)
            .map_err(|e| PluginError::member(&name, format!("cannot inflate: {e}")))?;
        if data.len() as u64 > MAX_FILE_BYTES {
            return Err(PluginError::member(
                &name,
                format!(
                    "inflates to more than the {MAX_FILE_BYTES}-byte limit per file (zip bomb?)"
                ),
            ));
        }
        total += data.len() as u64;
        if total > MAX_TOTAL_BYTES {
            return Err(PluginError::whole(format!(
                "the files inflate to more than the {MAX_TOTAL_BYTES}-byte limit (zip bomb?)"
            )));
        }
        files.insert(rel.to_owned(), data);
    }
    if outside > 0 {
        warnings.push(Warning::new(
            "plugin.outside-root",
            format!("{outside} file(s) outside the plugin root {root:?} were not installed"),
        ));
    }
    Ok(files)
}

/// A root `manifest.json` wins; else exactly one nested `manifest.json` makes its folder the
/// root; several nested candidates are ambiguous. Returns the root as a prefix (`""` or
/// `"folder/"`).
fn choose_root<'a>(names: impl Iterator<Item = &'a str>) -> Result<String, PluginError> {
    let mut nested = Vec::new();
    for name in names {
        if name == "manifest.json" {
            return Ok(String::new());
        }
        if let Some(dir) = name.strip_suffix("/manifest.json") {
            // macOS archivers add `__MACOSX/` shadow trees; they are never plugin roots.
            if !dir.starts_with("__MACOSX") {
                nested.push(format!("{dir}/"));
            }
        }
    }
    match nested.len() {
        0 => Err(PluginError::member(
            "manifest.json",
            "is missing: a plugin package needs manifest.json at its root (or in exactly one folder)",
        )),
        1 => Ok(nested.remove(0)),
        _ => Err(PluginError::member(
            "manifest.json",
            format!(
                "is ambiguous: the package has {} nested manifest.json files ({}); keep one",
                nested.len(),
                nested.join(", ")
            ),
        )),
    }
}

/// Zips `files` (deflate) in path order.
pub(super) fn write(files: &BTreeMap<String, Vec<u8>>) -> Result<Vec<u8>, PluginError> {
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    for (path, data) in files {
        check_path(path).map_err(|p| PluginError::member(path, p))?;
        out.start_file(path.as_str(), options)
            .and_then(|()| out.write_all(data).map_err(Into::into))
            .map_err(|e| PluginError::member(path, format!("cannot write zip member: {e}")))?;
    }
    out.finish()
        .map(Cursor::into_inner)
        .map_err(|e| PluginError::whole(format!("cannot finish zip: {e}")))
}

#[cfg(test)]
mod tests {
    use super::choose_root;
    use super::*;

    #[test]
    fn root_manifest_wins_over_nested() {
        let r = choose_root(["a/manifest.json", "manifest.json"].into_iter());
        assert_eq!(r, Ok(String::new()));
    }

    #[test]
    fn one_nested_manifest_becomes_the_root() {
        let r =
            choose_root(["p/manifest.json", "p/entry.js", "__MACOSX/p/manifest.json"].into_iter());
        assert_eq!(r, Ok("p/".to_owned()));
    }

    #[test]
    fn several_nested_manifests_are_ambiguous() {
        let r = choose_root(["a/manifest.json", "b/manifest.json"].into_iter());
        assert!(r.unwrap_err().problem.contains("ambiguous"));
    }

    #[test]
    fn files_outside_the_nested_root_are_dropped() {
        let mut files = BTreeMap::new();
        files.insert("p/manifest.json".to_owned(), b"{}".to_vec());
        files.insert("p/entry.js".to_owned(), b"".to_vec());
        files.insert("README.md".to_owned(), b"x".to_vec());
        let zip = write(&files).unwrap();
        let mut w = Vec::new();
        let got = read(&zip, &mut w).unwrap();
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            ["entry.js", "manifest.json"]
        );
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn a_zip_bomb_stops_at_the_file_limit() {
        // 17 MiB of zeros deflates to a few KiB; the declared size is honest here, so the
        // declared-size guard refuses it before inflating.
        let mut files = BTreeMap::new();
        files.insert("manifest.json".to_owned(), b"{}".to_vec());
        files.insert("big.bin".to_owned(), vec![0u8; 17 * 1024 * 1024]);
        let zip = write(&files).unwrap();
        assert!(zip.len() < 200_000);
        let err = read(&zip, &mut Vec::new()).unwrap_err();
        assert_eq!(err.member, "big.bin");
    }
}
