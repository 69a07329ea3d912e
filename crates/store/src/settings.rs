//! Application settings: a key-value table of JSON values.
//!
//! Keys are free-form strings chosen by the owning room (`llm.providers`, `web.search`, …);
//! values keep their JSON types. Secrets stored here (API keys) must never be logged by callers.

use crate::sql::params;
use serde_json::Value;

use crate::error::{Result, StoreError};
use crate::store::{Tx, now};

impl Tx<'_> {
    /// The value stored under `key`, or `None`.
    pub fn setting_get(&self, key: &str) -> Result<Option<Value>> {
        let text: Option<String> = self.query_opt(
            "SELECT value FROM settings WHERE key = ?1",
            params![key],
            |r| r.get(0),
        )?;
        text.map(|t| parse_setting(key, &t)).transpose()
    }

    /// Stores `value` under `key`, replacing any previous value.
    pub fn setting_set(&self, key: &str, value: &Value) -> Result<()> {
        if key.is_empty() {
            return Err(StoreError::InvalidArgument(
                "setting key must not be empty".into(),
            ));
        }
        self.execute(
            "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            params![key, value.to_string(), now()])?;
        Ok(())
    }

    /// Removes `key`; returns whether it existed.
    pub fn setting_delete(&self, key: &str) -> Result<bool> {
        Ok(self.execute("DELETE FROM settings WHERE key = ?1", params![key])? > 0)
    }

    /// Every setting whose key starts with `prefix` (all of them for `""`), sorted by key.
    pub fn setting_list(&self, prefix: &str) -> Result<Vec<(String, Value)>> {
        let rows = self.query_map(
            "SELECT key, value FROM settings WHERE substr(key, 1, length(?1)) = ?1 ORDER BY key",
            params![prefix],
            |r| Ok((r.get::<String>(0)?, r.get::<String>(1)?)),
        )?;
        let mut out = Vec::new();
        for (key, text) in rows {
            let value = parse_setting(&key, &text)?;
            out.push((key, value));
        }
        Ok(out)
    }
}

fn parse_setting(key: &str, text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| StoreError::json(format!("setting {key:?}"), e))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::Store;

    #[test]
    fn settings_keep_json_types_and_can_be_replaced_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.setting_get("llm.default").unwrap(), None);
        store
            .setting_set("llm.default", &json!({"model": "x", "n": 3}))
            .unwrap();
        store.setting_set("llm.timeout", &json!(30)).unwrap();
        store.setting_set("web.search", &json!("tavily")).unwrap();
        assert_eq!(
            store.setting_get("llm.default").unwrap(),
            Some(json!({"model": "x", "n": 3}))
        );
        store.setting_set("llm.timeout", &json!(60.5)).unwrap();
        assert_eq!(store.setting_get("llm.timeout").unwrap(), Some(json!(60.5)));
        let llm = store.setting_list("llm.").unwrap();
        assert_eq!(
            llm.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["llm.default", "llm.timeout"]
        );
        assert!(store.setting_delete("llm.timeout").unwrap());
        assert!(!store.setting_delete("llm.timeout").unwrap());
        assert_eq!(store.setting_get("llm.timeout").unwrap(), None);
    }

    #[test]
    fn an_empty_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert!(store.setting_set("", &json!(1)).is_err());
    }
}
