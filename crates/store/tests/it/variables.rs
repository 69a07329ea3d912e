//! Variables through the store: scopes are separate namespaces, JSON types survive, paths work
//! the same as the pure `varpath` functions, and owners that do not exist are reported.

use crate::support::on_both;
use serde_json::{Value, json};
use tavo_store::{Store, StoreError, VarScope};

fn new_chat(store: &Store) -> i64 {
    store
        .write(|tx| {
            tx.chat_create(&tavo_model::Chat {
                name: "c".into(),
                ..Default::default()
            })
        })
        .unwrap()
        .get()
}

on_both! {
    fn the_documented_example_works_in_every_scope(store) {
        let chat = new_chat(store);
        let message = store
            .message_append(
                chat.into(),
                &tavo_model::Message::new(tavo_model::Role::User, "hi"),
            )
            .unwrap();
        for scope in [
            VarScope::Chat(chat),
            VarScope::Global,
            VarScope::Message(message.get()),
        ] {
            store
                .var_set(scope, "status", &json!({"hp": 100, "mp": 32}))
                .unwrap();
            store
                .var_update(scope, "status", &json!({"hp": 70}))
                .unwrap();
            assert_eq!(
                store.var_get(scope, "status").unwrap(),
                Some(json!({"hp": 70, "mp": 32}))
            );
            store
                .var_update(scope, "status", &json!({"status": "poisoned"}))
                .unwrap();
            assert_eq!(
                store.var_get(scope, "status.status").unwrap(),
                Some(json!("poisoned"))
            );
            assert!(store.var_unset(scope, "status.hp").unwrap());
            assert_eq!(store.var_get(scope, "status.hp").unwrap(), None);
            assert_eq!(store.var_get(scope, "status.mp").unwrap(), Some(json!(32)));
            assert!(store.var_unset(scope, "status").unwrap());
            assert_eq!(store.var_get(scope, "status").unwrap(), None);
            assert!(!store.var_unset(scope, "status").unwrap());
        }
    }
}

on_both! {
    fn scopes_are_separate_namespaces(store) {
        let a = new_chat(store);
        let b = new_chat(store);
        store.var_set(VarScope::Chat(a), "x", &json!(1)).unwrap();
        store.var_set(VarScope::Global, "x", &json!(2)).unwrap();
        assert_eq!(
            store.var_get(VarScope::Chat(a), "x").unwrap(),
            Some(json!(1))
        );
        assert_eq!(store.var_get(VarScope::Chat(b), "x").unwrap(), None);
        assert_eq!(
            store.var_get(VarScope::Global, "x").unwrap(),
            Some(json!(2))
        );
    }
}

on_both! {
    fn json_types_are_kept(store) {
        let values = [
            json!("007"),
            json!(7),
            json!(7.5),
            json!(true),
            json!(null),
            json!([1, "a"]),
            json!({"k": {"n": []}}),
        ];
        for (i, value) in values.iter().enumerate() {
            let name = format!("v{i}");
            store.var_set(VarScope::Global, &name, value).unwrap();
            assert_eq!(
                store.var_get(VarScope::Global, &name).unwrap().as_ref(),
                Some(value)
            );
        }
        let all = store.var_all(VarScope::Global).unwrap();
        assert_eq!(all.len(), values.len());
    }
}

on_both! {
    fn replace_all_swaps_the_whole_scope(store) {
        let chat = new_chat(store);
        store
            .var_set(VarScope::Chat(chat), "old", &json!(1))
            .unwrap();
        let mut vars = serde_json::Map::new();
        vars.insert("hp".into(), json!(5));
        vars.insert("bag".into(), json!(["a"]));
        store.var_replace_all(VarScope::Chat(chat), &vars).unwrap();
        assert_eq!(
            Value::Object(store.var_all(VarScope::Chat(chat)).unwrap()),
            json!({"bag": ["a"], "hp": 5})
        );
    }
}

on_both! {
    fn missing_owners_and_bad_paths_are_errors(store) {
        assert!(matches!(
            store.var_set(VarScope::Chat(999), "x", &json!(1)),
            Err(StoreError::NotFound { .. })
        ));
        assert!(matches!(
            store.var_set(VarScope::Message(999), "x", &json!(1)),
            Err(StoreError::NotFound { .. })
        ));
        assert_eq!(store.var_get(VarScope::Chat(999), "x").unwrap(), None);
        for bad in ["", "a..b", ".a", "a.", "[0]"] {
            assert!(
                matches!(
                    store.var_set(VarScope::Global, bad, &json!(1)),
                    Err(StoreError::InvalidPath { .. })
                ),
                "{bad:?}"
            );
        }
    }
}

on_both! {
    fn variables_die_with_their_chat_and_message(store) {
        let chat = new_chat(store);
        let message = store
            .message_append(
                chat.into(),
                &tavo_model::Message::new(tavo_model::Role::User, "hi"),
            )
            .unwrap();
        store.var_set(VarScope::Chat(chat), "x", &json!(1)).unwrap();
        store
            .var_set(VarScope::Message(message.get()), "y", &json!(2))
            .unwrap();
        store.message_delete(message).unwrap();
        assert!(
            store
                .var_all(VarScope::Message(message.get()))
                .unwrap()
                .is_empty()
        );
        store.chat_delete(chat.into()).unwrap();
        assert!(store.var_all(VarScope::Chat(chat)).unwrap().is_empty());
    }
}
