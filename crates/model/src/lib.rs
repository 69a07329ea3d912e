//! Domain types of tavo: characters, personas, presets, lorebooks, regex groups, chats,
//! messages, memory and variables. No I/O.
//!
//! Serde names are the seed's (`/shared/seeds/002`, the TavoJS API) camelCase names and enum
//! strings exactly, so a value serializes to the TavoJS-shaped JSON. Every type that is read from
//! outside keeps unknown fields in a flattened `extra` map so that import → export is lossless.
#![forbid(unsafe_code)]

pub mod character;
pub mod chat;
pub mod common;
pub mod ids;
pub mod image;
pub mod kind;
pub mod lorebook;
pub mod message;
pub mod persona;
pub mod preset;
pub mod regex;
pub mod theme;
pub mod validation;
pub mod variables;

pub use character::{Character, CharacterImportResult, CharacterSummary};
pub use chat::{BackgroundSource, Chat, ChatBackground, ReplyMode};
pub use common::{Extra, NameMatch, Role, Summary};
pub use ids::{
    CharacterId, ChatId, LorebookId, MemoryId, MessageId, PersonaId, PresetId, RegexId, Revision,
};
pub use image::ImageType;
pub use kind::{AssetKind, UnknownKind};
pub use lorebook::{
    Lorebook, LorebookEntry, LorebookPosition, LorebookStrategy, SecondaryKeywordStrategy,
};
pub use message::{Memory, Message};
pub use persona::Persona;
pub use preset::{
    BUILTIN_ENTRIES, BasicPrompts, BuiltinEntry, Preset, PresetEntry, PresetEntryType,
    PresetInjectionPosition,
};
pub use regex::{RegexEntry, RegexGroup, RegexPlacement, RegexTiming, Substitution};
pub use validation::{FieldError, ValidationErrors};
pub use variables::{VariableScope, VariableScopeKind};
