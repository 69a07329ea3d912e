//! The integration tests of `tavo-tools`, linked into one binary: each module was a file of
//! its own under tests/ (and a binary of its own, linking the whole stack again).
//! New tests go into a module here; helpers shared by several modules live in `support`.

mod support;

mod backup;
mod bubble_contracts;
mod chats_assets;
mod dispatch;
mod files;
mod library_ops;
mod messages;
mod pauses_and_themes;
mod proptests;
mod registry;
mod round_trips;
mod st_import;
