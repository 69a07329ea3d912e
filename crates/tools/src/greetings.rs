//! The greetings a chat starts with (Tavo §10.2, §12), for [`crate::chats::create_chat`] and
//! [`crate::chats::reset_chat`].
//!
//! Message 0 of a 1:1 chat is the character's greeting, macro-expanded (EJS first); its other
//! greetings become its swipes as SillyTavern stores them (`swipes[0]` is the greeting shown,
//! `swipeId: 0`). SillyTavern starts an empty group chat with every member's greeting, in member
//! order; Tavo's docs only say that `groupOnlyGreetings` are used in group chats. A group chat
//! therefore gets one greeting message per member that has one: the member's group-only
//! greetings first, then its first message and alternate greetings, as swipes of that member's
//! message.

use tavo_model::{Character, Message, Persona, Role};
use tavo_store::{StoreError, Tx};

/// Renders one greeting text as [`tavo_prompt::render_greeting`] renders the card's.
fn render_text(
    characters: &[Character],
    persona: Option<&Persona>,
    now: chrono::DateTime<chrono::FixedOffset>,
    text: &str,
    ejs: bool,
) -> Option<String> {
    let mut members = characters.to_vec();
    let first = members.first_mut()?;
    first.first_mes = text.to_owned();
    first.group_only_greetings = vec![text.to_owned()];
    tavo_prompt::render_greeting_with(&members, persona, now, ejs)
}

/// The library's EJS switch (`ejs.enabled`, default on): greetings are templates too.
pub(crate) fn ejs_enabled(tx: &Tx<'_>) -> Result<bool, StoreError> {
    Ok(tx
        .setting_get(tavo_prompt::ejs::SETTING)?
        .and_then(|v| v.as_bool())
        .unwrap_or(true))
}

/// The greeting message of a new chat: the selected greeting as `content`, every candidate as
/// `swipes` (only when there is more than one), `swipeId: 0`.
pub fn greeting_message(
    characters: &[Character],
    persona: Option<&Persona>,
    now: chrono::DateTime<chrono::FixedOffset>,
) -> Option<Message> {
    greeting_message_with(characters, persona, now, true)
}

/// [`greeting_message`] with the EJS switch.
pub fn greeting_message_with(
    characters: &[Character],
    persona: Option<&Persona>,
    now: chrono::DateTime<chrono::FixedOffset>,
    ejs: bool,
) -> Option<Message> {
    let first = characters.first()?;
    let group = characters.len() > 1;
    let mut candidates: Vec<&str> = Vec::new();
    if group {
        candidates.extend(first.group_only_greetings.iter().map(String::as_str));
    }
    candidates.push(&first.first_mes);
    candidates.extend(first.alternate_greetings.iter().map(String::as_str));
    let mut texts: Vec<String> = Vec::new();
    for c in candidates.into_iter().filter(|c| !c.trim().is_empty()) {
        if let Some(t) = render_text(characters, persona, now, c, ejs)
            && !texts.contains(&t)
        {
            texts.push(t);
        }
    }
    let content = texts.first()?.clone();
    let mut message = Message::new(Role::Assistant, content);
    message.character_id = first.id;
    message.name = Some(first.name.clone());
    message.send_date = Some(now.to_rfc3339());
    if texts.len() > 1 {
        message.swipes = texts;
        message.swipe_id = Some(0);
    }
    Some(message)
}

/// The greetings a new chat starts with: the first character's greeting in a 1:1 chat; in a
/// group chat one message per member that has a greeting, in member order, each rendered with
/// that member as `{{char}}`.
pub fn greetings(
    characters: &[Character],
    persona: Option<&Persona>,
    now: chrono::DateTime<chrono::FixedOffset>,
    ejs: bool,
) -> Vec<Message> {
    if characters.len() <= 1 {
        return greeting_message_with(characters, persona, now, ejs)
            .into_iter()
            .collect();
    }
    (0..characters.len())
        .filter_map(|i| {
            // The member first (its greeting, its name as {{char}}), the others after it so
            // that {{group}} still names everyone.
            let mut members = Vec::with_capacity(characters.len());
            members.push(characters[i].clone());
            members.extend(
                characters
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| *k != i)
                    .map(|(_, c)| c.clone()),
            );
            greeting_message_with(&members, persona, now, ejs)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tavo_model::CharacterId;

    fn character(first: &str, alts: &[&str], groups: &[&str]) -> Character {
        Character {
            id: Some(CharacterId(3)),
            name: "Zed".into(),
            first_mes: first.into(),
            alternate_greetings: alts.iter().map(|s| (*s).to_owned()).collect(),
            group_only_greetings: groups.iter().map(|s| (*s).to_owned()).collect(),
            ..Character::default()
        }
    }

    fn now() -> chrono::DateTime<chrono::FixedOffset> {
        chrono::DateTime::parse_from_rfc3339("2026-03-05T10:20:30+00:00").unwrap_or_default()
    }

    #[test]
    fn greetings_are_ejs_templates_unless_switched_off() {
        let c = character(
            "Hi <%= 40 + 2 %> from <%= charName %>",
            &["<%= 'alt' %>"],
            &[],
        );
        let m = greeting_message(std::slice::from_ref(&c), None, now()).unwrap_or_default();
        assert_eq!(m.content, "Hi 42 from Zed");
        assert_eq!(
            m.swipes,
            vec!["Hi 42 from Zed".to_owned(), "alt".to_owned()]
        );
        let off = greeting_message_with(&[c], None, now(), false).unwrap_or_default();
        assert_eq!(off.content, "Hi <%= 40 + 2 %> from <%= charName %>");
    }

    #[test]
    fn alternate_greetings_become_swipes_of_message_zero() {
        let c = character("Hi {{user}}", &["Yo", "", "Hey"], &[]);
        let m = greeting_message(&[c], None, now()).unwrap_or_default();
        assert_eq!(m.content, "Hi User");
        assert_eq!(m.swipes, ["Hi User", "Yo", "Hey"]);
        assert_eq!(m.swipe_id, Some(0));
        assert_eq!(m.character_id, Some(CharacterId(3)));
    }

    #[test]
    fn a_single_greeting_has_no_swipes_and_a_blank_card_none() {
        let m = greeting_message(&[character("Hi", &[], &[])], None, now()).unwrap_or_default();
        assert!(m.swipes.is_empty() && m.swipe_id.is_none());
        assert!(greeting_message(&[character(" ", &[], &[])], None, now()).is_none());
    }

    #[test]
    fn a_group_chat_leads_with_the_group_only_greeting() {
        let a = character("Hi", &["Yo"], &["Hello all"]);
        let b = Character {
            id: Some(CharacterId(4)),
            name: "B".into(),
            ..Character::default()
        };
        let m = greeting_message(&[a, b], None, now()).unwrap_or_default();
        assert_eq!(m.content, "Hello all");
        assert_eq!(m.swipes, ["Hello all", "Hi", "Yo"]);
    }

    #[test]
    fn every_member_with_a_greeting_greets_in_member_order() {
        let member = |id: i64, name: &str, first: &str, group: &[&str]| Character {
            id: Some(CharacterId(id)),
            name: name.into(),
            first_mes: first.into(),
            group_only_greetings: group.iter().map(|s| (*s).to_owned()).collect(),
            ..Character::default()
        };
        let a = member(1, "Ann", "Hi, I am {{char}}", &[]);
        let b = member(2, "Bo", "", &[]);
        let c = member(3, "Cy", "Hey", &["All of you, {{char}} here"]);
        let g = greetings(&[a, b, c], None, now(), true);
        let texts: Vec<&str> = g.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(texts, ["Hi, I am Ann", "All of you, Cy here"]);
        assert_eq!(g[1].character_id, Some(CharacterId(3)));
        assert_eq!(g[1].swipes, ["All of you, Cy here", "Hey"]);
        let one = greetings(
            &[member(1, "Ann", "Hi", &["group only"])],
            None,
            now(),
            true,
        );
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].content, "Hi");
    }
}
