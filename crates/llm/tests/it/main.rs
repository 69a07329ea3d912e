//! The integration tests of `tavo-llm`, linked into one binary: each module was a file of
//! its own under tests/ (and a binary of its own, linking the whole stack again).
//! New tests go into a module here; helpers shared by several modules live in `support`.

mod support;

mod fixtures;
mod image_fixtures;
mod interleaved_reasoning;
mod mock_e2e;
mod requests;
mod speech_fixtures;
