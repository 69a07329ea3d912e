//! The integration tests of `tavo-store`, linked into one binary: each module was a file of
//! its own under tests/ (and a binary of its own, linking the whole stack again).
//! New tests go into a module here; helpers shared by several modules live in `support`.

mod support;

mod assets;
mod backup;
mod card_files;
mod files;
mod import;
mod messages;
mod open;
mod variables;
