//! Importing model objects: a card with its lorebook and regex group lands whole and linked; a
//! chat is matched to characters by name and creates nothing extra.

use crate::support::on_both;
use tavo_model::{Character, Chat, Lorebook, Message, Persona, Preset, RegexGroup, Role};

fn named<T: Default>(f: impl FnOnce(&mut T)) -> T {
    let mut t = T::default();
    f(&mut t);
    t
}

on_both! {
    fn a_card_lands_with_its_avatar_lorebook_and_regex_linked(store) {
        let png = b"\x89PNG\r\n\x1a\nrest".to_vec();
        let alice: Character = named(|c: &mut Character| c.name = "Alice".into());
        let book: Lorebook = named(|b: &mut Lorebook| b.name = "Alice's book".into());
        let regex: RegexGroup = named(|r: &mut RegexGroup| r.name = "Alice's regex".into());
        let result = store
            .import_character(&alice, Some(&png), Some(&book), Some(&regex))
            .unwrap();
        let parts = store.character_export_parts(result.character_id).unwrap();
        assert_eq!(parts.character.name, "Alice");
        assert_eq!(parts.avatar.unwrap().mime_type, "image/png");
        assert_eq!(parts.lorebook.unwrap().id, result.lorebook_id);
        assert_eq!(parts.regex.unwrap().id, result.regex_id);
        // The linked assets are standalone: deleting the lorebook only clears the link.
        store
            .delete::<Lorebook>(result.lorebook_id.unwrap())
            .unwrap();
        let parts = store.character_export_parts(result.character_id).unwrap();
        assert!(parts.lorebook.is_none() && parts.regex.is_some());
        let json = serde_json::to_value(result).unwrap();
        assert!(json.get("characterId").is_some() && json.get("lorebookId").is_some());
    }
}

on_both! {
    fn a_card_without_extras_has_null_ids(store) {
        let bob: Character = named(|c: &mut Character| c.name = "Bob".into());
        let result = store.import_character(&bob, None, None, None).unwrap();
        assert_eq!((result.lorebook_id, result.regex_id), (None, None));
        assert_eq!(
            store.character_avatar_get(result.character_id).unwrap(),
            None
        );
    }
}

on_both! {
    fn a_preset_keeps_its_regex_group(store) {
        let preset: Preset = named(|p: &mut Preset| p.name = "P".into());
        let regex: RegexGroup = named(|r: &mut RegexGroup| r.name = "R".into());
        let (id, regex_id) = store.import_preset(&preset, Some(&regex)).unwrap();
        let (_, back) = store.preset_export_parts(id).unwrap();
        assert_eq!(back.unwrap().id, regex_id);
        let (id, none) = store.import_preset(&preset, None).unwrap();
        assert!(none.is_none() && store.preset_export_parts(id).unwrap().1.is_none());
    }
}

on_both! {
    fn a_chat_is_matched_to_characters_and_persona_by_name(store) {
        let alice = store
            .create(&named(|c: &mut Character| c.name = "Alice".into()))
            .unwrap();
        store
            .create(&named(|c: &mut Character| c.name = "Alice".into()))
            .unwrap();
        let me = store
            .create(&named(|p: &mut Persona| p.name = "Me".into()))
            .unwrap();
        let mut reply = Message::new(Role::Assistant, "hello");
        reply.name = Some("Alice".into());
        let mut stranger = Message::new(Role::Assistant, "who?");
        stranger.name = Some("Nobody".into());
        let messages = vec![Message::new(Role::User, "hi"), reply, stranger];
        let names = vec!["Alice".to_owned(), "Nobody".to_owned()];
        let result = store
            .import_chat(
                Chat {
                    name: "talk".into(),
                    ..Default::default()
                },
                messages,
                &names,
                Some("Me"),
            )
            .unwrap();
        assert_eq!(
            result.characters.iter().map(|c| c.id).collect::<Vec<_>>(),
            [alice],
            "the oldest Alice"
        );
        assert_eq!(result.unmatched, ["Nobody"]);
        assert_eq!(result.persona.as_ref().map(|p| p.id), Some(me));
        let chat = store.chat_get(result.chat_id).unwrap().unwrap();
        assert_eq!(chat.characters.len(), 1);
        assert_eq!(chat.persona.map(|p| p.id), Some(me));
        let stored = store.messages_all(result.chat_id).unwrap();
        assert_eq!(stored[1].character_id, Some(alice));
        assert_eq!(stored[2].character_id, None);
        assert_eq!(
            store.list::<Character>().unwrap().len(),
            2,
            "nothing extra was created"
        );
    }
}

on_both! {
    fn an_imported_chat_binds_its_characters_own_lorebook_and_regex(store) {
        let book: Lorebook = named(|b: &mut Lorebook| b.name = "Alice's book".into());
        let regex: RegexGroup = named(|r: &mut RegexGroup| r.name = "Alice's regex".into());
        let alice = store
            .import_character(
                &named(|c: &mut Character| c.name = "Alice".into()),
                None,
                Some(&book),
                Some(&regex),
            )
            .unwrap();
        // Bob's card had no lore; a lorebook the file already binds is kept after the card's.
        store
            .create(&named(|c: &mut Character| c.name = "Bob".into()))
            .unwrap();
        let other = store
            .create(&named(|b: &mut Lorebook| b.name = "Other".into()))
            .unwrap();
        let chat = Chat {
            name: "talk".into(),
            lorebooks: vec![
                tavo_model::Summary {
                    id: other,
                    name: "Other".into(),
                },
                tavo_model::Summary {
                    id: alice.lorebook_id.unwrap(),
                    name: "Alice's book".into(),
                },
            ],
            ..Default::default()
        };
        let names = ["Bob".to_owned(), "Alice".to_owned()];
        let result = store.import_chat(chat, vec![], &names, None).unwrap();
        let ids = |v: &[tavo_model::Summary<tavo_model::LorebookId>]| -> Vec<i64> {
            v.iter().map(|s| s.id.0).collect()
        };
        assert_eq!(ids(&result.card_lorebooks), [alice.lorebook_id.unwrap().0]);
        let stored = store.chat_get(result.chat_id).unwrap().unwrap();
        assert_eq!(
            ids(&stored.lorebooks),
            [alice.lorebook_id.unwrap().0, other.0],
            "the card's own lorebook first, no duplicate"
        );
        assert_eq!(
            stored.regexes.iter().map(|s| s.id).collect::<Vec<_>>(),
            [alice.regex_id.unwrap()]
        );
        // A deleted card lorebook is not bound to a later chat.
        store
            .delete::<Lorebook>(alice.lorebook_id.unwrap())
            .unwrap();
        let again = store
            .import_chat(Chat::default(), vec![], &names, None)
            .unwrap();
        let stored = store.chat_get(again.chat_id).unwrap().unwrap();
        assert!(stored.lorebooks.is_empty(), "{:?}", stored.lorebooks);
        assert_eq!(stored.regexes.len(), 1);
    }
}

on_both! {
    fn a_chat_whose_speakers_match_nothing_creates_only_the_chat(store) {
        let result = store
            .import_chat(
                Chat::default(),
                vec![Message::new(Role::Assistant, "x")],
                &["Ghost".to_owned()],
                None,
            )
            .unwrap();
        assert!(result.characters.is_empty());
        assert!(store.list::<Character>().unwrap().is_empty());
        assert_eq!(store.message_count(result.chat_id).unwrap(), 1);
    }
}
