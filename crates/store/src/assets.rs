//! Repositories of the library's assets: characters, personas, presets, lorebooks, regex
//! groups and chats.
//!
//! Every asset table has the same shape: the canonical model JSON in `data` (minus `id` and
//! `revision`, which the columns own) plus the columns we query by. Storing the model's JSON —
//! including its flattened `extra` maps — keeps fields this program does not understand.
//! Each write bumps `revision`; an update that names the revision it read fails with
//! [`StoreError::Conflict`] instead of silently overwriting someone else's change.

use crate::sql::{Dialect, params};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use tavo_model::{Character, Chat, Lorebook, NameMatch, Persona, Preset, RegexGroup, Revision};

use crate::error::{Result, StoreError};
use crate::store::{Tx, now};

/// The kinds of stored assets: the model's one enum (every door parses kind names with it),
/// re-exported because this crate's API takes it.
pub use tavo_model::AssetKind;

/// The asset table of each kind.
pub(crate) trait AssetTable {
    /// The SQL table name.
    fn table(self) -> &'static str;
}

impl AssetTable for AssetKind {
    fn table(self) -> &'static str {
        match self {
            AssetKind::Character => "characters",
            AssetKind::Persona => "personas",
            AssetKind::Preset => "presets",
            AssetKind::Lorebook => "lorebooks",
            AssetKind::Regex => "regex_groups",
            AssetKind::Chat => "chats",
        }
    }
}

/// A model type the store keeps in one of the asset tables.
pub trait Asset: Serialize + DeserializeOwned {
    /// Which table.
    const KIND: AssetKind;
    /// The typed id (`CharacterId`, …).
    type Id: Copy;
    /// The raw integer of an id.
    fn raw_id(id: Self::Id) -> i64;
    /// The typed id of a raw integer.
    fn typed_id(raw: i64) -> Self::Id;
    /// The object's id, when it has been stored.
    fn id(&self) -> Option<Self::Id>;
    /// The display name (indexed for `find`).
    fn name(&self) -> &str;
}

macro_rules! asset_impl {
    ($ty:ty, $kind:ident, $id:ty) => {
        impl Asset for $ty {
            const KIND: AssetKind = AssetKind::$kind;
            type Id = $id;
            fn raw_id(id: $id) -> i64 {
                id.0
            }
            fn typed_id(raw: i64) -> $id {
                <$id>::from(raw)
            }
            fn id(&self) -> Option<$id> {
                self.id
            }
            fn name(&self) -> &str {
                &self.name
            }
        }
    };
}

asset_impl!(Character, Character, tavo_model::CharacterId);
asset_impl!(Persona, Persona, tavo_model::PersonaId);
asset_impl!(Preset, Preset, tavo_model::PresetId);
asset_impl!(Lorebook, Lorebook, tavo_model::LorebookId);
asset_impl!(RegexGroup, Regex, tavo_model::RegexId);
asset_impl!(Chat, Chat, tavo_model::ChatId);

/// One row of a listing, without parsing the asset's JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssetSummary {
    /// The row id: the raw integer of the kind's typed id.
    pub id: i64,
    /// The display name, from the indexed `name` column.
    pub name: String,
    /// Starts at 1 and grows with every write; pass it back to update without a conflict.
    pub revision: u64,
    /// When the asset was first stored, RFC 3339 UTC.
    pub created_at: String,
    /// When the asset was last written, RFC 3339 UTC.
    pub updated_at: String,
    /// Character and persona avatar path, as TavoJS `all()` shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avatar: Option<String>,
    /// Number of entries of a lorebook, regex group or preset (TavoJS `all()`'s `entries`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries: Option<u64>,
}

/// The URL under which `tavo serve` serves a character's stored avatar image: what a read
/// shows as `avatar` when the card itself names none (a PNG card's image is its avatar).
pub(crate) fn character_avatar_url(id: i64) -> String {
    format!("/api/characters/{id}/avatar")
}

/// The URL under which `tavo serve` serves a persona's stored avatar image.
pub(crate) fn persona_avatar_url(id: i64) -> String {
    format!("/api/personas/{id}/avatar")
}

/// The row's revision and times, for [`Tx::asset_json`]'s derived fields.
struct RowTimes<'a> {
    revision: i64,
    created: &'a str,
    updated: &'a str,
}

/// The model JSON of an asset as stored: everything but `id` and `revision`.
pub(crate) fn to_data<A: Serialize>(kind: AssetKind, asset: &A) -> Result<Map<String, Value>> {
    match serde_json::to_value(asset).map_err(|e| StoreError::json(kind.as_str(), e))? {
        Value::Object(mut map) => {
            map.shift_remove("id");
            map.shift_remove("revision");
            Ok(map)
        }
        other => Err(StoreError::InvalidArgument(format!(
            "a {kind} must serialise to a JSON object, not {}",
            json_type(&other)
        ))),
    }
}

/// The TavoJS-shaped object: `id` and `revision` first, then the stored fields.
pub(crate) fn with_identity(id: i64, revision: i64, data: Map<String, Value>) -> Value {
    let mut out = Map::with_capacity(data.len() + 2);
    out.insert("id".into(), Value::from(id));
    out.insert("revision".into(), Value::from(revision));
    out.extend(data);
    Value::Object(out)
}

pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_data(kind: AssetKind, id: i64, text: &str) -> Result<Map<String, Value>> {
    serde_json::from_str(text).map_err(|e| StoreError::json(format!("{kind} {id}"), e))
}

fn from_json<A: Asset>(id: i64, value: Value) -> Result<A> {
    serde_json::from_value(value).map_err(|e| StoreError::json(format!("{} {id}", A::KIND), e))
}

impl Tx<'_> {
    /// Inserts an asset's JSON (its `id`/`revision` keys are ignored); returns the new id.
    pub fn asset_insert(&self, kind: AssetKind, data: &Map<String, Value>) -> Result<i64> {
        let mut data = data.clone();
        data.shift_remove("id");
        data.shift_remove("revision");
        let name = data
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let at = now();
        self.insert_id(
            &format!(
                "INSERT INTO {} (name, revision, created_at, updated_at, data) VALUES (?1, 1, ?2, ?2, ?3)",
                kind.table()
            ),
            params![name, at, Value::Object(data).to_string()],
        )
    }

    /// The asset as TavoJS-shaped JSON (`id`, `revision`, then its fields), or `None`, with the
    /// fields a reader expects filled in from the row (see `derived_fields`): this is what
    /// every door's read shows.
    pub fn asset_json(&self, kind: AssetKind, id: i64) -> Result<Option<Value>> {
        let row: Option<(i64, String, String, String)> = self.query_opt(
            &format!(
                "SELECT revision, data, created_at, updated_at FROM {} WHERE id = ?1",
                kind.table()
            ),
            params![id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
        let Some((revision, text, created, updated)) = row else {
            return Ok(None);
        };
        let mut data = parse_data(kind, id, &text)?;
        let row = RowTimes {
            revision,
            created: &created,
            updated: &updated,
        };
        self.derived_fields(kind, id, &row, &mut data)?;
        Ok(Some(with_identity(id, revision, data)))
    }

    /// The asset's JSON exactly as stored (`id`, `revision`, then its fields): what typed reads
    /// and exports see, so a card exports its own dates and avatar, not derived ones.
    fn asset_stored_json(&self, kind: AssetKind, id: i64) -> Result<Option<Value>> {
        let row: Option<(i64, String)> = self.query_opt(
            &format!("SELECT revision, data FROM {} WHERE id = ?1", kind.table()),
            params![id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        row.map(|(revision, text)| Ok(with_identity(id, revision, parse_data(kind, id, &text)?)))
            .transpose()
    }

    /// Fills what TavoJS readers rely on but the stored JSON may lack:
    /// - characters and personas: `avatar` — the stored value, else the URL of the stored avatar
    ///   image ([`character_avatar_url`], [`persona_avatar_url`]), else `null` (always present);
    /// - characters: `creationDate` (stored value, else the row's creation time) and
    ///   `modificationDate` (the stored value while the row is as imported — revision 1 — else
    ///   the time of the last write);
    /// - chats: `creationDate` (stored value, else the row's creation time).
    fn derived_fields(
        &self,
        kind: AssetKind,
        id: i64,
        row: &RowTimes<'_>,
        data: &mut Map<String, Value>,
    ) -> Result<()> {
        let present = |data: &Map<String, Value>, key: &str| {
            data.get(key).is_some_and(|v| !v.is_null() && v != "")
        };
        match kind {
            AssetKind::Character => {
                if !present(data, "avatar") {
                    let url = self.character_avatar_ref(tavo_model::CharacterId(id))?;
                    data.insert("avatar".into(), url.map_or(Value::Null, Value::String));
                }
                if !present(data, "creationDate") {
                    data.insert("creationDate".into(), Value::String(row.created.to_owned()));
                }
                if row.revision > 1 || !present(data, "modificationDate") {
                    data.insert(
                        "modificationDate".into(),
                        Value::String(row.updated.to_owned()),
                    );
                }
            }
            AssetKind::Persona if !present(data, "avatar") => {
                let has: Option<i64> = self.query_opt(
                    "SELECT 1 FROM persona_avatars WHERE persona_id = ?1",
                    params![id],
                    |r| r.get(0),
                )?;
                let url = has.map(|_| Value::String(persona_avatar_url(id)));
                data.insert("avatar".into(), url.unwrap_or(Value::Null));
            }
            AssetKind::Chat if !present(data, "creationDate") => {
                data.insert("creationDate".into(), Value::String(row.created.to_owned()));
            }
            _ => {}
        }
        Ok(())
    }

    /// The URL of a character's stored avatar image, or `None` when it has none.
    pub fn character_avatar_ref(&self, id: tavo_model::CharacterId) -> Result<Option<String>> {
        let has: Option<i64> = self.query_opt(
            "SELECT 1 FROM character_avatars WHERE character_id = ?1",
            params![id.0],
            |r| r.get(0),
        )?;
        Ok(has.map(|_| character_avatar_url(id.0)))
    }

    /// Id, name, revision and timestamps of every asset of a kind, by id.
    pub fn asset_summaries(&self, kind: AssetKind) -> Result<Vec<AssetSummary>> {
        let extra = match kind {
            AssetKind::Character | AssetKind::Persona => {
                let (avatar, table) = if kind == AssetKind::Character {
                    ("character", "characters")
                } else {
                    ("persona", "personas")
                };
                let stored = match self.dialect() {
                    Dialect::Sqlite => "json_extract(data, '$.avatar')",
                    // A JSON string's text; anything else (a number, an object) as SQLite's
                    // json_extract gives it, which the column read below refuses either way.
                    Dialect::Postgres => "(data::jsonb ->> 'avatar')",
                };
                format!(
                    "COALESCE(NULLIF({stored}, ''), (SELECT '/api/{avatar}s/' || {avatar}_id || '/avatar' FROM {avatar}_avatars WHERE {avatar}_id = {table}.id)), NULL"
                )
            }
            AssetKind::Lorebook | AssetKind::Regex | AssetKind::Preset => match self.dialect() {
                Dialect::Sqlite => "NULL, json_array_length(data, '$.entries')".to_owned(),
                Dialect::Postgres => "NULL, CASE jsonb_typeof(data::jsonb -> 'entries') WHEN 'array' THEN jsonb_array_length(data::jsonb -> 'entries')::BIGINT END".to_owned(),
            },
            AssetKind::Chat => "NULL, NULL".to_owned(),
        };
        self.query_map(
            &format!(
                "SELECT id, name, revision, created_at, updated_at, {extra} FROM {} ORDER BY id",
                kind.table()
            ),
            params![],
            |r| {
                Ok(AssetSummary {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    revision: r.get::<i64>(2)?.max(0) as u64,
                    created_at: r.get(3)?,
                    updated_at: r.get(4)?,
                    avatar: r.get::<Option<String>>(5).ok().flatten(),
                    entries: r.get::<Option<i64>>(6)?.map(|n| n.max(0) as u64),
                })
            },
        )
    }

    /// The ids of a kind whose name matches `query` under `mode` (case-sensitive).
    pub fn asset_find_ids(
        &self,
        kind: AssetKind,
        query: &str,
        mode: NameMatch,
    ) -> Result<Vec<i64>> {
        let condition = match (mode, self.dialect()) {
            (NameMatch::Exact, _) => "name = ?1",
            (NameMatch::Prefix, _) => "substr(name, 1, length(?1)) = ?1",
            (NameMatch::Suffix, Dialect::Sqlite) => {
                "(length(?1) = 0 OR substr(name, -length(?1)) = ?1)"
            }
            (NameMatch::Suffix, Dialect::Postgres) => "right(name, length(?1)) = ?1",
            (NameMatch::Contains, Dialect::Sqlite) => "instr(name, ?1) > 0",
            (NameMatch::Contains, Dialect::Postgres) => "strpos(name, ?1) > 0",
        };
        self.query_map(
            &format!(
                "SELECT id FROM {} WHERE {condition} ORDER BY id",
                kind.table()
            ),
            params![query],
            |r| r.get::<i64>(0),
        )
    }

    /// Replaces an asset's JSON and bumps its revision. With `expected`, the write happens only
    /// if the stored revision still equals it (else [`StoreError::Conflict`]). Returns the new
    /// revision.
    pub fn asset_replace(
        &self,
        kind: AssetKind,
        id: i64,
        data: &Map<String, Value>,
        expected: Option<Revision>,
    ) -> Result<Revision> {
        let current: Option<i64> = self.query_opt(
            &format!("SELECT revision FROM {} WHERE id = ?1", kind.table()),
            params![id],
            |r| r.get(0),
        )?;
        let current = current.ok_or_else(|| StoreError::not_found(kind.as_str(), id))?;
        if let Some(expected) = expected
            && i64::try_from(expected).ok() != Some(current)
        {
            return Err(StoreError::Conflict {
                kind: kind.as_str(),
                id,
                expected: i64::try_from(expected).unwrap_or(i64::MAX),
                actual: current,
            });
        }
        let mut data = data.clone();
        data.shift_remove("id");
        data.shift_remove("revision");
        // A read shows the stored avatar image's URL as `avatar`; writing that object back must
        // not turn the derived URL into a stored one that outlives the image.
        let derived = match kind {
            AssetKind::Character => Some(character_avatar_url(id)),
            AssetKind::Persona => Some(persona_avatar_url(id)),
            _ => None,
        };
        if let Some(url) = derived
            && data.get("avatar").is_some_and(|v| v == &Value::String(url))
        {
            data.shift_remove("avatar");
        }
        let name = data
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        self.execute(
            &format!("UPDATE {} SET name = ?1, data = ?2, revision = revision + 1, updated_at = ?3 WHERE id = ?4", kind.table()),
            params![name, Value::Object(data).to_string(), now(), id])?;
        Ok((current + 1) as u64)
    }

    /// Deletes an asset; returns whether it existed. Rows that belong to it (avatars, a chat's
    /// messages, variables and state) go with it. A chat's files are removed by
    /// [`crate::Store::chat_delete`], which runs after the transaction commits.
    ///
    /// Deleting a character also removes it from the member list of every chat it is in (a
    /// group chat goes on with the others; the chat and its messages stay, as when a member
    /// leaves a SillyTavern group), in the same transaction.
    pub fn asset_delete(&self, kind: AssetKind, id: i64) -> Result<bool> {
        if kind == AssetKind::Character {
            self.remove_member_everywhere(tavo_model::CharacterId(id))?;
        }
        Ok(self.execute(
            &format!("DELETE FROM {} WHERE id = ?1", kind.table()),
            params![id],
        )? > 0)
    }

    /// The chats whose member list names the character, by id.
    pub fn chats_with_member(
        &self,
        id: tavo_model::CharacterId,
    ) -> Result<Vec<tavo_model::ChatId>> {
        let sql = match self.dialect() {
            Dialect::Sqlite => {
                "SELECT DISTINCT c.id FROM chats c, json_each(c.data, '$.characters') m
                 WHERE json_extract(m.value, '$.id') = ?1 ORDER BY c.id"
            }
            Dialect::Postgres => {
                "SELECT DISTINCT c.id FROM chats c,
                   jsonb_array_elements(CASE jsonb_typeof(c.data::jsonb -> 'characters')
                     WHEN 'array' THEN c.data::jsonb -> 'characters' ELSE '[]'::jsonb END) m
                 WHERE m ->> 'id' = (?1)::text ORDER BY c.id"
            }
        };
        self.query_map(sql, params![id.0], |r| {
            r.get::<i64>(0).map(tavo_model::ChatId)
        })
    }

    /// Removes a character from every chat's member list; returns the chats changed.
    fn remove_member_everywhere(
        &self,
        id: tavo_model::CharacterId,
    ) -> Result<Vec<tavo_model::ChatId>> {
        let chats = self.chats_with_member(id)?;
        for chat_id in &chats {
            if let Some(mut chat) = self.get::<Chat>(*chat_id)? {
                chat.characters.retain(|m| m.id != id);
                self.update(&chat, None)?;
            }
        }
        Ok(chats)
    }

    /// Stores a new asset; returns its id. The asset's own `id` and `revision` are ignored.
    pub fn create<A: Asset>(&self, asset: &A) -> Result<A::Id> {
        let data = to_data(A::KIND, asset)?;
        self.asset_insert(A::KIND, &data).map(A::typed_id)
    }

    /// The asset with its `id` and `revision` filled in, or `None`.
    pub fn get<A: Asset>(&self, id: A::Id) -> Result<Option<A>> {
        let raw = A::raw_id(id);
        self.asset_stored_json(A::KIND, raw)?
            .map(|v| from_json(raw, v))
            .transpose()
    }

    /// Like [`Tx::get`], but a missing asset is [`StoreError::NotFound`].
    pub fn require<A: Asset>(&self, id: A::Id) -> Result<A> {
        self.get(id)?
            .ok_or_else(|| StoreError::not_found(A::KIND.as_str(), A::raw_id(id)))
    }

    /// Every asset of the type, by id.
    pub fn list<A: Asset>(&self) -> Result<Vec<A>> {
        let rows = self.query_map(
            &format!(
                "SELECT id, revision, data FROM {} ORDER BY id",
                A::KIND.table()
            ),
            params![],
            |r| Ok((r.get::<i64>(0)?, r.get::<i64>(1)?, r.get::<String>(2)?)),
        )?;
        let mut out = Vec::new();
        for (id, revision, text) in rows {
            out.push(from_json(
                id,
                with_identity(id, revision, parse_data(A::KIND, id, &text)?),
            )?);
        }
        Ok(out)
    }

    /// The assets whose name matches (seed `find(name, { match })`), by id.
    pub fn find<A: Asset>(&self, name: &str, mode: NameMatch) -> Result<Vec<A>> {
        let mut out = Vec::new();
        for id in self.asset_find_ids(A::KIND, name, mode)? {
            if let Some(found) = self.get(A::typed_id(id))? {
                out.push(found);
            }
        }
        Ok(out)
    }

    /// Writes `asset` over the stored one with the same id and returns the new revision.
    /// `expected` guards against lost updates (see [`Tx::asset_replace`]).
    pub fn update<A: Asset>(&self, asset: &A, expected: Option<Revision>) -> Result<Revision> {
        let id = asset.id().ok_or_else(|| {
            StoreError::InvalidArgument(format!(
                "{}.id is required to update a {}",
                A::KIND,
                A::KIND
            ))
        })?;
        let data = to_data(A::KIND, asset)?;
        self.asset_replace(A::KIND, A::raw_id(id), &data, expected)
    }

    /// Deletes the asset; returns whether it existed.
    pub fn delete<A: Asset>(&self, id: A::Id) -> Result<bool> {
        self.asset_delete(A::KIND, A::raw_id(id))
    }
}
