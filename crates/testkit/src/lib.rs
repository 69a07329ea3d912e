//! Test helpers: a loopback mock provider that speaks all four protocols from scripts, and
//! fixture paths. Never shipped in the binary.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use tavo_testkit::{MockProvider, Script, Turn, Wire};
//! let mock = MockProvider::start(Script::new(vec![Turn::text("hello")])).await?;
//! let base = mock.base_url(Wire::Anthropic); // http://127.0.0.1:PORT
//! // ... send a request, then:
//! let seen = mock.requests();
//! # Ok(()) }
//! ```

pub mod image;
pub mod library;
pub mod media;
pub mod render;
pub mod script;
pub mod server;
pub mod speech;

use std::path::PathBuf;

pub use library::test_library;
pub use render::Wire;
pub use script::{Script, ScriptCall, ScriptError, Turn};
pub use server::{MockProvider, RecordedRequest, RequestHook};

/// `shared/fixtures/providers`, next to the workspace.
pub fn provider_fixtures() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures/providers"
    ))
}
