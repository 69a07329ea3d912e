//! Lorebook activation: which entries of a chat's lorebooks are injected for one generation.
//!
//! Decisions (Tavo is silent unless noted; SillyTavern followed otherwise):
//! - Scan window: the newest `scanDepth` **visible** messages, including the pending user
//!   message (it is the newest message when the prompt is built). Hidden messages are
//!   skipped and do not count toward the depth. Each message is scanned as `Name: text`
//!   (SillyTavern's "include names") after `send`-timing regex rules. A plain key cannot
//!   span two messages; depth 0 scans nothing.
//! - Case folding is Unicode lower case on both sides. Whole-word matching of native
//!   lorebooks treats CJK characters as non-word characters; lorebooks imported from
//!   SillyTavern (`wordCharacters: "ascii"`) use SillyTavern's ASCII-only `\W` (see [`scan`]).
//! - `/pattern/flags` keys run in the JavaScript engine against each message; they ignore
//!   `caseSensitive`/`matchWholeWord` (SillyTavern).
//! - Probability rolls are seeded by (seed, lorebook id, identifier, clock): reproducible
//!   and independent of evaluation order.
//! - Recursion is on (SillyTavern's default for new installs): content of activated entries
//!   is scanned again, at most [`LorebookOptions::max_recursion`] passes; the imported
//!   ST fields `preventRecursion`, `excludeRecursion`, `delayUntilRecursion` are honoured,
//!   the last with SillyTavern's levels (`true` = 1, or a number): the lowest level opens
//!   with the first recursion pass, and when a pass brings nothing new the next level opens a
//!   pass of its own that rescans the chat, recursion on or off.
//! - Budget: entries are admitted sticky first, then by `order` descending, then binding
//!   rank; the first entry that does not fit closes the budget (SillyTavern).
//! - Inclusion groups (`groupName`, or ST's `group`): SillyTavern's rules, with the weighted
//!   draw seeded like probability (see `groups`). `triggers` and `characterFilter.names`
//!   of imported ST entries are honoured; `characterFilter.tags` is not, because it holds
//!   tag ids of the creator's install ([`EntryScope::filter`]).
//! - Output order within a position: `order` ascending, then binding rank (highest order
//!   nearest the chat, as in SillyTavern; ties keep reading order).

mod activate;
mod groups;
mod index;
mod scan;
mod timed;

#[cfg(test)]
mod tests;

pub use activate::{
    ActivatedEntry, Activation, ActivationInput, EntryScope, Gate, LorebookOptions, Reason,
    SkippedEntry, activate, secondary_holds, timer_key,
};
pub use index::{LorebookIndex, fingerprint};
pub use scan::{WORD_CHARACTERS_KEY, WordRule, is_cjk, is_word_char, whole_word_at};
pub use timed::{EntryTimers, TimedEffects, TimedSpan};
