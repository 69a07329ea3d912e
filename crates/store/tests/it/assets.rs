//! Asset repositories: create/get/list/find/update/delete, revisions and conflicts, lossless
//! unknown fields, avatars.

use crate::support::{character, on_both};
use serde_json::json;
use tavo_model::{Character, Chat, NameMatch, Persona, Preset, RegexGroup};
use tavo_store::{AssetKind, Avatar, StoreError};

on_both! {
    fn create_get_list_delete(store) {
        let a = store.create(&character("Alice")).unwrap();
        let b = store.create(&character("Bob")).unwrap();
        let alice = store.require::<Character>(a).unwrap();
        assert_eq!(alice.id, Some(a));
        assert_eq!(alice.revision, 1);
        assert_eq!(alice.first_mes, "hi");
        let names: Vec<_> = store
            .list::<Character>()
            .unwrap()
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names, ["Alice", "Bob"]);
        assert!(store.delete::<Character>(b).unwrap());
        assert!(!store.delete::<Character>(b).unwrap());
        assert_eq!(store.get::<Character>(b).unwrap(), None);
        assert!(matches!(
            store.require::<Character>(b),
            Err(StoreError::NotFound {
                kind: "character",
                ..
            })
        ));
    }
}

on_both! {
    fn updates_bump_the_revision_and_a_stale_revision_is_a_conflict(store) {
        let id = store
            .create(&Preset {
                name: "P".into(),
                ..Default::default()
            })
            .unwrap();
        let mut first = store.require::<Preset>(id).unwrap();
        let mut second = first.clone();
        first.name = "First".into();
        assert_eq!(store.update(&first, Some(1)).unwrap(), 2);
        second.name = "Second".into();
        let err = store.update(&second, Some(1)).unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::Conflict {
                    expected: 1,
                    actual: 2,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(err.code(), "conflict");
        assert_eq!(store.require::<Preset>(id).unwrap().name, "First");
        // Without an expected revision the write is unconditional.
        assert_eq!(store.update(&second, None).unwrap(), 3);
        assert_eq!(store.require::<Preset>(id).unwrap().revision, 3);
    }
}

on_both! {
    fn updating_a_missing_or_unsaved_asset_is_an_error(store) {
        let mut p = Persona {
            name: "Me".into(),
            ..Default::default()
        };
        assert!(matches!(
            store.update(&p, None),
            Err(StoreError::InvalidArgument(_))
        ));
        p.id = Some(99.into());
        assert!(matches!(
            store.update(&p, None),
            Err(StoreError::NotFound { .. })
        ));
    }
}

on_both! {
    fn unknown_fields_survive(store) {
        let mut c = character("Alice");
        c.extra
            .insert("futureField".into(), json!({"nested": [1, 2, {"x": null}]}));
        c.extensions
            .insert("depth_prompt".into(), json!({"depth": 4, "prompt": "p"}));
        let id = store.create(&c).unwrap();
        let back = store.require::<Character>(id).unwrap();
        assert_eq!(back.extra.get("futureField"), c.extra.get("futureField"));
        assert_eq!(back.extensions, c.extensions);
        let shown = store
            .asset_json(AssetKind::Character, id.0)
            .unwrap()
            .unwrap();
        let keys: Vec<_> = shown.as_object().unwrap().keys().take(3).cloned().collect();
        assert_eq!(keys, ["id", "revision", "name"]);
    }
}

on_both! {
    fn find_by_name_in_every_mode(store) {
        for name in ["Alice", "Alicia", "Malice", "Bob"] {
            store
                .create(&RegexGroup {
                    name: name.into(),
                    ..Default::default()
                })
                .unwrap();
        }
        let names = |q: &str, m: NameMatch| -> Vec<String> {
            store
                .find::<RegexGroup>(q, m)
                .unwrap()
                .into_iter()
                .map(|r| r.name)
                .collect()
        };
        assert_eq!(names("Alice", NameMatch::Exact), ["Alice"]);
        assert_eq!(names("Ali", NameMatch::Prefix), ["Alice", "Alicia"]);
        assert_eq!(names("ice", NameMatch::Suffix), ["Alice", "Malice"]);
        assert_eq!(
            names("lic", NameMatch::Contains),
            ["Alice", "Alicia", "Malice"]
        );
        assert!(
            names("alice", NameMatch::Exact).is_empty(),
            "matching is case-sensitive"
        );
        assert_eq!(names("50%_", NameMatch::Contains), Vec::<String>::new());
    }
}

on_both! {
    fn summaries_and_kind_names(store) {
        store
            .create(&Chat {
                name: "Talk".into(),
                ..Default::default()
            })
            .unwrap();
        let rows = store.asset_summaries(AssetKind::Chat).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].name, "Talk");
        assert_eq!(rows[0].entries, None);
        let group = RegexGroup {
            name: "R".into(),
            entries: vec![Default::default(), Default::default()],
            ..Default::default()
        };
        store.create(&group).unwrap();
        let mut alice = character("Alice");
        alice.avatar = Some("chara/alice.png".into());
        store.create(&alice).unwrap();
        assert_eq!(
            store.asset_summaries(AssetKind::Regex).unwrap()[0].entries,
            Some(2)
        );
        let chars = store.asset_summaries(AssetKind::Character).unwrap();
        assert_eq!(chars[0].avatar.as_deref(), Some("chara/alice.png"));
        for (name, kind) in [
            ("characters", AssetKind::Character),
            ("Regexes", AssetKind::Regex),
            ("lorebook", AssetKind::Lorebook),
        ] {
            assert_eq!(AssetKind::parse(name), Some(kind));
        }
        assert_eq!(AssetKind::parse("theme"), None);
    }
}

on_both! {
    fn avatars_belong_to_their_character(store) {
        let id = store.create(&character("Alice")).unwrap();
        let avatar = Avatar {
            mime_type: "image/png".into(),
            bytes: vec![1, 2, 3],
        };
        store.character_avatar_set(id, &avatar).unwrap();
        assert_eq!(
            store.character_avatar_get(id).unwrap(),
            Some(avatar.clone())
        );
        assert!(matches!(
            store.character_avatar_set(999.into(), &avatar),
            Err(StoreError::NotFound { .. })
        ));
        store.delete::<Character>(id).unwrap();
        assert_eq!(store.character_avatar_get(id).unwrap(), None);
    }
}

on_both! {
    fn audit_log_is_bounded_and_listed_newest_first(store) {
        store
            .write(|tx| {
                for i in 0..(tavo_store::AUDIT_CAPACITY + 5) {
                    tx.audit_append("test.op", Some("x:1"), &json!({"i": i}))?;
                }
                Ok(())
            })
            .unwrap();
        let all = store.audit_list(u32::MAX, None).unwrap();
        assert_eq!(all.len() as i64, tavo_store::AUDIT_CAPACITY);
        assert_eq!(all[0].details, json!({"i": tavo_store::AUDIT_CAPACITY + 4}));
        let page = store.audit_list(2, Some(all[0].id)).unwrap();
        assert_eq!(
            page.iter().map(|e| e.id).collect::<Vec<_>>(),
            [all[1].id, all[2].id]
        );
        assert_eq!(
            store.audit_clear().unwrap() as i64,
            tavo_store::AUDIT_CAPACITY
        );
        assert!(store.audit_list(10, None).unwrap().is_empty());
    }
}

on_both! {
    fn audit_entries_are_found_by_action_target_and_call_id(store) {
        store
            .write(|tx| {
                tx.audit_append("tool.a", Some("chat:1"), &json!({"callId": "c1"}))?;
                tx.audit_append("tool.b", Some("chat:1"), &json!({"callId": "c2"}))?;
                tx.audit_append("tool.a", Some("chat:2"), &json!({"callId": "c1"}))?;
                tx.audit_append("character.create", None, &json!({}))?;
                Ok(())
            })
            .unwrap();
        let find = |action: Option<&str>, target: Option<&str>, call: Option<&str>| {
            let filter = tavo_store::AuditFilter {
                action: action.map(str::to_owned),
                target: target.map(str::to_owned),
                call_id: call.map(str::to_owned),
            };
            store
                .audit_find(10, None, &filter)
                .unwrap()
                .into_iter()
                .map(|e| {
                    (
                        e.action,
                        e.target,
                        e.details["callId"].as_str().map(str::to_owned),
                    )
                })
                .collect::<Vec<_>>()
        };
        let a = |action: &str, target: &str, call: &str| {
            (
                action.to_owned(),
                Some(target.to_owned()),
                Some(call.to_owned()),
            )
        };
        assert_eq!(find(None, None, None).len(), 4);
        assert_eq!(
            find(Some("tool.a"), None, None),
            vec![a("tool.a", "chat:2", "c1"), a("tool.a", "chat:1", "c1")]
        );
        assert_eq!(
            find(None, Some("chat:1"), None),
            vec![a("tool.b", "chat:1", "c2"), a("tool.a", "chat:1", "c1")]
        );
        assert_eq!(
            find(None, Some("chat:1"), Some("c1")),
            vec![a("tool.a", "chat:1", "c1")]
        );
        assert!(find(Some("tool.zz"), None, None).is_empty());
    }
}
