//! Opening a library: idempotent migrations, persistence across opens, atomic transactions.

use serde_json::json;
use tavo_model::{Character, Lorebook};
use tavo_store::{Store, StoreError};

#[test]
fn opening_twice_is_idempotent_and_keeps_data() {
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let store = Store::open(dir.path()).unwrap();
        store.setting_set("k", &json!({"a": 1})).unwrap();
        store
            .create(&Character {
                name: "Alice".into(),
                ..Default::default()
            })
            .unwrap()
    };
    let store = Store::open(dir.path()).unwrap();
    let again = Store::open(dir.path()).unwrap();
    assert_eq!(store.setting_get("k").unwrap(), Some(json!({"a": 1})));
    assert_eq!(again.require::<Character>(id).unwrap().name, "Alice");
    let version: i64 = store.read(|tx| tx.user_version()).unwrap();
    assert!(version >= 1);
}

#[test]
fn a_failed_transaction_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let result: Result<(), StoreError> = store.write(|tx| {
        tx.create(&Character {
            name: "Alice".into(),
            ..Default::default()
        })?;
        tx.create(&Lorebook {
            name: "Book".into(),
            ..Default::default()
        })?;
        tx.setting_set("x", &json!(1))?;
        // The last step of an import fails: nothing of the above may remain.
        tx.var_set(tavo_store::VarScope::Chat(12345), "x", &json!(1))
    });
    assert!(matches!(result, Err(StoreError::NotFound { .. })));
    assert!(store.list::<Character>().unwrap().is_empty());
    assert!(store.list::<Lorebook>().unwrap().is_empty());
    assert_eq!(store.setting_get("x").unwrap(), None);
}

#[test]
fn a_second_process_sees_committed_writes() {
    let dir = tempfile::tempdir().unwrap();
    let a = Store::open(dir.path()).unwrap();
    let b = Store::open(dir.path()).unwrap();
    a.setting_set("shared", &json!("yes")).unwrap();
    assert_eq!(b.setting_get("shared").unwrap(), Some(json!("yes")));
}
