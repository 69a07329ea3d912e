//! Preset assembly into the provider-neutral message list, the provider converters and the
//! token budget.

mod budget;
mod build;
mod context;
mod examples;
mod explain;
mod injections;
mod input;
mod layout;
mod lore;
mod message;
pub(crate) mod tokens;

#[cfg(test)]
mod ejs_tests;
#[cfg(test)]
mod tests;

pub(crate) use build::assemble;
pub use examples::example_blocks;
pub use explain::{Diagnostic, Explain, PartTokens, TokenReport};
pub use input::{GenerationType, PromptInput, PromptOptions, PromptOutput};
pub use message::{PromptConverter, PromptMessage, convert};
pub use tokens::{PER_MESSAGE, REPLY_PRIMING, TokenCounter};
