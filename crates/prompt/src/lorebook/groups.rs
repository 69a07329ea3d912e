//! Inclusion groups: of the entries that matched in one pass and share a group, one wins.
//!
//! Tavo keeps the group fields of imported SillyTavern entries (its readback shows
//! `groupName`, `groupOverride`, `groupWeight`, `useGroupScoring`) without documenting
//! them, so the rules are SillyTavern's (`filterByInclusionGroups`), per group name (an
//! entry may list several, comma-separated, in `groupName` or ST's `group`):
//!
//! 1. a sticky member keeps its place and removes the group's other, non-sticky members;
//! 2. with group scoring (the entry's `useGroupScoring`, else the global option), members
//!    that score below the best are removed (score = matching primary keys, plus matching
//!    secondary keys for `andAny`, plus all secondary keys for `andAll` when all match);
//! 3. a group that already has an active member from an earlier pass admits nobody;
//! 4. a lone member stays;
//! 5. members with `groupOverride` compete on `order` (highest wins, first on ties);
//! 6. otherwise one member is drawn, weighted by `groupWeight` (default 100), from the
//!    generation's seed: the same seed always draws the same winner.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;
use tavo_model::LorebookEntry;

use crate::macros::seeded_percent;

/// One entry that matched in the current pass.
#[derive(Debug, Clone, Copy)]
pub struct Contender<'a> {
    /// Index of the entry in the lorebook index.
    pub at: usize,
    /// The entry.
    pub entry: &'a LorebookEntry,
    /// Whether it is held by a running `sticky` period.
    pub sticky: bool,
    /// Its key score (see the module docs).
    pub score: u32,
}

/// The group names of an entry (`groupName`, else SillyTavern's `group`), trimmed and
/// without empty names.
pub fn group_names(entry: &LorebookEntry) -> Vec<&str> {
    let raw = ["groupName", "group"]
        .iter()
        .find_map(|k| entry.extra.get(*k).and_then(Value::as_str))
        .unwrap_or_default();
    raw.split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect()
}

fn flag(entry: &LorebookEntry, name: &str) -> Option<bool> {
    match entry.extra.get(name) {
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    }
}

fn weight(entry: &LorebookEntry) -> f64 {
    entry
        .extra
        .get("groupWeight")
        .and_then(Value::as_f64)
        .filter(|w| w.is_finite() && *w >= 0.0)
        .unwrap_or(100.0)
}

/// Applies the rules to `contenders` (in admission order) and returns the indices (`at`)
/// of the entries that lose. `active_groups` holds the groups with a member activated in
/// an earlier pass; `draw` names the generation (seed and clock) for the weighted draw.
pub fn losers(
    contenders: &[Contender<'_>],
    active_groups: &HashSet<String>,
    global_scoring: bool,
    seed: u64,
    draw: u64,
) -> HashSet<usize> {
    let mut groups: BTreeMap<&str, Vec<Contender<'_>>> = BTreeMap::new();
    for c in contenders {
        for name in group_names(c.entry) {
            groups.entry(name).or_default().push(*c);
        }
    }
    let mut out = HashSet::new();
    for (name, mut members) in groups {
        if members.iter().any(|m| m.sticky) {
            out.extend(members.iter().filter(|m| !m.sticky).map(|m| m.at));
            continue;
        }
        let scoring =
            |m: &Contender<'_>| flag(m.entry, "useGroupScoring").unwrap_or(global_scoring);
        if members.iter().any(scoring) {
            let best = members.iter().map(|m| m.score).max().unwrap_or(0);
            members.retain(|m| {
                let keep = !scoring(m) || m.score >= best;
                if !keep {
                    out.insert(m.at);
                }
                keep
            });
        }
        if active_groups.contains(name) {
            out.extend(members.iter().map(|m| m.at));
            continue;
        }
        if members.len() <= 1 {
            continue;
        }
        let overriding: Vec<&Contender<'_>> = members
            .iter()
            .filter(|m| flag(m.entry, "groupOverride") == Some(true))
            .collect();
        let winner = if let Some(first) = overriding.first() {
            overriding
                .iter()
                .fold(*first, |best, m| {
                    if m.entry.order > best.entry.order {
                        m
                    } else {
                        best
                    }
                })
                .at
        } else {
            let total: f64 = members.iter().map(|m| weight(m.entry)).sum();
            let roll = seeded_percent(seed, &format!("group:{name}#{draw}")) / 100.0 * total;
            let mut sum = 0.0;
            members
                .iter()
                .find(|m| {
                    sum += weight(m.entry);
                    sum >= roll && weight(m.entry) > 0.0
                })
                .or(members.last())
                .map_or(usize::MAX, |m| m.at)
        };
        out.extend(members.iter().map(|m| m.at).filter(|at| *at != winner));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn member(name: &str, extra: Value) -> LorebookEntry {
        LorebookEntry {
            identifier: name.into(),
            extra: extra
                .as_object()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .collect(),
            ..LorebookEntry::default()
        }
    }

    fn contenders(entries: &[LorebookEntry]) -> Vec<Contender<'_>> {
        entries
            .iter()
            .enumerate()
            .map(|(at, entry)| Contender {
                at,
                entry,
                sticky: false,
                score: 1,
            })
            .collect()
    }

    #[test]
    fn names_come_from_group_name_or_st_group() {
        let e = member("a", json!({"groupName": " x, y ,,"}));
        assert_eq!(group_names(&e), ["x", "y"]);
        let e = member("a", json!({"group": "z"}));
        assert_eq!(group_names(&e), ["z"]);
        assert!(group_names(&member("a", json!({}))).is_empty());
    }

    #[test]
    fn one_member_of_a_group_wins_and_the_draw_is_seeded() {
        let entries = vec![
            member("a", json!({"group": "g"})),
            member("b", json!({"group": "g"})),
            member("c", json!({"group": "g"})),
            member("free", json!({})),
        ];
        let c = contenders(&entries);
        let lost = losers(&c, &HashSet::new(), false, 7, 3);
        assert_eq!(lost.len(), 2);
        assert!(!lost.contains(&3));
        assert_eq!(lost, losers(&c, &HashSet::new(), false, 7, 3));
        let winners: HashSet<usize> = (0..64)
            .map(|seed| {
                let lost = losers(&c, &HashSet::new(), false, seed, 3);
                (0..3).find(|i| !lost.contains(i)).unwrap_or(9)
            })
            .collect();
        assert_eq!(winners.len(), 3, "every member can win some draw");
    }

    #[test]
    fn zero_weight_never_wins_and_override_takes_the_highest_order() {
        let entries = vec![
            member("a", json!({"group": "g", "groupWeight": 0})),
            member("b", json!({"group": "g"})),
        ];
        for seed in 0..32 {
            assert_eq!(
                losers(&contenders(&entries), &HashSet::new(), false, seed, 1),
                HashSet::from([0])
            );
        }
        let mut entries = vec![
            member("low", json!({"group": "g", "groupOverride": true})),
            member("high", json!({"group": "g", "groupOverride": true})),
            member("plain", json!({"group": "g"})),
        ];
        entries[0].order = 10;
        entries[1].order = 20;
        entries[2].order = 99;
        assert_eq!(
            losers(&contenders(&entries), &HashSet::new(), false, 0, 1),
            HashSet::from([0, 2])
        );
    }

    #[test]
    fn sticky_scoring_and_earlier_activation() {
        let entries = vec![
            member("a", json!({"group": "g"})),
            member("b", json!({"group": "g"})),
        ];
        let mut c = contenders(&entries);
        c[1].sticky = true;
        assert_eq!(losers(&c, &HashSet::new(), false, 0, 1), HashSet::from([0]));
        let mut c = contenders(&entries);
        c[0].score = 3;
        assert_eq!(losers(&c, &HashSet::new(), true, 0, 1), HashSet::from([1]));
        let active = HashSet::from(["g".to_owned()]);
        assert_eq!(
            losers(&contenders(&entries), &active, false, 0, 1),
            HashSet::from([0, 1])
        );
    }
}
