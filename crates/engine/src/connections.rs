//! The connection book (`llm.connections` in the settings), read and changed in one
//! transaction. It is the one path that `tavo connection …` and `/api/connections` share: two
//! doors (a `tavo serve` and a CLI) changing the book at the same moment both land, and a
//! change that is refused writes nothing.

use tavo_llm::ConnectionBook;
use tavo_llm::connection::{ConnectionError, SETTINGS_KEY};
use tavo_store::{Store, StoreError};

/// Why the book could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    /// The library could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The stored book is malformed, or the change was refused (a taken name, no such
    /// connection, an invalid field); the message says which.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
}

/// The stored book (empty when nothing was ever added).
pub fn book(store: &Store) -> Result<ConnectionBook, BookError> {
    Ok(ConnectionBook::from_setting(
        store.setting_get(SETTINGS_KEY)?,
    )?)
}

/// What a page's `isToolCallingSupported()` answers: tool use is on (`tools.enabled`) and a
/// connection exists to send tools to (every protocol tavo speaks supports them).
pub fn tool_calling_supported(store: &Store) -> Result<bool, BookError> {
    let enabled = tavo_tools::ToolSettings::load(store)?.enabled;
    let book = book(store)?;
    Ok(enabled && (book.default.is_some() || !book.connections.is_empty()))
}

/// Applies `change` to the stored book and saves it, in one transaction; answers what
/// `change` returned and the book as saved. When `change` refuses, nothing is written.
pub fn change_book<T>(
    store: &Store,
    change: impl FnOnce(&mut ConnectionBook) -> Result<T, ConnectionError>,
) -> Result<(T, ConnectionBook), BookError> {
    let changed = store.write(|tx| {
        let mut book = match ConnectionBook::from_setting(tx.setting_get(SETTINGS_KEY)?) {
            Ok(book) => book,
            Err(e) => return Ok(Err(e)),
        };
        // The inner result is the change's verdict; on a refusal the transaction commits
        // nothing, since nothing was written in it.
        match change(&mut book) {
            Ok(out) => {
                tx.setting_set(SETTINGS_KEY, &book.to_setting())?;
                Ok(Ok((out, book)))
            }
            Err(e) => Ok(Err(e)),
        }
    })?;
    Ok(changed?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tavo_llm::{Connection, Protocol};

    fn connection(name: &str) -> Connection {
        Connection {
            name: name.into(),
            source: "custom".into(),
            protocol: Protocol::OpenaiChat,
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            api_key: None,
            api_key_env: None,
            parameters: Default::default(),
        }
    }

    #[test]
    fn a_change_is_saved_and_a_refused_one_writes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let ((), saved) = change_book(&store, |b| b.add(connection("a"), false)).expect("add");
        assert_eq!(saved.connections.len(), 1);
        assert_eq!(book(&store).expect("read").default.as_deref(), Some("a"));
        let taken = change_book(&store, |b| {
            b.remove("a")?;
            b.add(connection("b"), false)?;
            b.add(connection("b"), false)
        });
        assert!(matches!(
            taken,
            Err(BookError::Connection(ConnectionError::Exists(_)))
        ));
        let names: Vec<String> = book(&store)
            .expect("read")
            .connections
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names, ["a"], "the refused change removed nothing");
    }
}
