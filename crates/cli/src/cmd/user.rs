//! `tavo user add|list|passwd|disable|enable|admin|remove|backup|restore`: the accounts of a
//! data folder served with `tavo serve --accounts` (the same registry `/api/admin/users`
//! manages). `backup DIR` writes the whole server: the registry, one `.tavobackup` per user and
//! the shared library's;
//! `restore DIR` puts it back into a data folder (new, or with `--yes`).
//!
//! Passwords are never arguments (they would land in the shell history and `ps`): typed twice
//! without echo at a terminal, else read as the first line of stdin (`printf '%s\n' "$PW" |
//! tavo user add ann`).

use std::io::{BufRead as _, IsTerminal as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use tavo_accounts::{Accounts, User};

use crate::context::Context;

/// Manage accounts.
#[derive(Debug, Args)]
pub struct UserArgs {
    #[command(subcommand)]
    pub command: UserCommand,
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Add a user (the first admin gets the data folder's existing library).
    Add {
        /// Login name: 1–32 of a-z 0-9 _ - . (kept in lower case).
        name: String,
        /// May manage users (in the app's admin screen and /api/admin/users).
        #[arg(long)]
        admin: bool,
    },
    /// Every user: NAME, ADMIN, DISABLED, LIBRARY, USAGE (bytes).
    List {
        /// Print `[{id, name, admin, disabled, createdAt, library, usageBytes}]`.
        #[arg(long)]
        json: bool,
    },
    /// Change a user's password (their sessions end).
    Passwd {
        /// The user.
        name: String,
    },
    /// Stop a user from logging in (their sessions, event streams and replies end).
    Disable {
        /// The user.
        name: String,
    },
    /// Let a disabled user log in again.
    Enable {
        /// The user.
        name: String,
    },
    /// Make a user admin, or not with --off (the last admin stays one).
    Admin {
        /// The user.
        name: String,
        /// Take admin away.
        #[arg(long)]
        off: bool,
    },
    /// Back up the whole server into DIR: the accounts registry and one .tavobackup per user.
    Backup {
        /// The folder to write (created; must be empty or new).
        dir: PathBuf,
        /// Include the API keys, encrypted with the passphrase in --passphrase-file.
        #[arg(long, requires = "passphrase_file")]
        with_keys: bool,
        /// A file whose first line is the passphrase (with --with-keys).
        #[arg(long, value_name = "FILE")]
        passphrase_file: Option<PathBuf>,
    },
    /// Restore a whole-server backup made by `tavo user backup` into this data folder.
    Restore {
        /// The backup folder.
        dir: PathBuf,
        /// Replace accounts and libraries that exist here.
        #[arg(long, short = 'y')]
        yes: bool,
        /// The passphrase file of a backup made with --with-keys.
        #[arg(long, value_name = "FILE")]
        passphrase_file: Option<PathBuf>,
    },
    /// Remove a user and delete their library (files too) unless --keep-data.
    Remove {
        /// The user.
        name: String,
        /// Keep their library folder on disk.
        #[arg(long)]
        keep_data: bool,
    },
}

/// The password of a new user or a change: twice without echo at a terminal, else stdin's
/// first line.
fn read_password(name: &str) -> anyhow::Result<String> {
    if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password(format!("Password for {name}: "))
            .context("reading the password")?;
        let again = rpassword::prompt_password("Once more: ").context("reading the password")?;
        if first != again {
            anyhow::bail!("the two passwords differ; nothing changed");
        }
        Ok(first)
    } else {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .context("reading the password from stdin")?;
        Ok(line.trim_end_matches(['\n', '\r']).to_owned())
    }
}

fn describe(u: &User) -> String {
    let mut flags = Vec::new();
    if u.admin {
        flags.push("admin");
    }
    if u.disabled {
        flags.push("disabled");
    }
    if flags.is_empty() {
        u.name.clone()
    } else {
        format!("{} ({})", u.name, flags.join(", "))
    }
}

/// The registry's file in a whole-server backup folder.
const REGISTRY_FILE: &str = "accounts.sqlite";

/// The shared library in a whole-server backup folder (beside `libraries/`: a user may be
/// called `shared`).
const SHARED_FILE: &str = "shared-library.tavobackup";

/// A user's library in a whole-server backup folder.
fn library_file(dir: &Path, user: &User) -> PathBuf {
    dir.join("libraries")
        .join(format!("{}.{}", user.name, tavo_tools::backup::EXTENSION))
}

/// The passphrase: the file's first line.
fn passphrase(path: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the passphrase file {}", path.display()))?;
    let line = text.lines().next().unwrap_or_default().to_owned();
    anyhow::ensure!(
        !line.is_empty(),
        "the passphrase file {} is empty",
        path.display()
    );
    Ok(line)
}

/// `tavo user backup DIR`: the registry, then each library (a backup may run while the
/// server does, as `tavo backup` may).
fn backup_all(
    ctx: &Context,
    accounts: &Accounts,
    dir: &Path,
    passphrase_file: Option<&Path>,
) -> anyhow::Result<()> {
    if let Ok(mut entries) = std::fs::read_dir(dir)
        && entries.next().is_some()
    {
        anyhow::bail!("{} is not empty; name a new folder", dir.display());
    }
    std::fs::create_dir_all(dir.join("libraries"))
        .with_context(|| format!("creating {}", dir.display()))?;
    accounts.copy_registry_to(&dir.join(REGISTRY_FILE))?;
    let options = tavo_tools::backup::BackupOptions {
        passphrase: passphrase_file.map(passphrase).transpose()?,
    };
    for user in accounts.list()? {
        let store = ctx
            .open_library(
                &accounts.library_dir(&user),
                &accounts.library_schema(&user),
            )
            .with_context(|| format!("opening the library of {}", user.name))?;
        let summary =
            tavo_tools::backup::create_backup(&store, &library_file(dir, &user), &options)
                .with_context(|| format!("backing up the library of {}", user.name))?;
        eprintln!("{}: {} bytes", user.name, summary.bytes);
    }
    if ctx.database().is_some()
        || accounts
            .shared_dir()
            .join(tavo_store::DATABASE_FILE)
            .is_file()
    {
        let store = ctx
            .open_library(&accounts.shared_dir(), tavo_accounts::SHARED_LIBRARY)
            .context("opening the shared library")?;
        let summary = tavo_tools::backup::create_backup(&store, &dir.join(SHARED_FILE), &options)
            .context("backing up the shared library")?;
        eprintln!("shared library: {} bytes", summary.bytes);
    }
    Ok(())
}

/// `tavo user restore DIR`: the registry, then each user's library into its folder.
fn restore_all(
    ctx: &Context,
    dir: &Path,
    yes: bool,
    passphrase_file: Option<&Path>,
) -> anyhow::Result<Accounts> {
    let accounts = match ctx.database() {
        None => Accounts::restore_registry(ctx.root(), &dir.join(REGISTRY_FILE), yes)?,
        // The registry goes into the database: the backup's users replace the database's.
        Some(_) => {
            let target = ctx.open_accounts()?;
            anyhow::ensure!(
                yes || target.is_empty()?,
                "the database has accounts already; restoring replaces them (pass --yes)"
            );
            anyhow::ensure!(
                dir.join(REGISTRY_FILE).is_file(),
                "{} holds no {REGISTRY_FILE}",
                dir.display()
            );
            Accounts::open(dir)?.copy_users_into(&target)?;
            target
        }
    };
    let options = tavo_tools::backup::RestoreOptions {
        yes,
        passphrase: passphrase_file.map(passphrase).transpose()?,
    };
    for user in accounts.list()? {
        let file = library_file(dir, &user);
        if !file.is_file() {
            eprintln!(
                "warning: {} has no library in the backup; it starts empty",
                user.name
            );
            continue;
        }
        let library = accounts.library_dir(&user);
        std::fs::create_dir_all(&library)
            .with_context(|| format!("creating {}", library.display()))?;
        let store = ctx
            .open_library(&library, &accounts.library_schema(&user))
            .with_context(|| format!("opening the library of {}", user.name))?;
        tavo_tools::backup::restore_backup(&store, &file, &options)
            .with_context(|| format!("restoring the library of {}", user.name))?;
        eprintln!("{}: restored", user.name);
    }
    let file = dir.join(SHARED_FILE);
    if file.is_file() {
        let library = accounts.shared_dir();
        std::fs::create_dir_all(&library)
            .with_context(|| format!("creating {}", library.display()))?;
        let store = ctx
            .open_library(&library, tavo_accounts::SHARED_LIBRARY)
            .context("opening the shared library")?;
        tavo_tools::backup::restore_backup(&store, &file, &options)
            .context("restoring the shared library")?;
        eprintln!("shared library: restored");
    }
    Ok(accounts)
}

pub fn run(args: UserArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    if let UserCommand::Restore {
        dir,
        yes,
        passphrase_file,
    } = &args.command
    {
        let accounts = restore_all(ctx, dir, *yes, passphrase_file.as_deref())?;
        println!(
            "restored {} users into {}",
            accounts.list()?.len(),
            ctx.root().display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let accounts = ctx.open_accounts()?;
    match args.command {
        UserCommand::Add { name, admin } => {
            let password = read_password(&name)?;
            let user = accounts.add(&name, &password, admin)?;
            println!(
                "added {}; library {}",
                describe(&user),
                accounts.library_dir(&user).display()
            );
        }
        UserCommand::List { json } => {
            let users = accounts.list()?;
            if json {
                let rows: Vec<serde_json::Value> = users
                    .iter()
                    .map(|u| {
                        let mut v = serde_json::to_value(u).unwrap_or_default();
                        v["usageBytes"] = serde_json::json!(accounts.usage(u));
                        v
                    })
                    .collect();
                println!("{}", serde_json::to_string(&rows)?);
            } else {
                for u in &users {
                    println!(
                        "{}\t{}\t{}\t{}\t{}",
                        u.name,
                        if u.admin { "admin" } else { "-" },
                        if u.disabled { "disabled" } else { "-" },
                        u.library,
                        accounts.usage(u)
                    );
                }
            }
        }
        UserCommand::Passwd { name } => {
            accounts.get(&name)?;
            let password = read_password(&name)?;
            let user = accounts.set_password(&name, &password)?;
            println!(
                "changed the password of {}; their sessions ended",
                user.name
            );
        }
        UserCommand::Disable { name } => {
            let user = accounts.set_disabled(&name, true)?;
            println!("disabled {}; their sessions ended", user.name);
        }
        UserCommand::Enable { name } => {
            let user = accounts.set_disabled(&name, false)?;
            println!("enabled {}", user.name);
        }
        UserCommand::Admin { name, off } => {
            let user = accounts.set_admin(&name, !off)?;
            println!("{}", describe(&user));
        }
        UserCommand::Backup {
            dir,
            with_keys,
            passphrase_file,
        } => {
            let file = passphrase_file.filter(|_| with_keys);
            backup_all(ctx, &accounts, &dir, file.as_deref())?;
            println!("{}", dir.display());
        }
        UserCommand::Restore { .. } => {}
        UserCommand::Remove { name, keep_data } => {
            let user = accounts.remove(&name, keep_data)?;
            if let (Some(url), false) = (ctx.database(), keep_data) {
                // Their rows live in PostgreSQL: their schema goes too.
                tavo_tools::backup::delete_postgres_library(
                    &tavo_store::PgPool::connect(url)?,
                    &accounts.library_schema(&user),
                )?;
            }
            if keep_data {
                println!(
                    "removed {}; their library stays in {}",
                    user.name,
                    accounts.library_dir(&user).display()
                );
            } else {
                println!("removed {} and their library", user.name);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
