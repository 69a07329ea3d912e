//! The integration tests of `tavo-server`, linked into one binary: each module was a file of
//! its own under tests/ (and a binary of its own, linking the whole stack again).
//! New tests go into a module here; helpers shared by several modules live in `support`.

mod support;

mod accounts;
mod accounts_shared;
mod app_support;
mod approvals;
mod audit;
mod backup_memory;
mod describe_image;
mod generate;
mod group;
mod images;
mod library;
mod mcp;
mod mcp_scope;
mod mcp_servers_http;
mod message_regex;
mod ops;
mod pages;
mod plugins;
mod replies;
mod reply_kinds;
mod security;
mod signed_files;
mod st_import;
mod translate;
mod tts;
mod workbench;
