//! What several store tests start from: a fresh library in a folder of its own, a character.

use tavo_model::Character;
use tavo_store::Store;

/// A new library in a temporary folder, kept while the folder is.
pub fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    (dir, store)
}

/// A character with a name and a greeting, nothing else.
pub fn character(name: &str) -> Character {
    Character {
        name: name.into(),
        first_mes: "hi".into(),
        ..Default::default()
    }
}
