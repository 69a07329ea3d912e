//! Import and export of the SillyTavern / CCv2 / CCv3 / charx / Tavo file formats, losslessly.
//! Pure: bytes in, model values and warnings out; model values in, bytes out. No database.
//!
//! Entry points: [`import_bytes`] (auto-detects the kind unless one is forced) and the
//! `export_*` functions. Fields a format carries that the model does not understand are kept in
//! the model's `extra` maps and written back, so import → export → import is a fixpoint.
#![forbid(unsafe_code)]

pub mod card;
pub mod charx;
pub mod chat;
pub mod dates;
pub mod error;
pub mod fields;
pub mod lorebook;
pub mod native;
pub mod plugin;
pub mod png;
pub mod preset;
pub mod regex;
pub mod st_group;
pub mod st_persona;
pub mod text;
pub mod value;

mod export;
mod import;

pub use chat::ImportedChat;
pub use dates::parse_st_date;
pub use error::{FormatError, Warning};
pub use export::{
    ExportFormat, export_character, export_character_with_assets, export_chat, export_lorebook,
    export_persona, export_preset, export_regex,
};
pub use import::{ImportOutcome, Imported, import_bytes};
