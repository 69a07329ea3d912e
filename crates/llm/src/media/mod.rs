//! Media providers: image generation and speech (Tavo §14), each with its own connection book.
//!
//! [`book`] is the generic connection book both share (one settings JSON value per kind:
//! `image.connections`, `tts.connections`), generic over a platform enum ([`book::Platform`]).
//! `image` holds one codec per image platform, `speech` one per voice platform.

pub mod book;
pub mod image;
pub mod speech;

pub use book::{
    KeyChange, MediaBook, MediaBookError, MediaConnection, MediaPatch, Platform, mask_key,
};
