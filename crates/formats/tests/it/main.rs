//! The integration tests of `tavo-formats`, linked into one binary: each module was a file of
//! its own under tests/ (and a binary of its own, linking the whole stack again).
//! New tests go into a module here.

mod charx_assets;
mod corpus;
mod edge_cases;
mod lossless;
mod mutation;
mod proptest_roundtrip;
mod st_settings_groups;
