//! `tavo user add|list|passwd|disable|enable|admin|remove`: the accounts of a data folder
//! served with `tavo serve --accounts` (the same registry `/api/admin/users` manages).
//!
//! Passwords are never arguments (they would land in the shell history and `ps`): typed twice
//! without echo at a terminal, else read as the first line of stdin (`printf '%s\n' "$PW" |
//! tavo user add ann`).

use std::io::{BufRead as _, IsTerminal as _};
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

pub fn run(args: UserArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let accounts = Accounts::open(ctx.root())
        .with_context(|| format!("opening the accounts of {}", ctx.root().display()))?;
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
        UserCommand::Remove { name, keep_data } => {
            let user = accounts.remove(&name, keep_data)?;
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
