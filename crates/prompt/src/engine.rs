//! The long-lived prompt engine: the pure build plus caches that make repeated builds of the
//! same chat cheap (lorebook index per lorebook revision, regex results per text and rule
//! set, token counts per text).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tavo_model::Lorebook;

use crate::assemble::{PromptInput, PromptOptions, PromptOutput, TokenCounter, assemble, tokens};
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

    /// Builds the prompt. Without `options.wait_for_tokenizer`, a build before the model's
    /// encoding is ready counts with the byte upper bound and then starts making it ready in
    /// the background; it is kept when the budget left nothing out (so the messages are those
    /// an exact count gives), else the prompt is built again with the exact count.
    pub fn build(&self, input: &PromptInput<'_>, options: &PromptOptions) -> PromptOutput {
        if !options.wait_for_tokenizer && !tokens::is_ready(&options.model) {
            let bound = TokenCounter::upper_bound(&options.model);
            let (output, cut) = assemble(self, input, options, &bound);
            // Started after the build, not before: on a machine of two busy cores the
            // pattern's compilation (a few ms of CPU) would otherwise compete with it.
            tokens::warm(&[&options.model]);
            if !cut {
                return output;
            }
        }
        assemble(self, input, options, &self.counter(&options.model)).0
    }

    /// Starts loading the encodings of `models` (and o200k) in the background, so that the
    /// first exact count does not wait for them.
    pub fn warm_tokenizers(&self, models: &[&str]) {
        tokens::warm(models);
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
