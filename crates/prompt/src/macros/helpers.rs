//! Small pieces of the macro evaluator: argument counts, scopes, repeat counts, choice
//! lists, the `{{trim}}` post-pass, regex escaping and the stable hash behind `{{pick}}`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::syntax::split_commas;
use super::vars::VarScope;

/// Marks where `{{trim}}` stood until the post-pass removes it with the whitespace around it.
pub(super) const TRIM_MARK: char = '\u{FDD0}';
/// Largest `n` accepted by `{{newline::n}}` / `{{space::n}}` (guards against huge outputs).
const MAX_REPEAT: usize = 1000;

/// Accepted argument counts per macro name (lower case); `None` = not a known macro.
pub(super) fn arity(name: &str) -> Option<(usize, usize)> {
    const MANY: usize = usize::MAX;
    Some(match name {
        "user" | "char" | "group" | "charifnotgroup" | "groupnotmuted" | "notchar"
        | "chardescription" | "description" | "charpersonality" | "personality"
        | "charscenario" | "scenario" | "persona" | "charprompt" | "charinstruction"
        | "charjailbreak" | "mesexamples" | "mesexamplesraw" | "charversion" | "version"
        | "char_version" | "charcreatornotes" | "creatornotes" | "chardepthprompt" | "original"
        | "lastmessage" | "lastchatmessage" | "input" | "lastusermessage" | "lastcharmessage"
        | "lastmessageid" | "model" | "ismobile" | "date" | "weekday" | "isotime" | "isodate"
        | "idleduration" | "idle_duration" | "noop" | "trim" => (0, 0),
        "time" | "newline" | "space" | "charfirstmessage" | "greeting" => (0, 1),
        "reverse" | "outlet" | "roll" | "dice" | "incvar" | "incglobalvar" | "decvar"
        | "decglobalvar" | "getvar" | "getglobalvar" | "hasvar" | "varexists" | "hasglobalvar"
        | "globalvarexists" | "deletevar" | "flushvar" | "deleteglobalvar" | "flushglobalvar" => {
            (1, 1)
        }
        "random" | "pick" => (1, MANY),
        "setvar" | "setglobalvar" | "addvar" | "addglobalvar" => (2, MANY),
        _ => return None,
    })
}

pub(super) fn scope_of(name: &str) -> VarScope {
    if name.contains("global") {
        VarScope::Global
    } else {
        VarScope::Chat
    }
}

pub(super) fn repeat_count(name: &str, args: &[String]) -> Result<usize, String> {
    match args.first() {
        None => Ok(1),
        Some(n) => n
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= MAX_REPEAT)
            .ok_or_else(|| {
                format!("{{{{{name}::n}}}} needs a count from 0 to {MAX_REPEAT}, got '{n}'")
            }),
    }
}

/// `{{random::a::b}}` lists its items as arguments; `{{random::a,b}}` and
/// `{{random: a, b}}` give one comma-separated argument.
pub(super) fn choice_items(args: &[String]) -> Vec<String> {
    if args.len() == 1 {
        split_commas(&args[0])
    } else {
        args.to_vec()
    }
}

/// Removes each `{{trim}}` mark together with the whitespace on both sides of it.
pub(super) fn apply_trim_marks(text: &str) -> String {
    if !text.contains(TRIM_MARK) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut pieces = text.split(TRIM_MARK).peekable();
    let mut first = true;
    while let Some(piece) = pieces.next() {
        let piece = if first { piece } else { piece.trim_start() };
        first = false;
        if pieces.peek().is_some() {
            out.push_str(piece.trim_end());
        } else {
            out.push_str(piece);
        }
    }
    out
}

/// Escapes JavaScript regex syntax characters (for `substitution: 'escaped'`).
pub fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.*+?()[]{}|/-".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// FNV-1a: a small stable hash for `{{pick}}` (stable across runs and platforms, unlike
/// `DefaultHasher`).
pub(crate) struct Fnv(u64);

impl Fnv {
    pub(crate) fn new(seed: u64) -> Self {
        let mut hasher = Self(0xcbf2_9ce4_8422_2325);
        hasher.write(&seed.to_le_bytes());
        hasher
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}

/// Draws a float in `[0, 100)` from a generator seeded by `(seed, key)`: used where a random
/// decision must not depend on evaluation order (lorebook probability).
pub fn seeded_percent(seed: u64, key: &str) -> f64 {
    let mut hasher = Fnv::new(seed);
    hasher.write(key.as_bytes());
    let mut rng = ChaCha8Rng::seed_from_u64(hasher.finish());
    rng.random_range(0.0..100.0)
}
