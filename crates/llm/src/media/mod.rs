//! Media providers: image generation and speech (Tavo §14), each with its own connection book.
//!
//! [`book`] is the generic connection book both share (one settings JSON value per kind:
//! `image.connections`, `tts.connections`), generic over a platform enum ([`book::Platform`]).
//! `image` holds one codec per image platform, `speech` one per voice platform; [`http`] is
//! the exchange both make (capped reads, status mapping, what a failure means).

pub mod book;
pub mod http;
pub mod image;
pub mod speech;

pub use book::{
    KeyChange, MediaBook, MediaBookError, MediaConnection, MediaPatch, Platform, mask_key,
};
pub use http::{MediaApi, MediaFailure};
