//! Moving a library between databases or folders (`tavo migrate`): a backup of the source
//! with its keys sealed under a one-time passphrase, restored into the target. Everything a
//! backup carries travels — every row, the library trees (chat and global files, card files,
//! plugins) and the API keys — and the same checks guard it: the target is replaced only when
//! empty or when asked to, and a failed restore leaves it as it was.

use tavo_store::Store;

use super::{BackupError, BackupOptions, RestoreOptions, RestoreSummary};

/// Copies library `from` into `to` (SQLite or PostgreSQL, either way). `replace`: a target
/// that is not empty is replaced instead of refused. Blocking.
pub fn migrate_library(
    from: &Store,
    to: &Store,
    replace: bool,
) -> Result<RestoreSummary, BackupError> {
    // Never written anywhere: it seals the keys inside the intermediate file only.
    let passphrase = format!("{}{}", uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    let file = std::env::temp_dir().join(format!(
        "tavo-migrate-{}-{}.{}",
        std::process::id(),
        uuid::Uuid::new_v4(),
        super::EXTENSION
    ));
    let moved = (|| {
        super::create_backup(
            from,
            &file,
            &BackupOptions {
                passphrase: Some(passphrase.clone()),
            },
        )?;
        super::restore_backup(
            to,
            &file,
            &RestoreOptions {
                yes: replace,
                passphrase: Some(passphrase.clone()),
            },
        )
    })();
    let _ = std::fs::remove_file(&file);
    moved
}

/// Deletes a library kept in PostgreSQL (a removed user's schema and every row in it); the
/// files in its folder are the caller's to delete, as on SQLite.
pub fn delete_postgres_library(
    pool: &std::sync::Arc<tavo_store::PgPool>,
    schema: &str,
) -> Result<(), BackupError> {
    Ok(pool.drop_library(schema)?)
}
