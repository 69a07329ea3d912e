//! The integration tests of `tavo-prompt`, linked into one binary: each module was a file of
//! its own under tests/ (and a binary of its own, linking the whole stack again).
//! New tests go into a module here.

mod ejs_cases;
mod golden;
mod loader;
mod speech_props;
mod token_counts;
