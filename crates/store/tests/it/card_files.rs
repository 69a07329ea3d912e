//! A card's own files (`files/character/<id>/…`) stored with the character and deleted with it,
//! and a group chat imported with muted members.

use crate::support::{character, on_both};
use tavo_model::{AssetKind, Character, Chat};
use tavo_store::{Dialect, Store};

on_both! {
    fn card_files_live_and_die_with_their_character(store) {
        let files = vec![
            ("x_meta/a.json".to_owned(), b"{}".to_vec()),
            ("assets/other/image/a.png".to_owned(), b"img".to_vec()),
        ];
        let r = store
            .import_character_with_files(&character("A"), None, None, None, &files)
            .expect("import");
        let id = r.character_id;
        let root = store.data_dir().join(format!("files/character/{}", id.0));
        if store.dialect() == Dialect::Sqlite {
            assert!(root.join("x_meta/a.json").is_file());
        }
        let mut sorted = files.clone();
        sorted.sort();
        assert_eq!(store.character_card_files(id).expect("load"), sorted);
        // Replaced whole.
        store.files().save_card_files(id.0, &[("b.bin".to_owned(), vec![1])]).expect("replace");
        assert_eq!(store.character_card_files(id).expect("load"), vec![("b.bin".to_owned(), vec![1])]);
        assert!(
            store
                .asset_delete(AssetKind::Character, id.0)
                .expect("delete")
        );
        assert!(!root.exists());
        assert!(store.character_card_files(id).expect("load").is_empty());
        // A bad path is refused before anything is stored.
        let e = store
            .import_character_with_files(
                &character("B"),
                None,
                None,
                None,
                &[("../../escape".to_owned(), vec![1])],
            )
            .unwrap_err();
        assert!(e.to_string().contains("escape"), "{e}");
        assert!(store.list::<Character>().expect("list").is_empty());
        assert!(store.files().tree_files().expect("tree").is_empty());
    }
}

#[test]
fn a_group_chat_mutes_the_named_members() {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open(dir.path()).expect("store");
    let ann = store.create(&character("Ann")).expect("ann");
    let bo = store.create(&character("Bo")).expect("bo");
    let names = vec!["Ann".to_owned(), "Bo".to_owned(), "Zed".to_owned()];
    let r = store
        .write(|tx| {
            tx.import_group_chat(
                Chat {
                    name: "g".into(),
                    ..Default::default()
                },
                Vec::new(),
                &names,
                None,
                &["Bo".to_owned(), "Zed".to_owned()],
            )
        })
        .expect("import");
    assert_eq!(r.unmatched, ["Zed"]);
    let chat: Chat = store.require(r.chat_id).expect("chat");
    assert_eq!(
        chat.characters.iter().map(|c| c.id).collect::<Vec<_>>(),
        [ann, bo]
    );
    assert_eq!(chat.muted(), [bo]);
}
