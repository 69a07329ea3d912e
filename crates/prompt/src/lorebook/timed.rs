//! Timed effects (`sticky`, `cooldown`, `delay`) and the per-chat state that carries them
//! across generations.
//!
//! The clock is the chat's message count `N` at generation time (SillyTavern's clock; one
//! user message plus one reply advance it by two). Hidden messages count: hiding a message
//! must not rewind timers. An effect recorded at `N = start` lasts while `N < end`; a record
//! whose `start` is not behind the clock (regenerate, swipe, deleted messages) is dropped,
//! so re-running a generation never consumes a turn. When a sticky period ends and the
//! entry has a cooldown, a protected cooldown starts at once.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One running effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimedSpan {
    /// Clock value when it started.
    pub start: u64,
    /// Clock value when it ends (exclusive).
    pub end: u64,
    /// Protected spans survive a clock that did not advance (cooldown after sticky).
    #[serde(default)]
    pub protected: bool,
}

/// Per-chat timed-effect state. The caller persists it (the store's chat state slot) and
/// passes it back on the next generation. Keys are `"<lorebookId>.<identifier>"`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimedEffects {
    /// Entries kept active.
    #[serde(default)]
    pub sticky: BTreeMap<String, TimedSpan>,
    /// Entries that may not activate.
    #[serde(default)]
    pub cooldown: BTreeMap<String, TimedSpan>,
}

/// What the state needs to know about an entry.
#[derive(Debug, Clone, Copy)]
pub struct EntryTimers {
    /// `sticky` turns.
    pub sticky: u32,
    /// `cooldown` turns.
    pub cooldown: u32,
}

impl TimedEffects {
    /// Expires and cleans records at clock `n`. `timers` looks an entry up by key (`None`
    /// when the entry no longer exists).
    pub fn begin(&mut self, n: u64, timers: impl Fn(&str) -> Option<EntryTimers>) {
        let mut new_cooldowns = Vec::new();
        self.sticky.retain(|key, span| {
            if n <= span.start && !span.protected {
                return false;
            }
            match timers(key) {
                None => n < span.end,
                Some(t) if t.sticky == 0 => false,
                Some(t) => {
                    if n >= span.end {
                        if t.cooldown > 0 {
                            new_cooldowns.push((key.clone(), t.cooldown));
                        }
                        false
                    } else {
                        true
                    }
                }
            }
        });
        self.cooldown.retain(|key, span| {
            if n <= span.start && !span.protected {
                return false;
            }
            match timers(key) {
                None => n < span.end,
                Some(t) if t.cooldown == 0 => false,
                Some(_) => n < span.end,
            }
        });
        for (key, cooldown) in new_cooldowns {
            self.cooldown.insert(
                key,
                TimedSpan {
                    start: n,
                    end: n + u64::from(cooldown),
                    protected: true,
                },
            );
        }
    }

    /// Whether the entry is held active by `sticky`.
    pub fn is_sticky(&self, key: &str) -> bool {
        self.sticky.contains_key(key)
    }

    /// Whether the entry is cooling down.
    pub fn is_cooling(&self, key: &str) -> bool {
        self.cooldown.contains_key(key)
    }

    /// Records the effects of an entry that activated at clock `n`.
    pub fn activated(&mut self, key: &str, n: u64, timers: EntryTimers) {
        if timers.sticky > 0 && !self.sticky.contains_key(key) {
            self.sticky.insert(
                key.to_owned(),
                TimedSpan {
                    start: n,
                    end: n + u64::from(timers.sticky),
                    protected: false,
                },
            );
        }
        if timers.cooldown > 0 && !self.cooldown.contains_key(key) {
            self.cooldown.insert(
                key.to_owned(),
                TimedSpan {
                    start: n,
                    end: n + u64::from(timers.cooldown),
                    protected: false,
                },
            );
        }
    }
}

/// `delay`: the entry may not activate while the chat has fewer than `delay` messages.
pub fn delayed(delay: u32, n: u64) -> bool {
    n < u64::from(delay)
}
