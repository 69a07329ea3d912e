//! In-chat injections: preset entries and lorebook entries at a depth, grouped per
//! (depth, role) and placed into the included history.

use std::collections::BTreeMap;

use tavo_model::Role;

use super::message::PromptMessage;

/// One text to inject at `depth` (0 = after the newest message) with `role`.
pub(super) struct Injection {
    pub(super) depth: usize,
    pub(super) role: Role,
    pub(super) text: String,
    /// Where it came from: a preset entry's identifier, or `lorebook:<id>/<entry>`.
    pub(super) source: String,
}

/// One message per (depth, role): texts of the same depth and role joined by a newline, in
/// the order assistant, user, system (system nearest the end, as in SillyTavern).
pub(super) fn group_injections(injections: Vec<Injection>) -> Vec<(usize, PromptMessage)> {
    let mut by_depth: BTreeMap<usize, [Vec<(String, String)>; 3]> = BTreeMap::new();
    for injection in injections {
        let slot = match injection.role {
            Role::Assistant => 0,
            Role::User => 1,
            Role::System => 2,
        };
        by_depth.entry(injection.depth).or_default()[slot].push((injection.text, injection.source));
    }
    let mut out = Vec::new();
    for (depth, roles) in by_depth.into_iter().rev() {
        for (slot, texts) in roles.into_iter().enumerate() {
            if texts.is_empty() {
                continue;
            }
            let role = [Role::Assistant, Role::User, Role::System][slot];
            let (texts, sources): (Vec<String>, Vec<String>) = texts.into_iter().unzip();
            let mut message = PromptMessage::new(role, texts.join("\n"));
            message.sources = sources;
            out.push((depth, message));
        }
    }
    out
}

/// Puts injections into the history: depth `d` goes before the `d` newest messages
/// (0 = after the last); depths beyond the included history go to its top.
pub(super) fn place_injections(
    out: &mut Vec<PromptMessage>,
    history: Vec<PromptMessage>,
    injections: &[(usize, PromptMessage)],
) {
    let len = history.len();
    let mut history = history.into_iter();
    for position in 0..=len {
        let depth_here = len - position;
        for (depth, message) in injections {
            if (*depth).min(len) == depth_here {
                out.push(message.clone());
            }
        }
        if let Some(message) = history.next() {
            out.push(message);
        }
    }
}
