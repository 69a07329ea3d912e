//! The long-lived prompt engine: the pure build plus caches that make repeated builds of the
//! same chat cheap (lorebook index per lorebook revision, regex results per text and rule
//! set, token counts per text).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tavo_model::Lorebook;

use crate::assemble::{PromptInput, PromptOptions, PromptOutput, TokenCounter, assemble};
use crate::lorebook::{LorebookIndex, fingerprint};
use crate::regex::RegexCache;

/// Builds prompts, caching what does not change between generations. Share one per
/// process (it is `Sync`); [`crate::build`] uses a fresh one.
#[derive(Debug, Default)]
pub struct PromptEngine {
    index: Mutex<Option<Arc<LorebookIndex>>>,
    pub(crate) regex_cache: Mutex<RegexCache>,
    counters: Mutex<HashMap<String, Arc<TokenCounter>>>,
}

impl PromptEngine {
    /// An engine with empty caches.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds the prompt.
    pub fn build(&self, input: &PromptInput<'_>, options: &PromptOptions) -> PromptOutput {
        assemble(self, input, options)
    }

    /// The keyword index of `books`, reused while their ids and revisions are unchanged.
    pub(crate) fn lorebook_index(&self, books: &[Lorebook]) -> Result<Arc<LorebookIndex>, String> {
        let key = fingerprint(books);
        if let Some(key) = &key
            && let Ok(slot) = self.index.lock()
            && let Some(index) = slot.as_ref().filter(|i| &i.fingerprint == key)
        {
            return Ok(index.clone());
        }
        let index = Arc::new(LorebookIndex::build(books)?);
        if key.is_some()
            && let Ok(mut slot) = self.index.lock()
        {
            *slot = Some(index.clone());
        }
        Ok(index)
    }

    /// The token counter for `model`.
    pub(crate) fn counter(&self, model: &str) -> Arc<TokenCounter> {
        let Ok(mut counters) = self.counters.lock() else {
            return Arc::new(TokenCounter::for_model(model));
        };
        counters
            .entry(model.to_owned())
            .or_insert_with(|| Arc::new(TokenCounter::for_model(model)))
            .clone()
    }
}
