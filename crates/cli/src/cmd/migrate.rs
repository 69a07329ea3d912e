//! `tavo [--user NAME] migrate --from DIR|URL --to DIR|URL [--yes]`: copies libraries between
//! SQLite folders and PostgreSQL databases, losslessly (rows, files, plugins and API keys; see
//! `tavo_tools::backup::migrate_library`).
//!
//! Which libraries: with accounts (an `accounts.sqlite` in the folder side, else in the data
//! folder), every user's library and the shared library — or only `--user`'s; without, the one
//! library. A folder side keeps each library where `tavo serve` looks for it (the folder
//! itself, `users/<id>/`, `shared/`); a database side keeps each in its schema (`tavo`,
//! `user_<id>`, `shared`), with its files in the data folder's matching folder (`--data-dir`),
//! which is what `tavo serve --database URL` then serves.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use tavo_accounts::Accounts;

use crate::context::{Context, redact};

/// `tavo migrate` flags.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Where the libraries are now: a data folder (SQLite) or a postgres:// URL.
    #[arg(long, value_name = "DIR|URL")]
    from: String,
    /// Where to copy them: a data folder (SQLite) or a postgres:// URL.
    #[arg(long, value_name = "DIR|URL")]
    to: String,
    /// Replace target libraries that are not empty.
    #[arg(long, short = 'y')]
    yes: bool,
}

/// One side of a migration.
#[derive(Debug, Clone)]
enum Side {
    Folder(PathBuf),
    Database(String),
}

impl Side {
    fn parse(s: &str) -> Side {
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            Side::Database(s.to_owned())
        } else {
            Side::Folder(PathBuf::from(s))
        }
    }

    fn describe(&self) -> String {
        match self {
            Side::Folder(p) => p.display().to_string(),
            Side::Database(u) => redact(u),
        }
    }
}

/// A library to copy: where it lives relative to a data folder, and its schema.
struct Library {
    label: String,
    folder: String,
    schema: String,
}

fn libraries(
    registry: Option<&Accounts>,
    only: Option<&str>,
    shared_exists: bool,
) -> anyhow::Result<Vec<Library>> {
    let root = || Library {
        label: "the library".into(),
        folder: ".".into(),
        schema: tavo_accounts::ROOT_SCHEMA.into(),
    };
    let Some(accounts) = registry else {
        anyhow::ensure!(
            only.is_none(),
            "--user names a user, but neither side has accounts"
        );
        return Ok(vec![root()]);
    };
    let mut out = Vec::new();
    for user in accounts.list()? {
        if only.is_some_and(|n| !n.eq_ignore_ascii_case(&user.name)) {
            continue;
        }
        out.push(Library {
            label: user.name.clone(),
            folder: user.library.clone(),
            schema: accounts.library_schema(&user),
        });
    }
    anyhow::ensure!(!out.is_empty(), "no user is called {}", only.unwrap_or(""));
    if only.is_none() && shared_exists {
        out.push(Library {
            label: "the shared library".into(),
            folder: tavo_accounts::SHARED_LIBRARY.into(),
            schema: tavo_accounts::SHARED_LIBRARY.into(),
        });
    }
    Ok(out)
}

/// `base`'s folder of `library` (`.`, the root library, is `base` itself: `create_dir_all`
/// refuses a path ending in `.` whose parent does not exist yet).
fn under(base: &Path, library: &Library) -> PathBuf {
    if library.folder == "." {
        base.to_path_buf()
    } else {
        base.join(&library.folder)
    }
}

fn open(
    ctx: &Context,
    side: &Side,
    home: &Path,
    library: &Library,
) -> anyhow::Result<tavo_store::Store> {
    let dir = under(home, library);
    match side {
        Side::Folder(folder) => tavo_store::Store::open(under(folder, library))
            .with_context(|| format!("opening {} in {}", library.label, folder.display())),
        Side::Database(url) => ctx
            .clone()
            .with_database(Some(url.clone()))
            .open_library(&dir, &library.schema),
    }
}

/// Runs `tavo migrate`; `user` is the global `--user` (only that user's library).
pub fn run(args: MigrateArgs, ctx: &Context, user: Option<&str>) -> anyhow::Result<ExitCode> {
    let (from, to) = (Side::parse(&args.from), Side::parse(&args.to));
    // The registry: a folder side's file, else the data folder's; with a database source, the
    // database's (where `tavo serve --database --accounts` keeps it).
    let folders: Vec<PathBuf> = [&from, &to]
        .into_iter()
        .filter_map(|s| match s {
            Side::Folder(p) => Some(p.clone()),
            Side::Database(_) => None,
        })
        .chain(std::iter::once(ctx.root().to_path_buf()))
        .collect();
    let registry = match &from {
        Side::Database(url) => {
            let on_db = ctx.clone().with_database(Some(url.clone()));
            if on_db.accounts_exist()? {
                Some(on_db.open_accounts()?)
            } else {
                None
            }
        }
        Side::Folder(_) => folders
            .iter()
            .find(|f| Accounts::exists(f))
            .map(|home| {
                Accounts::open(home)
                    .with_context(|| format!("opening the accounts of {}", home.display()))
            })
            .transpose()?,
    };
    // Where a database side's files live: the data folder (what `tavo serve --database`
    // serves with).
    let home = ctx.root().to_path_buf();
    let shared_exists = match &from {
        Side::Folder(f) => f
            .join(tavo_accounts::SHARED_LIBRARY)
            .join(tavo_store::DATABASE_FILE)
            .is_file(),
        Side::Database(_) => true,
    };
    let list = libraries(registry.as_ref(), user, shared_exists)?;
    eprintln!(
        "migrating {} librar{} from {} to {}",
        list.len(),
        if list.len() == 1 { "y" } else { "ies" },
        from.describe(),
        to.describe()
    );
    for library in &list {
        let source = open(ctx, &from, &home, library)?;
        let target = open(ctx, &to, &home, library)?;
        let summary = tavo_tools::backup::migrate_library(&source, &target, args.yes)
            .with_context(|| format!("migrating {}", library.label))?;
        let rows: u64 = summary
            .tables
            .values()
            .filter_map(serde_json::Value::as_u64)
            .sum();
        println!(
            "{}: {rows} rows, {} files, {} keys",
            library.label, summary.files, summary.keys
        );
        for w in &summary.warnings {
            eprintln!("  warning: {w}");
        }
    }
    // The users go with their libraries (all of them only: one user's migration leaves the
    // registries as they are).
    if let (Some(registry), None) = (&registry, user) {
        let target = match &to {
            Side::Database(url) => Some(
                ctx.clone()
                    .with_database(Some(url.clone()))
                    .open_accounts()?,
            ),
            Side::Folder(folder) if !Accounts::exists(folder) => Some(Accounts::open(folder)?),
            Side::Folder(_) => None,
        };
        if let Some(target) = target {
            let n = registry.copy_users_into(&target)?;
            println!("accounts: {n} users");
        }
    }
    Ok(ExitCode::SUCCESS)
}
