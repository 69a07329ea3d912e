//! What several store tests start from: a fresh library in a folder of its own, a character.

use tavo_model::Character;
use tavo_store::Store;

/// A character with a name and a greeting, nothing else.
pub fn character(name: &str) -> Character {
    Character {
        name: name.into(),
        first_mes: "hi".into(),
        ..Default::default()
    }
}

/// A library on one backend, deleted when dropped (the folder, or the PostgreSQL schema).
pub struct Library {
    pub store: Store,
    _dir: tempfile::TempDir,
    schema: Option<(std::sync::Arc<tavo_store::PgPool>, String)>,
}

impl Drop for Library {
    fn drop(&mut self) {
        if let Some((pool, schema)) = self.schema.take() {
            let _ = pool.drop_library(&schema);
        }
    }
}

/// The database behind `TAVO_TEST_POSTGRES`, connected once per test binary.
fn postgres_pool() -> Option<std::sync::Arc<tavo_store::PgPool>> {
    static POOL: std::sync::OnceLock<Option<std::sync::Arc<tavo_store::PgPool>>> =
        std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let Ok(url) = std::env::var("TAVO_TEST_POSTGRES") else {
            // Straight to stderr: the test harness captures `eprintln!`, and this line is for
            // whoever runs `cargo test`.
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "note: the PostgreSQL side of the store suite needs TAVO_TEST_POSTGRES=postgres://… \
                 (one command starts a throwaway server: eval \"$(scripts/throwaway-postgres.sh start)\"); \
                 only SQLite ran"
            );
            return None;
        };
        Some(tavo_store::PgPool::connect(&url).unwrap_or_else(|e| panic!("TAVO_TEST_POSTGRES={url}: {e}")))
    })
    .clone()
}

/// A fresh library on SQLite, or (`postgres`) in a new schema of `TAVO_TEST_POSTGRES`'s
/// database: `None` when that variable is not set.
pub fn library(postgres: bool) -> Option<Library> {
    let dir = tempfile::tempdir().unwrap();
    if !postgres {
        let store = Store::open(dir.path()).unwrap();
        return Some(Library {
            store,
            _dir: dir,
            schema: None,
        });
    }
    let pool = postgres_pool()?;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let schema = format!(
        "t{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let store = Store::open_postgres(pool.clone(), &schema, dir.path()).unwrap();
    Some(Library {
        store,
        _dir: dir,
        schema: Some((pool, schema)),
    })
}

/// Tests that run on both databases: each `fn name(store) { … }` becomes `name::sqlite` and
/// `name::postgres` (the latter passes with a note when `TAVO_TEST_POSTGRES` is not set).
macro_rules! on_both {
    ($($(#[$attr:meta])* fn $name:ident($store:ident) $body:block)*) => {$(
        $(#[$attr])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            fn run($store: &tavo_store::Store) $body

            #[test]
            fn sqlite() {
                let library = crate::support::library(false).unwrap();
                run(&library.store);
            }

            #[test]
            fn postgres() {
                if let Some(library) = crate::support::library(true) {
                    run(&library.store);
                }
            }
        }
    )*};
}
pub(crate) use on_both;
