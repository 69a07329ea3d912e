//! The integration tests of `tavo`, linked into one binary: each module was a file of
//! its own under tests/ (and a binary of its own, linking the whole stack again).
//! New tests go into a module here; helpers shared by several modules live in `support`.

mod support;

mod accounts_cli;
mod approval_doors;
mod audit_cli;
mod connection_cli;
mod doors;
mod doors_library;
mod doors_variables;
mod ejs_cli;
mod group_cli;
mod image_cli;
mod import_doors;
mod library;
mod memory_backup_cli;
mod message_cli;
mod migrate_cli;
mod pipe_cli;
mod preview_doors;
mod prompt_cli;
mod replicas;
mod reply_cli;
mod send_doors;
mod st_import_cli;
mod tool_cli;
mod tts_cli;
mod tts_doors;
