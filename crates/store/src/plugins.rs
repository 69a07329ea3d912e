//! Installed plugins (Tavo `.tpg`, `shared/reference/tavo-docs.md` §6): one row per plugin with
//! its raw manifest, enabled state and saved settings, and its package files beside it.
//!
//! The store keeps what was validated; it does not validate. `formats::plugin` reads and checks
//! a package, `tools::plugins` decides what an install, a reinstall or a config change means.
//! Files live in the database, not in `files/`: a package is small (the reader caps it), is
//! replaced as a whole on reinstall, and must round-trip through backups with its row.

use std::collections::BTreeMap;

use crate::sql::{Row, params};
use serde_json::{Map, Value};

use crate::error::{Result, StoreError};
use crate::store::{Tx, now};

/// An installed plugin, without its files.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginRow {
    /// The manifest id (lower case).
    pub id: String,
    /// The manifest version.
    pub version: String,
    /// 1 or 2.
    pub spec_version: u32,
    /// `manifest.json` as installed.
    pub manifest: Value,
    /// Whether the plugin runs.
    pub enabled: bool,
    /// The user's saved settings values, by schema key (defaults are not stored).
    pub config: Map<String, Value>,
    /// First install (RFC 3339).
    pub installed_at: String,
    /// Last install or change (RFC 3339).
    pub updated_at: String,
}

/// What [`Tx::plugin_put`] stores.
#[derive(Debug, Clone)]
pub struct NewPlugin<'a> {
    /// The manifest id.
    pub id: &'a str,
    /// The manifest version.
    pub version: &'a str,
    /// 1 or 2.
    pub spec_version: u32,
    /// The raw manifest.
    pub manifest: &'a Value,
    /// The package files by path.
    pub files: &'a BTreeMap<String, Vec<u8>>,
}

const COLUMNS: &str =
    "id, version, spec_version, manifest, enabled, config, installed_at, updated_at";

fn row(r: &Row<'_>) -> Result<PluginRow> {
    let manifest: String = r.get(3)?;
    let config: String = r.get(5)?;
    Ok(PluginRow {
        id: r.get(0)?,
        version: r.get(1)?,
        spec_version: r.get(2)?,
        manifest: serde_json::from_str(&manifest).unwrap_or(Value::Null),
        enabled: r.get(4)?,
        config: serde_json::from_str(&config).unwrap_or_default(),
        installed_at: r.get(6)?,
        updated_at: r.get(7)?,
    })
}

fn not_found(id: &str) -> StoreError {
    StoreError::NotFound {
        kind: "plugin",
        id: id.to_owned(),
    }
}

impl Tx<'_> {
    /// Installs a plugin, or replaces an installed one's manifest and files; a reinstall keeps
    /// the enabled state and the saved settings (a `key` the new schema dropped is simply no
    /// longer read). Returns the row and whether it replaced one.
    pub fn plugin_put(&self, new: &NewPlugin<'_>) -> Result<(PluginRow, bool)> {
        let at = now();
        let replaced = self.plugin_get(new.id)?.is_some();
        self.execute(
            "INSERT INTO plugins (id, version, spec_version, manifest, enabled, config, installed_at, updated_at) \
             VALUES (?1, ?2, ?3, ?4, 1, '{}', ?5, ?5) \
             ON CONFLICT(id) DO UPDATE SET version = excluded.version, \
             spec_version = excluded.spec_version, manifest = excluded.manifest, updated_at = excluded.updated_at",
            params![new.id, new.version, new.spec_version, new.manifest.to_string(), at])?;
        self.execute(
            "DELETE FROM plugin_files WHERE plugin_id = ?1",
            params![new.id],
        )?;
        for (path, data) in new.files {
            self.execute(
                "INSERT INTO plugin_files (plugin_id, path, data) VALUES (?1, ?2, ?3)",
                params![new.id, path, data],
            )?;
        }
        let row = self.plugin_get(new.id)?.ok_or_else(|| not_found(new.id))?;
        Ok((row, replaced))
    }

    /// Every installed plugin, by id.
    pub fn plugin_list(&self) -> Result<Vec<PluginRow>> {
        self.query_map(
            &format!("SELECT {COLUMNS} FROM plugins ORDER BY id"),
            params![],
            row,
        )
    }

    /// One plugin.
    pub fn plugin_get(&self, id: &str) -> Result<Option<PluginRow>> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM plugins WHERE id = ?1"),
            params![id],
            row,
        )
    }

    /// One package file.
    pub fn plugin_file(&self, id: &str, path: &str) -> Result<Option<Vec<u8>>> {
        self.query_opt(
            "SELECT data FROM plugin_files WHERE plugin_id = ?1 AND path = ?2",
            params![id, path],
            |r| r.get(0),
        )
    }

    /// The package file paths, sorted.
    pub fn plugin_file_paths(&self, id: &str) -> Result<Vec<String>> {
        self.query_map(
            "SELECT path FROM plugin_files WHERE plugin_id = ?1 ORDER BY path",
            params![id],
            |r| r.get(0),
        )
    }

    /// Every package file (to repackage or re-validate a plugin).
    pub fn plugin_files(&self, id: &str) -> Result<BTreeMap<String, Vec<u8>>> {
        Ok(self
            .query_map(
                "SELECT path, data FROM plugin_files WHERE plugin_id = ?1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
            .into_iter()
            .collect())
    }

    /// Enables or disables a plugin.
    pub fn plugin_set_enabled(&self, id: &str, enabled: bool) -> Result<PluginRow> {
        let n = self.execute(
            "UPDATE plugins SET enabled = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, enabled, now()],
        )?;
        if n == 0 {
            return Err(not_found(id));
        }
        self.plugin_get(id)?.ok_or_else(|| not_found(id))
    }

    /// Replaces the saved settings values.
    pub fn plugin_set_config(&self, id: &str, config: &Map<String, Value>) -> Result<PluginRow> {
        let n = self.execute(
            "UPDATE plugins SET config = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, Value::Object(config.clone()).to_string(), now()],
        )?;
        if n == 0 {
            return Err(not_found(id));
        }
        self.plugin_get(id)?.ok_or_else(|| not_found(id))
    }

    /// Uninstalls a plugin (its files go with it). Returns whether it was installed.
    pub fn plugin_delete(&self, id: &str) -> Result<bool> {
        Ok(self.execute("DELETE FROM plugins WHERE id = ?1", params![id])? > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;

    #[test]
    fn reinstall_replaces_files_and_keeps_state() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let manifest = serde_json::json!({"id": "a.b"});
        let files = BTreeMap::from([
            ("manifest.json".to_owned(), b"{}".to_vec()),
            ("old.js".to_owned(), b"1".to_vec()),
        ]);
        let new = NewPlugin {
            id: "a.b",
            version: "1.0.0",
            spec_version: 2,
            manifest: &manifest,
            files: &files,
        };
        let (row, replaced) = store.write(|tx| tx.plugin_put(&new)).unwrap();
        assert!(row.enabled && !replaced);
        store
            .write(|tx| tx.plugin_set_enabled("a.b", false))
            .unwrap();
        let cfg = Map::from_iter([("k".to_owned(), serde_json::json!(3))]);
        store.write(|tx| tx.plugin_set_config("a.b", &cfg)).unwrap();
        let files2 = BTreeMap::from([("manifest.json".to_owned(), b"{}".to_vec())]);
        let new2 = NewPlugin {
            version: "1.1.0",
            files: &files2,
            ..new
        };
        let (row, replaced) = store.write(|tx| tx.plugin_put(&new2)).unwrap();
        assert!(replaced && !row.enabled);
        assert_eq!(
            (row.version.as_str(), row.config.get("k")),
            ("1.1.0", Some(&serde_json::json!(3)))
        );
        assert_eq!(
            store.read(|tx| tx.plugin_file_paths("a.b")).unwrap(),
            ["manifest.json"]
        );
        assert!(store.write(|tx| tx.plugin_delete("a.b")).unwrap());
        assert!(
            store
                .read(|tx| tx.plugin_file("a.b", "manifest.json"))
                .unwrap()
                .is_none()
        );
        assert!(matches!(
            store.write(|tx| tx.plugin_set_enabled("a.b", true)),
            Err(StoreError::NotFound { .. })
        ));
    }
}
