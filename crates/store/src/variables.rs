//! Variables in three separate namespaces: a chat's, the global one, and a message's.
//!
//! Each top-level variable name is one row holding its JSON value; a dotted path
//! (`status.hp`) reads or rewrites the row of its first segment through [`crate::varpath`].
//! The scopes never fall through to each other (TavoJS); a chat's variables are deleted with
//! the chat and a message's with the message (foreign keys, `ON DELETE CASCADE`).

use crate::sql::params;
use serde_json::{Map, Value};

use crate::error::{Result, StoreError};
use crate::store::Tx;
use crate::varpath::{self, Segment};

/// Which namespace a variable lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VarScope {
    /// The variables of one chat (TavoJS default scope `'chat'`).
    Chat(i64),
    /// Variables shared by every chat (`'global'`).
    Global,
    /// The variables attached to one message, by message id (`{scope: 'message', id}`).
    Message(i64),
}

impl VarScope {
    fn table(&self) -> (&'static str, &'static str, i64) {
        // Global rows use owner 0 in a table without an owner column; see `owner_clause`.
        match self {
            VarScope::Chat(id) => ("chat_variables", "chat_id", *id),
            VarScope::Global => ("global_variables", "", 0),
            VarScope::Message(id) => ("message_variables", "message_id", *id),
        }
    }
}

impl Tx<'_> {
    fn var_row(&self, scope: VarScope, name: &str) -> Result<Option<Value>> {
        let (table, owner_col, owner) = scope.table();
        let text: Option<String> = if owner_col.is_empty() {
            self.query_opt(
                &format!("SELECT value FROM {table} WHERE name = ?1"),
                params![name],
                |r| r.get(0),
            )?
        } else {
            self.query_opt(
                &format!("SELECT value FROM {table} WHERE {owner_col} = ?1 AND name = ?2"),
                params![owner, name],
                |r| r.get(0),
            )?
        };
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| StoreError::json(format!("variable {name:?}"), e))
        })
        .transpose()
    }

    fn var_write_row(&self, scope: VarScope, name: &str, value: Option<&Value>) -> Result<()> {
        let (table, owner_col, owner) = scope.table();
        match (value, owner_col.is_empty()) {
            (Some(value), true) => {
                self.execute(
                    &format!(
                        "INSERT INTO {table} (name, value) VALUES (?1, ?2)
                         ON CONFLICT(name) DO UPDATE SET value = excluded.value"
                    ),
                    params![name, value.to_string()],
                )?;
            }
            (Some(value), false) => {
                self.execute(
                    &format!(
                        "INSERT INTO {table} ({owner_col}, name, value) VALUES (?1, ?2, ?3)
                         ON CONFLICT({owner_col}, name) DO UPDATE SET value = excluded.value"
                    ),
                    params![owner, name, value.to_string()],
                )?;
            }
            (None, true) => {
                self.execute(
                    &format!("DELETE FROM {table} WHERE name = ?1"),
                    params![name],
                )?;
            }
            (None, false) => {
                self.execute(
                    &format!("DELETE FROM {table} WHERE {owner_col} = ?1 AND name = ?2"),
                    params![owner, name],
                )?;
            }
        }
        Ok(())
    }

    fn var_owner_exists(&self, scope: VarScope) -> Result<()> {
        let (table, kind, id) = match scope {
            VarScope::Global => return Ok(()),
            VarScope::Chat(id) => ("chats", "chat", id),
            VarScope::Message(id) => ("messages", "message", id),
        };
        let found: Option<i64> = self.query_opt(
            &format!("SELECT 1 FROM {table} WHERE id = ?1"),
            params![id],
            |r| r.get(0),
        )?;
        found
            .map(|_| ())
            .ok_or_else(|| StoreError::not_found(kind, id))
    }

    /// Runs `edit` on a one-key object holding the path's top-level variable, then stores the
    /// result (or deletes the row when the variable is gone).
    fn var_edit<T>(
        &self,
        scope: VarScope,
        path: &str,
        edit: impl FnOnce(&mut Value) -> Result<T>,
    ) -> Result<T> {
        let name = top_level(path)?;
        self.var_owner_exists(scope)?;
        let mut holder = Map::new();
        if let Some(current) = self.var_row(scope, &name)? {
            holder.insert(name.clone(), current);
        }
        let mut root = Value::Object(holder);
        let out = edit(&mut root)?;
        self.var_write_row(scope, &name, root.get(&name))?;
        Ok(out)
    }

    /// The value at `path` (`status.hp`), or `None` when it is not set.
    pub fn var_get(&self, scope: VarScope, path: &str) -> Result<Option<Value>> {
        let name = top_level(path)?;
        let Some(value) = self.var_row(scope, &name)? else {
            return Ok(None);
        };
        let mut holder = Map::new();
        holder.insert(name, value);
        let root = Value::Object(holder);
        Ok(varpath::get(&root, path)?.cloned())
    }

    /// Writes `value` at `path`, creating the variable and intermediate objects as needed.
    pub fn var_set(&self, scope: VarScope, path: &str, value: &Value) -> Result<()> {
        self.var_edit(scope, path, |root| varpath::set(root, path, value.clone()))
    }

    /// Shallow-merges an object `patch` into the object at `path` (TavoJS `tavo.update`).
    pub fn var_update(&self, scope: VarScope, path: &str, patch: &Value) -> Result<()> {
        self.var_edit(scope, path, |root| {
            varpath::merge(root, path, patch.clone())
        })
    }

    /// Removes only the leaf at `path`; returns whether something was removed.
    pub fn var_unset(&self, scope: VarScope, path: &str) -> Result<bool> {
        self.var_edit(
            scope,
            path,
            |root| Ok(varpath::unset(root, path)?.is_some()),
        )
    }

    /// Every variable of the scope as one object, names in byte order.
    pub fn var_all(&self, scope: VarScope) -> Result<Map<String, Value>> {
        let (table, owner_col, owner) = scope.table();
        let sql = if owner_col.is_empty() {
            format!("SELECT name, value FROM {table} WHERE ?1 = 0 ORDER BY name")
        } else {
            format!("SELECT name, value FROM {table} WHERE {owner_col} = ?1 ORDER BY name")
        };
        let rows = self.query_map(&sql, params![owner], |r| {
            Ok((r.get::<String>(0)?, r.get::<String>(1)?))
        })?;
        let mut out = Map::new();
        for (name, text) in rows {
            let value = serde_json::from_str(&text)
                .map_err(|e| StoreError::json(format!("variable {name:?}"), e))?;
            out.insert(name, value);
        }
        Ok(out)
    }

    /// Replaces the whole scope with `vars` (the prompt engine writes back a scope it edited in
    /// memory; a chat import restores its variables).
    pub fn var_replace_all(&self, scope: VarScope, vars: &Map<String, Value>) -> Result<()> {
        self.var_owner_exists(scope)?;
        let (table, owner_col, owner) = scope.table();
        if owner_col.is_empty() {
            self.execute(&format!("DELETE FROM {table}"), params![])?;
        } else {
            self.execute(
                &format!("DELETE FROM {table} WHERE {owner_col} = ?1"),
                params![owner],
            )?;
        }
        for (name, value) in vars {
            if name.is_empty() {
                return Err(StoreError::InvalidPath {
                    path: String::new(),
                    reason: "a variable name must not be empty",
                });
            }
            self.var_write_row(scope, name, Some(value))?;
        }
        Ok(())
    }
}

fn top_level(path: &str) -> Result<String> {
    match varpath::parse(path)?.into_iter().next() {
        Some(Segment::Key(name)) => Ok(name),
        _ => Err(StoreError::InvalidPath {
            path: path.to_owned(),
            reason: "a path must start with a variable name",
        }),
    }
}
