//! A fresh library for the behaviour suites, on the database the run asks for.
//!
//! `TAVO_TEST_STORE=postgres` (with `TAVO_TEST_POSTGRES=postgres://…`, the throwaway server
//! `scripts/throwaway-postgres.sh` starts) opens each test's library in a new schema of that
//! database instead of a SQLite file, so the engine's and the server's suites run unchanged on
//! PostgreSQL (`.ci/run` runs them both ways). The schemas (`t<pid>_<n>`) are left in the
//! database, which is a throwaway one.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use tavo_store::{PgPool, Store};

/// Whether this run's libraries are on PostgreSQL (`TAVO_TEST_STORE=postgres`).
pub fn on_postgres() -> bool {
    std::env::var("TAVO_TEST_STORE").is_ok_and(|v| v.eq_ignore_ascii_case("postgres"))
}

fn pool() -> Arc<PgPool> {
    static POOL: OnceLock<Arc<PgPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let url = std::env::var("TAVO_TEST_POSTGRES").unwrap_or_else(|_| {
            panic!(
                "TAVO_TEST_STORE=postgres needs TAVO_TEST_POSTGRES=postgres://… \
                 (eval \"$(scripts/throwaway-postgres.sh start)\")"
            )
        });
        PgPool::connect(&url).unwrap_or_else(|e| panic!("TAVO_TEST_POSTGRES={url}: {e}"))
    })
    .clone()
}

/// A new, empty library whose files live in `dir`: SQLite in `dir`, or a fresh PostgreSQL
/// schema when the run asks for it.
pub fn test_library(dir: &Path) -> Store {
    if !on_postgres() {
        return Store::open(dir)
            .unwrap_or_else(|e| panic!("opening a library in {}: {e}", dir.display()));
    }
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let schema = format!(
        "t{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    Store::open_postgres(pool(), &schema, dir)
        .unwrap_or_else(|e| panic!("opening the library {schema}: {e}"))
}

/// A new, empty database on `TAVO_TEST_POSTGRES`'s server, for a test that runs whole
/// commands (each library in its own schema, so two such tests must not share a database);
/// its URL, or `None` (with a note on stderr) when the run has no server.
pub fn fresh_database() -> Option<String> {
    let Ok(url) = std::env::var("TAVO_TEST_POSTGRES") else {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "note: this PostgreSQL test needs TAVO_TEST_POSTGRES=postgres://… \
             (eval \"$(scripts/throwaway-postgres.sh start)\"); skipped"
        );
        return None;
    };
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let name = format!(
        "d{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    pool()
        .create_database(&name)
        .unwrap_or_else(|e| panic!("creating the database {name}: {e}"));
    let base = url.rsplit_once('/').map_or(url.as_str(), |(b, _)| b);
    Some(format!("{base}/{name}"))
}
