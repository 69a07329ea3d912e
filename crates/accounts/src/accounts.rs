//! The accounts registry: `accounts.sqlite` in the data folder, with the users and the digests
//! of their sessions.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use tavo_store::params;
use tavo_store::registry::{Registry, RegistryTx};

use crate::error::AccountError;
use crate::password;
use crate::session::{ABSOLUTE_EXPIRY, IDLE_EXPIRY, SessionToken, TOUCH_EVERY};
use crate::throttle::Throttle;

/// The registry's file in the data folder (SQLite).
pub const ACCOUNTS_FILE: &str = "accounts.sqlite";
/// The registry's PostgreSQL schema (`--database`), beside the libraries' schemas.
pub const ACCOUNTS_SCHEMA: &str = "accounts";

/// The folder of a user's library relative to the data folder: `.` is the data folder itself.
const ROOT_LIBRARY: &str = ".";
/// The shared library's folder under the data folder, and its PostgreSQL schema.
pub const SHARED_LIBRARY: &str = "shared";
/// The PostgreSQL schema of the data folder's own library.
pub const ROOT_SCHEMA: &str = "tavo";

const SCHEMA: &str = r#"
CREATE TABLE users (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL UNIQUE,
    admin      INTEGER NOT NULL DEFAULT 0,
    disabled   INTEGER NOT NULL DEFAULT 0,
    password   TEXT NOT NULL,
    library    TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
CREATE TABLE sessions (
    digest     TEXT PRIMARY KEY NOT NULL,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_user ON sessions (user_id);
"#;

/// A user name: 1–32 characters of `a-z 0-9 _ - .`, starting with a letter or digit.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct UserName(String);

impl UserName {
    /// Checks a name (given in any case; kept in lower case).
    pub fn parse(name: &str) -> Result<Self, AccountError> {
        let lower = name.trim().to_ascii_lowercase();
        let ok = (1..=32).contains(&lower.len())
            && lower
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric())
            && lower
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if ok {
            Ok(UserName(lower))
        } else {
            Err(AccountError::BadName(name.to_owned()))
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for UserName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A user as the registry knows them (never the password hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct User {
    /// Stable id; never reused.
    pub id: i64,
    /// The login name.
    pub name: String,
    /// May manage users.
    pub admin: bool,
    /// May not log in; their sessions ended.
    pub disabled: bool,
    /// When the user was added (RFC 3339).
    pub created_at: String,
    /// Their library's folder, relative to the data folder (`.`: the data folder itself).
    pub library: String,
}

/// A successful login: the user and the token of their new session.
#[derive(Debug)]
pub struct Login {
    /// Who logged in.
    pub user: User,
    /// The new session (never one the browser sent before: no fixation).
    pub token: SessionToken,
}

/// The registry: `accounts.sqlite` in the data folder, or schema `accounts` of the PostgreSQL
/// database the libraries live in (then every replica sees the same users and sessions). Every
/// call is short except the password checks, which callers run off their async executor.
pub struct Accounts {
    root: PathBuf,
    registry: Registry,
    throttle: Mutex<Throttle>,
}

impl std::fmt::Debug for Accounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accounts")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

fn user_of(r: &tavo_store::registry::Row<'_>) -> tavo_store::Result<User> {
    Ok(User {
        id: r.get(0)?,
        name: r.get(1)?,
        admin: r.get::<i64>(2)? != 0,
        disabled: r.get::<i64>(3)? != 0,
        created_at: r.get(4)?,
        library: r.get(5)?,
    })
}

const USER_COLUMNS: &str = "id, name, admin, disabled, created_at, library";

impl Accounts {
    /// Whether the data folder has an accounts registry.
    pub fn exists(root: &Path) -> bool {
        root.join(ACCOUNTS_FILE).is_file()
    }

    /// Opens (or creates) the registry of the data folder `root`.
    pub fn open(root: &Path) -> Result<Self, AccountError> {
        std::fs::create_dir_all(root).map_err(|source| AccountError::Io {
            context: format!("creating {}", root.display()),
            source,
        })?;
        let registry = Registry::open_sqlite(&root.join(ACCOUNTS_FILE), &[SCHEMA])
            .map_err(AccountError::db("opening accounts.sqlite"))?;
        Ok(Accounts {
            root: root.to_owned(),
            registry,
            throttle: Mutex::default(),
        })
    }

    /// Opens (or creates) the registry in the PostgreSQL database of `pool` (schema
    /// `accounts`); `root` is the data folder. The first time, the users of the folder's
    /// `accounts.sqlite` are copied in (sessions are not: everyone logs in again), so a server
    /// moved onto PostgreSQL keeps its accounts.
    pub fn open_postgres(
        root: &Path,
        pool: std::sync::Arc<tavo_store::PgPool>,
    ) -> Result<Self, AccountError> {
        let registry = Registry::open_postgres(pool, ACCOUNTS_SCHEMA, &[SCHEMA])
            .map_err(AccountError::db("opening the accounts in PostgreSQL"))?;
        let accounts = Accounts {
            root: root.to_owned(),
            registry,
            throttle: Mutex::default(),
        };
        if accounts.list()?.is_empty() && Self::exists(root) {
            Self::open(root)?.copy_users_into(&accounts)?;
        }
        Ok(accounts)
    }

    /// The database pool when the registry is in PostgreSQL (the libraries use the same one).
    pub fn database_pool(&self) -> Option<std::sync::Arc<tavo_store::PgPool>> {
        self.registry.pg_pool()
    }

    /// Whether this registry holds any user (on PostgreSQL, where there is no file to look for).
    pub fn is_empty(&self) -> Result<bool, AccountError> {
        Ok(self.list()?.is_empty())
    }

    /// Replaces every user of `target` by this registry's users — ids, names, password hashes,
    /// roles and libraries — and ends `target`'s sessions (`tavo migrate`, a first open on
    /// PostgreSQL).
    pub fn copy_users_into(&self, target: &Accounts) -> Result<usize, AccountError> {
        let users: Vec<(User, String)> = self
            .registry
            .read(|tx| {
                tx.query_map(
                    &format!("SELECT {USER_COLUMNS}, password FROM users ORDER BY id"),
                    params![],
                    |r| Ok((user_of(r)?, r.get::<String>(6)?)),
                )
            })
            .map_err(AccountError::db("reading the users to copy"))?;
        target
            .registry
            .write(|tx| {
                tx.execute("DELETE FROM sessions", params![])?;
                tx.execute("DELETE FROM users", params![])?;
                for (u, hash) in &users {
                    tx.execute(
                        "INSERT INTO users (id, name, admin, disabled, password, library, created_at) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                        params![u.id, u.name.as_str(), u.admin, u.disabled, hash, u.library, u.created_at],
                    )?;
                }
                tx.reset_identity("users", "id")
            })
            .map_err(AccountError::db("copying the users"))?;
        Ok(users.len())
    }

    fn read<T>(
        &self,
        what: &'static str,
        f: impl FnOnce(&RegistryTx<'_, '_>) -> tavo_store::Result<T>,
    ) -> Result<T, AccountError> {
        self.registry.read(f).map_err(AccountError::db(what))
    }

    fn write<T>(
        &self,
        what: &'static str,
        f: impl FnOnce(&RegistryTx<'_, '_>) -> tavo_store::Result<T>,
    ) -> Result<T, AccountError> {
        self.registry.write(f).map_err(AccountError::db(what))
    }

    /// Every user, by id.
    pub fn list(&self) -> Result<Vec<User>, AccountError> {
        self.read("listing users", |tx| {
            tx.query_map(
                &format!("SELECT {USER_COLUMNS} FROM users ORDER BY id"),
                params![],
                user_of,
            )
        })
    }

    /// One user by name.
    pub fn get(&self, name: &str) -> Result<User, AccountError> {
        let name = UserName::parse(name)?;
        self.read("reading a user", |tx| {
            tx.query_opt(
                &format!("SELECT {USER_COLUMNS} FROM users WHERE name = ?1"),
                params![name.as_str()],
                user_of,
            )
        })?
        .ok_or_else(|| AccountError::NoSuchUser(name.to_string()))
    }

    /// Adds a user. The first admin gets the data folder's own library (an existing
    /// single-user library becomes theirs, unchanged); everyone else `users/<id>/`.
    pub fn add(&self, name: &str, password: &str, admin: bool) -> Result<User, AccountError> {
        let name = UserName::parse(name)?;
        let hash = password::hash(password)?;
        let created = chrono::Utc::now().to_rfc3339();
        let added = self.registry.write(|tx| {
            let taken = tx.query_opt(
                "SELECT 1 FROM users WHERE name = ?1",
                params![name.as_str()],
                |r| r.get::<i64>(0),
            )?;
            if taken.is_some() {
                return Ok(false);
            }
            let root_taken = tx
                .query_opt(
                    "SELECT 1 FROM users WHERE library = ?1",
                    params![ROOT_LIBRARY],
                    |r| r.get::<i64>(0),
                )?
                .is_some();
            let id = tx.insert_id(
                "INSERT INTO users (name, admin, password, library, created_at) VALUES (?1, ?2, ?3, '', ?4)",
                params![name.as_str(), admin, hash, created],
            )?;
            let library = if admin && !root_taken {
                ROOT_LIBRARY.to_owned()
            } else {
                format!("users/{id}")
            };
            tx.execute(
                "UPDATE users SET library = ?1 WHERE id = ?2",
                params![library, id],
            )?;
            Ok(true)
        });
        if !added.map_err(AccountError::db("adding a user"))? {
            return Err(AccountError::Exists(name.to_string()));
        }
        let user = self.get(name.as_str())?;
        std::fs::create_dir_all(self.library_dir(&user)).map_err(|source| AccountError::Io {
            context: format!("creating the library folder of {name}"),
            source,
        })?;
        Ok(user)
    }

    /// The folder of a user's library.
    pub fn library_dir(&self, user: &User) -> PathBuf {
        if user.library == ROOT_LIBRARY {
            self.root.clone()
        } else {
            self.root.join(&user.library)
        }
    }

    /// The PostgreSQL schema of a user's library when the server keeps its libraries in
    /// PostgreSQL (`--database`): `tavo` for the data folder's own library (the one
    /// `tavo serve --database` serves without accounts), `user_<id>` for everyone else's.
    pub fn library_schema(&self, user: &User) -> String {
        if user.library == ROOT_LIBRARY {
            ROOT_SCHEMA.to_owned()
        } else {
            format!("user_{}", user.id)
        }
    }

    /// The shared library's folder (what admins publish for everyone, `tavo serve --accounts`).
    pub fn shared_dir(&self) -> PathBuf {
        self.root.join(SHARED_LIBRARY)
    }

    /// Changes a user's password; every session of theirs ends.
    pub fn set_password(&self, name: &str, password: &str) -> Result<User, AccountError> {
        let user = self.get(name)?;
        let hash = password::hash(password)?;
        self.write("changing a password", |tx| {
            tx.execute(
                "UPDATE users SET password = ?1 WHERE id = ?2",
                params![hash, user.id],
            )?;
            tx.execute("DELETE FROM sessions WHERE user_id = ?1", params![user.id])
        })?;
        Ok(user)
    }

    fn other_active_admins(&self, user: &User) -> Result<i64, AccountError> {
        self.read("counting admins", |tx| {
            tx.query_opt(
                "SELECT count(*) FROM users WHERE admin = 1 AND disabled = 0 AND id <> ?1",
                params![user.id],
                |r| r.get::<i64>(0),
            )
        })
        .map(Option::unwrap_or_default)
    }

    /// Disables (or enables) a user; disabling ends their sessions.
    pub fn set_disabled(&self, name: &str, disabled: bool) -> Result<User, AccountError> {
        let user = self.get(name)?;
        if disabled && user.admin && !user.disabled && self.other_active_admins(&user)? == 0 {
            return Err(AccountError::LastAdmin(user.name));
        }
        self.write("disabling a user", |tx| {
            tx.execute(
                "UPDATE users SET disabled = ?1 WHERE id = ?2",
                params![disabled, user.id],
            )?;
            if disabled {
                tx.execute("DELETE FROM sessions WHERE user_id = ?1", params![user.id])?;
            }
            Ok(())
        })?;
        self.get(name)
    }

    /// Makes a user admin or not (the last admin stays one).
    pub fn set_admin(&self, name: &str, admin: bool) -> Result<User, AccountError> {
        let user = self.get(name)?;
        if !admin && user.admin && self.other_active_admins(&user)? == 0 {
            return Err(AccountError::LastAdmin(user.name));
        }
        self.write("changing a user", |tx| {
            tx.execute(
                "UPDATE users SET admin = ?1 WHERE id = ?2",
                params![admin, user.id],
            )
        })?;
        self.get(name)
    }

    /// Removes a user and their sessions; their library folder goes too unless `keep_data`.
    /// Returns the user as they were.
    pub fn remove(&self, name: &str, keep_data: bool) -> Result<User, AccountError> {
        let user = self.get(name)?;
        if user.admin && !user.disabled && self.other_active_admins(&user)? == 0 {
            return Err(AccountError::LastAdmin(user.name));
        }
        if user.library == ROOT_LIBRARY && !keep_data {
            return Err(AccountError::OwnsRootLibrary(user.name));
        }
        self.write("removing a user", |tx| {
            tx.execute("DELETE FROM sessions WHERE user_id = ?1", params![user.id])?;
            tx.execute("DELETE FROM users WHERE id = ?1", params![user.id])
        })?;
        if !keep_data {
            let dir = self.library_dir(&user);
            match std::fs::remove_dir_all(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(AccountError::Io {
                        context: format!("deleting {}", dir.display()),
                        source,
                    });
                }
            }
        }
        Ok(user)
    }

    /// Checks a login. Throttled attempts are refused before any password is hashed; a wrong
    /// name costs as long as a wrong password; a disabled account says so only to someone who
    /// knows its password.
    pub fn login(
        &self,
        name: &str,
        password: &str,
        address: IpAddr,
    ) -> Result<Login, AccountError> {
        let key = name.trim().to_ascii_lowercase();
        let now = Instant::now();
        self.throttle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .admit(&key, address, now)?;
        let found: Option<(User, String)> = match UserName::parse(&key) {
            Ok(n) => self.read("checking a login", |tx| {
                tx.query_opt(
                    &format!("SELECT {USER_COLUMNS}, password FROM users WHERE name = ?1"),
                    params![n.as_str()],
                    |r| Ok((user_of(r)?, r.get::<String>(6)?)),
                )
            })?,
            Err(_) => None,
        };
        let ok = match &found {
            Some((_, hash)) => password::verify(password, hash),
            None => {
                let _ = password::verify(password, password::decoy());
                false
            }
        };
        let mut throttle = self.throttle.lock().unwrap_or_else(|p| p.into_inner());
        let Some((user, _)) = found.filter(|_| ok) else {
            throttle.failed(&key, address, now);
            return Err(AccountError::WrongCredentials);
        };
        throttle.succeeded(&key);
        drop(throttle);
        if user.disabled {
            return Err(AccountError::Disabled);
        }
        let token = SessionToken::new();
        let at = unix_now();
        self.write("opening a session", |tx| {
            tx.execute(
                "INSERT INTO sessions (digest, user_id, created_at, last_seen) VALUES (?1, ?2, ?3, ?3)",
                params![token.digest(), user.id, at],
            )
        })?;
        Ok(Login { user, token })
    }

    /// The user of a session token, when the session is live (not idle or too old, the user
    /// enabled). Touches the session at most once a minute.
    pub fn session(&self, token: &SessionToken) -> Result<Option<User>, AccountError> {
        let now = unix_now();
        let row: Option<(User, i64, i64)> = self.read("reading a session", |tx| {
            tx.query_opt(
                "SELECT u.id, u.name, u.admin, u.disabled, u.created_at, u.library, s.created_at, s.last_seen \
                 FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.digest = ?1",
                params![token.digest()],
                |r| Ok((user_of(r)?, r.get(6)?, r.get(7)?)),
            )
        })?;
        let Some((user, created, seen)) = row else {
            return Ok(None);
        };
        let expired = now - seen > IDLE_EXPIRY.as_secs() as i64
            || now - created > ABSOLUTE_EXPIRY.as_secs() as i64;
        if expired || user.disabled {
            self.write("ending a session", |tx| {
                tx.execute(
                    "DELETE FROM sessions WHERE digest = ?1",
                    params![token.digest()],
                )
            })?;
            return Ok(None);
        }
        if now - seen >= TOUCH_EVERY.as_secs() as i64 {
            self.write("touching a session", |tx| {
                tx.execute(
                    "UPDATE sessions SET last_seen = ?1 WHERE digest = ?2",
                    params![now, token.digest()],
                )
            })?;
        }
        Ok(Some(user))
    }

    /// Ends one session.
    pub fn logout(&self, token: &SessionToken) -> Result<(), AccountError> {
        self.write("ending a session", |tx| {
            tx.execute(
                "DELETE FROM sessions WHERE digest = ?1",
                params![token.digest()],
            )
        })?;
        Ok(())
    }

    /// Ends every session of a user; returns how many there were.
    pub fn logout_everywhere(&self, user: i64) -> Result<usize, AccountError> {
        self.write("ending sessions", |tx| {
            tx.execute("DELETE FROM sessions WHERE user_id = ?1", params![user])
        })
    }

    /// Bytes a user's library takes: on disk (the data folder's own library counts without the
    /// other users' folders and the registry), plus, with the libraries in PostgreSQL, its
    /// schema's tables — rows and files alike.
    pub fn usage(&self, user: &User) -> u64 {
        let in_database = self
            .registry
            .pg_pool()
            .and_then(|pool| pool.schema_bytes(&self.library_schema(user)).ok())
            .unwrap_or(0);
        in_database + self.usage_on_disk(user)
    }

    fn usage_on_disk(&self, user: &User) -> u64 {
        let dir = self.library_dir(user);
        let skip: Vec<PathBuf> = if user.library == ROOT_LIBRARY {
            vec![
                self.root.join("users"),
                self.root.join(SHARED_LIBRARY),
                self.root.join(ACCOUNTS_FILE),
                self.root.join(format!("{ACCOUNTS_FILE}-wal")),
                self.root.join(format!("{ACCOUNTS_FILE}-shm")),
            ]
        } else {
            Vec::new()
        };
        dir_size(&dir, &skip)
    }

    /// Writes a consistent copy of the registry to `path` (SQLite `VACUUM INTO`: users and their
    /// password hashes; sessions are left out of what a restore uses — everyone logs in again).
    pub fn copy_registry_to(&self, path: &Path) -> Result<(), AccountError> {
        let target = path.to_string_lossy().into_owned();
        let copied = self.registry.with_sqlite(|conn| {
            conn.execute("VACUUM INTO ?1", [&target])
                .map(drop)
                .map_err(|e| tavo_store::StoreError::Database(e.to_string()))
        });
        match copied {
            Some(done) => done.map_err(AccountError::db("copying the accounts registry")),
            // On PostgreSQL: the users into a new SQLite registry, the same file either way.
            None => {
                let _ = std::fs::remove_file(path);
                let copy = Registry::open_sqlite(path, &[SCHEMA])
                    .map_err(AccountError::db("creating the registry copy"))?;
                let copy = Accounts {
                    root: self.root.clone(),
                    registry: copy,
                    throttle: Mutex::default(),
                };
                self.copy_users_into(&copy).map(drop)
            }
        }
    }

    /// Installs a registry copy made by [`Accounts::copy_registry_to`] as the data folder's
    /// registry and opens it. Refuses when the folder has one already, unless `replace`. Every
    /// session of the copy is ended.
    pub fn restore_registry(root: &Path, from: &Path, replace: bool) -> Result<Self, AccountError> {
        let file = root.join(ACCOUNTS_FILE);
        if file.exists() && !replace {
            return Err(AccountError::Io {
                context: format!(
                    "{} has accounts already; restoring replaces them (pass --yes)",
                    root.display()
                ),
                source: std::io::Error::from(std::io::ErrorKind::AlreadyExists),
            });
        }
        std::fs::create_dir_all(root).map_err(|source| AccountError::Io {
            context: format!("creating {}", root.display()),
            source,
        })?;
        for suffix in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(root.join(format!("{ACCOUNTS_FILE}{suffix}")));
        }
        std::fs::copy(from, &file).map_err(|source| AccountError::Io {
            context: format!("copying {}", from.display()),
            source,
        })?;
        let accounts = Self::open(root)?;
        accounts.write("ending the copied sessions", |tx| {
            tx.execute("DELETE FROM sessions", params![])
        })?;
        Ok(accounts)
    }

    /// Makes a session's times as if it were `idle` seconds idle and `age` seconds old (tests
    /// of expiry, which cannot wait a week).
    #[doc(hidden)]
    pub fn age_session(
        &self,
        token: &SessionToken,
        age: i64,
        idle: i64,
    ) -> Result<(), AccountError> {
        let now = unix_now();
        self.write("ageing a session", |tx| {
            tx.execute(
                "UPDATE sessions SET created_at = ?1, last_seen = ?2 WHERE digest = ?3",
                params![now - age, now - idle, token.digest()],
            )
        })?;
        Ok(())
    }
}

fn dir_size(dir: &Path, skip: &[PathBuf]) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| !skip.contains(&e.path()))
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path(), skip),
            Ok(_) => e.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const HERE: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

    fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
        r.unwrap_or_else(|e| panic!("{e}"))
    }

    /// Runs `test` on a SQLite registry, and on a PostgreSQL one when `TAVO_TEST_POSTGRES`
    /// names a server.
    fn on_both(test: impl Fn(&Path, &Accounts)) {
        let dir = ok(tempfile::tempdir());
        test(dir.path(), &ok(Accounts::open(dir.path())));
        if let Some(url) = tavo_testkit::library::fresh_database() {
            let dir = ok(tempfile::tempdir());
            let pool = ok(tavo_store::PgPool::connect(&url));
            let a = ok(Accounts::open_postgres(dir.path(), pool));
            assert!(a.database_pool().is_some());
            test(dir.path(), &a);
        }
    }

    #[test]
    fn the_first_admin_owns_the_data_folders_library_and_others_get_their_own() {
        on_both(first_admin_owns_the_data_folder);
    }

    #[test]
    fn sessions_start_at_login_end_at_logout_expiry_password_change_and_disable() {
        on_both(sessions_end_as_they_should);
    }

    #[test]
    fn a_folders_users_move_into_postgresql_at_the_first_open() {
        let Some(url) = tavo_testkit::library::fresh_database() else {
            return;
        };
        let dir = ok(tempfile::tempdir());
        let file = ok(Accounts::open(dir.path()));
        let ann = ok(file.add("ann", "password-a", true));
        ok(file.add("bob", "password-b", false));
        let pool = ok(tavo_store::PgPool::connect(&url));
        let db = ok(Accounts::open_postgres(dir.path(), pool));
        assert_eq!(ok(db.list()), ok(file.list()));
        assert!(
            db.login("ann", "password-a", HERE).is_ok(),
            "the hash came along"
        );
        // Ids go on after the copied ones.
        let cid = ok(db.add("cid", "password-c", false));
        assert!(cid.id > ann.id + 1, "{cid:?}");
        // The quota counts a library's rows and files in the database.
        let empty = db.usage(&cid);
        let pool = db
            .database_pool()
            .unwrap_or_else(|| panic!("on PostgreSQL"));
        let library = ok(tavo_store::Store::open_postgres(
            pool,
            &db.library_schema(&cid),
            db.library_dir(&cid),
        ));
        // Bytes that do not compress (PostgreSQL compresses large values).
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let noise: Vec<u8> = (0..2 << 20)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        ok(library
            .files()
            .save(tavo_store::FileScope::Global, "big.bin", &noise));
        let full = db.usage(&cid);
        assert!(full >= empty + (2 << 20), "{empty} → {full}");
        // And back into a file, the same users.
        let copy = dir.path().join("copy.sqlite");
        ok(db.copy_registry_to(&copy));
        let back_dir = ok(tempfile::tempdir());
        let back = ok(Accounts::restore_registry(back_dir.path(), &copy, false));
        assert_eq!(ok(back.list()), ok(db.list()));
    }

    fn first_admin_owns_the_data_folder(dir: &Path, a: &Accounts) {
        let bob = ok(a.add("Bob", "password-b", false));
        let ann = ok(a.add("ann", "password-a", true));
        let cid = ok(a.add("cid", "password-c", true));
        assert_eq!(bob.name, "bob");
        assert_eq!(a.library_dir(&ann), dir);
        assert_eq!(a.library_dir(&bob), dir.join(format!("users/{}", bob.id)));
        assert_eq!(cid.library, format!("users/{}", cid.id));
        assert!(matches!(
            a.add("ANN", "password-x", false),
            Err(AccountError::Exists(_))
        ));
        assert!(matches!(
            a.add("../x", "password-x", false),
            Err(AccountError::BadName(_))
        ));
        assert!(matches!(
            a.remove("ann", false),
            Err(AccountError::OwnsRootLibrary(_))
        ));
        ok(a.remove("bob", false));
        assert!(!dir.join(format!("users/{}", bob.id)).exists());
    }

    fn sessions_end_as_they_should(_: &Path, a: &Accounts) {
        ok(a.add("ann", "password-a", true));
        ok(a.add("bob", "password-b", false));
        assert!(matches!(
            a.login("ann", "wrong-pass", HERE),
            Err(AccountError::WrongCredentials)
        ));
        assert!(matches!(
            a.login("nobody", "password-a", HERE),
            Err(AccountError::WrongCredentials)
        ));
        let one = ok(a.login("ANN", "password-a", HERE));
        let two = ok(a.login("ann", "password-a", HERE));
        assert_ne!(one.token, two.token, "each login a new session");
        assert_eq!(
            ok(a.session(&one.token)).map(|u| u.name),
            Some("ann".into())
        );
        ok(a.logout(&one.token));
        assert_eq!(ok(a.session(&one.token)), None);
        assert!(ok(a.session(&two.token)).is_some());
        ok(a.age_session(&two.token, 10, IDLE_EXPIRY.as_secs() as i64 + 1));
        assert_eq!(ok(a.session(&two.token)), None, "idle expiry");
        let three = ok(a.login("ann", "password-a", HERE));
        ok(a.age_session(&three.token, ABSOLUTE_EXPIRY.as_secs() as i64 + 1, 0));
        assert_eq!(ok(a.session(&three.token)), None, "absolute expiry");

        let b = ok(a.login("bob", "password-b", HERE));
        ok(a.set_password("bob", "password-b2"));
        assert_eq!(
            ok(a.session(&b.token)),
            None,
            "a new password ends sessions"
        );
        let b = ok(a.login("bob", "password-b2", HERE));
        ok(a.set_disabled("bob", true));
        assert_eq!(ok(a.session(&b.token)), None);
        assert!(matches!(
            a.login("bob", "password-b2", HERE),
            Err(AccountError::Disabled)
        ));
        assert!(matches!(
            a.set_disabled("ann", true),
            Err(AccountError::LastAdmin(_))
        ));
        assert_eq!(ok(a.session(&SessionToken::from_cookie("forged"))), None);
    }
}
