//! `tavo persona create|update`: the user's personas (seed 002 §🎭 用户身份). The writes are
//! [`tavo_tools::assets`], the ones `tavo_persona_create/update` and `POST/PUT
//! /api/library/persona` make: name and description are required on create, and the error names
//! the field (`persona.description`).

use std::process::ExitCode;

use anyhow::anyhow;
use clap::{Args, Subcommand};
use serde_json::{Map, Value, json};
use tavo_model::AssetKind;
use tavo_tools::ToolError;
use tavo_tools::assets::{create_asset, update_asset};

use crate::context::Context;
use crate::library::open_store;

/// Create or change personas (list them with `tavo list personas`, show one with `tavo show persona ID`).
#[derive(Debug, Args)]
pub struct PersonaArgs {
    #[command(subcommand)]
    command: PersonaCommand,
}

#[derive(Debug, Subcommand)]
enum PersonaCommand {
    /// Create a persona; prints its id.
    Create {
        /// Name (required).
        #[arg(long)]
        name: String,
        /// Description, as `{{persona}}` shows it (required).
        #[arg(long)]
        description: String,
        #[command(flatten)]
        fields: Fields,
    },
    /// Change a persona; only the flags given are changed. Prints its id.
    Update {
        /// The persona's id.
        id: i64,
        /// New name.
        #[arg(long)]
        name: Option<String>,
        /// New description.
        #[arg(long)]
        description: Option<String>,
        #[command(flatten)]
        fields: Fields,
    },
}

#[derive(Debug, Args)]
struct Fields {
    /// Avatar image URL or path.
    #[arg(long, value_name = "URL")]
    avatar: Option<String>,
    /// Make this the default persona (the others stop being the default).
    #[arg(long)]
    default: bool,
    /// Position in the persona list.
    #[arg(long, value_name = "N")]
    sort_index: Option<i64>,
}

/// A refusal as the other doors word it: `code: message`.
fn refused(e: ToolError) -> anyhow::Error {
    anyhow!("{}: {}", e.code, e.message)
}

fn object(name: Option<String>, description: Option<String>, f: &Fields) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(n) = name {
        m.insert("name".into(), json!(n));
    }
    if let Some(d) = description {
        m.insert("description".into(), json!(d));
    }
    if let Some(a) = &f.avatar {
        m.insert("avatar".into(), json!(a));
    }
    if f.default {
        m.insert("active".into(), json!(true));
    }
    if let Some(i) = f.sort_index {
        m.insert("sortIndex".into(), json!(i));
    }
    m
}

pub fn run(args: PersonaArgs, ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = open_store(ctx)?;
    let id = match args.command {
        PersonaCommand::Create {
            name,
            description,
            fields,
        } => create_asset(
            &store,
            AssetKind::Persona,
            object(Some(name), Some(description), &fields),
        )
        .map_err(refused)?,
        PersonaCommand::Update {
            id,
            name,
            description,
            fields,
        } => {
            let mut patch = object(name, description, &fields);
            patch.insert("id".into(), json!(id));
            update_asset(&store, AssetKind::Persona, patch).map_err(refused)?;
            id
        }
    };
    println!("{id}");
    Ok(ExitCode::SUCCESS)
}
