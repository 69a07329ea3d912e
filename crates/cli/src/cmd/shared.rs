//! `tavo shared list|publish|remove`: the shared library of a server run with `--accounts`
//! (what `/api/shared` lists for every user and `/api/admin/shared` changes).
//!
//! `publish` takes the asset from the library the command works on — an admin's: the data
//! folder's own library when its owner is an admin, or `--user NAME`'s — and puts a copy in the
//! shared library; users copy it into their own libraries from the app.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use tavo_tools::shared_library::{self as shared, SharedKind};

use crate::context::Context;

/// The shared library.
#[derive(Debug, Args)]
pub struct SharedArgs {
    #[command(subcommand)]
    pub command: SharedCommand,
}

#[derive(Debug, Subcommand)]
pub enum SharedCommand {
    /// Everything published: KIND, ID, NAME, PUBLISHED BY, AT.
    List {
        /// Print `[{kind, id, name, publishedBy, publishedAt}]`.
        #[arg(long)]
        json: bool,
    },
    /// Publish asset ID of an admin's library (`--user NAME`, else the data folder's own).
    Publish {
        /// character, persona, preset, lorebook, regex or theme.
        kind: String,
        /// Its id in the admin's library.
        id: i64,
    },
    /// Take an item out of the shared library (users' copies stay theirs).
    Remove {
        /// character, persona, preset, lorebook, regex or theme.
        kind: String,
        /// Its id in the shared library (`tavo shared list`).
        id: i64,
    },
}

fn kind(s: &str) -> anyhow::Result<SharedKind> {
    s.parse::<SharedKind>()
        .map_err(|e| anyhow::anyhow!(e.message))
}

pub fn run(args: SharedArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        ctx.accounts_exist()?,
        "{} has no accounts: the shared library belongs to a server run with --accounts (`tavo user add NAME --admin` first)",
        ctx.root().display()
    );
    let accounts = ctx.open_accounts()?;
    let dir = accounts.shared_dir();
    let library = ctx
        .open_library(&dir, tavo_accounts::SHARED_LIBRARY)
        .context("opening the shared library")?;
    match args.command {
        SharedCommand::List { json } => {
            let items = shared::list(&library).map_err(|e| anyhow::anyhow!(e.message))?;
            if json {
                let rows: Vec<serde_json::Value> = items
                    .iter()
                    .map(|i| {
                        serde_json::json!({"kind": i.kind, "id": i.id, "name": i.name,
                                           "publishedBy": i.published_by, "publishedAt": i.published_at})
                    })
                    .collect();
                println!("{}", serde_json::to_string(&rows)?);
            } else {
                for i in &items {
                    println!(
                        "{}\t{}\t{}\t{}\t{}",
                        i.kind.as_str(),
                        i.id,
                        i.name,
                        i.published_by,
                        i.published_at
                    );
                }
            }
        }
        SharedCommand::Publish { kind: k, id } => {
            let k = kind(&k)?;
            let owner = accounts
                .list()?
                .into_iter()
                .find(|u| accounts.library_dir(u) == ctx.data_dir())
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "no user owns {}: name an admin with --user NAME",
                        ctx.data_dir().display()
                    )
                })?;
            anyhow::ensure!(
                owner.admin,
                "{} is not an admin: only an admin's library publishes (`tavo user admin {}` makes them one)",
                owner.name,
                owner.name
            );
            let from = crate::library::open_store(ctx)?;
            let item = shared::publish(&from, &library, k, id, &owner.name)
                .map_err(|e| anyhow::anyhow!(e.message))?;
            println!(
                "published {} {} \"{}\" as shared {} {}",
                k.as_str(),
                id,
                item.name,
                k.as_str(),
                item.id
            );
        }
        SharedCommand::Remove { kind: k, id } => {
            let k = kind(&k)?;
            let item =
                shared::unpublish(&library, k, id).map_err(|e| anyhow::anyhow!(e.message))?;
            println!("removed shared {} {} \"{}\"", k.as_str(), id, item.name);
        }
    }
    Ok(ExitCode::SUCCESS)
}
