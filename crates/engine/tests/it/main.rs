//! The integration tests of `tavo-engine`, linked into one binary: each module was a file of
//! its own under tests/ (and a binary of its own, linking the whole stack again).
//! New tests go into a module here; helpers shared by several modules live in `support`.

mod support;

mod claims;
mod executor;
mod group;
mod image_sending;
mod interleaved_reasoning;
mod limits;
mod mcp_servers;
mod memory;
mod regex_writes;
mod starts;
mod tool_history;
mod tool_loop;
mod web_audit;
