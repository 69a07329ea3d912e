//! Chat and global file storage, on both databases: name rules, save/load/delete/exists,
//! listing and paging, the size cap, and on PostgreSQL the content-addressed storage behind
//! it (one blob per distinct content, chunked, collected when no name is left).

use crate::support::on_both;
use tavo_model::{Chat, ChatId};
use tavo_store::{Dialect, FileScope, MAX_FILE_BYTES, Store, StoreError};

/// Rows of a PostgreSQL library's file tables, `(blobs, chunks, names)`; `None` on SQLite.
fn pg_rows(store: &Store) -> Option<(u64, u64, u64)> {
    let stats = store.files().blob_stats().unwrap()?;
    Some((stats.blobs, stats.chunks, stats.names))
}

fn names(page: &tavo_store::FilePage) -> Vec<&str> {
    page.files.iter().map(|f| f.name.as_str()).collect()
}

on_both! {
    fn save_load_overwrite_delete_exists(store) {
        let files = store.files();
        let path = files.save(FileScope::Chat(7), "note.md", b"# one").unwrap();
        assert_eq!(path, "files/chat/note.md");
        if store.dialect() == Dialect::Sqlite {
            assert!(store.data_dir().join("files/chat/7/note.md").is_file());
        }
        assert_eq!(
            files.load(FileScope::Chat(7), "note.md").unwrap().as_deref(),
            Some(&b"# one"[..])
        );
        files.save(FileScope::Chat(7), "note.md", b"# two").unwrap();
        assert_eq!(
            files.load(FileScope::Chat(7), "note.md").unwrap().as_deref(),
            Some(&b"# two"[..])
        );
        assert!(
            !files.exists(FileScope::Chat(8), "note.md").unwrap(),
            "chats do not share files"
        );
        assert!(!files.exists(FileScope::Global, "note.md").unwrap());
        let stat = files.stat(FileScope::Chat(7), "note.md").unwrap().unwrap();
        assert_eq!((stat.size, stat.mime_type.as_str()), (5, "text/markdown"));
        assert!(files.delete(FileScope::Chat(7), "note.md").unwrap());
        assert!(!files.delete(FileScope::Chat(7), "note.md").unwrap());
        assert_eq!(files.load(FileScope::Chat(7), "note.md").unwrap(), None);
        // The overwritten and the deleted content are gone from the database too.
        if let Some(rows) = pg_rows(store) {
            assert_eq!(rows, (0, 0, 0));
        }
        // An empty file is a file.
        files.save(FileScope::Global, "empty", b"").unwrap();
        assert_eq!(files.load(FileScope::Global, "empty").unwrap(), Some(Vec::new()));
    }

    fn every_operation_refuses_bad_names(store) {
        let files = store.files();
        for bad in ["../escape.txt", "a/b", "a\\b", "c:x", "..", "x..y", ""] {
            assert!(
                matches!(
                    files.save(FileScope::Global, bad, b"x"),
                    Err(StoreError::InvalidFileName { .. })
                ),
                "{bad:?}"
            );
            assert!(files.load(FileScope::Global, bad).is_err());
            assert!(files.delete(FileScope::Global, bad).is_err());
            assert!(files.exists(FileScope::Global, bad).is_err());
        }
        assert!(!store.data_dir().join("escape.txt").exists());
        assert!(!store.data_dir().join("files/escape.txt").exists());
    }

    fn listing_is_sorted_case_sensitively_and_pages_by_cursor(store) {
        let files = store.files();
        for name in ["b.txt", "B.png", "a.json", "c.bin", "A.md"] {
            files.save(FileScope::Global, name, name.as_bytes()).unwrap();
        }
        let first = files.list(FileScope::Global, 2, None).unwrap();
        assert_eq!(names(&first), ["A.md", "B.png"]);
        assert_eq!(first.files[1].mime_type, "image/png");
        assert_eq!(first.files[1].size, 5);
        assert_eq!(first.files[1].path, "files/global/B.png");
        assert!(first.files[1].modified_at.ends_with('Z'));
        let cursor = first.next_cursor.clone().unwrap();
        assert!(
            files.list(FileScope::Chat(1), 2, Some(&cursor)).is_err(),
            "a cursor stays in its scope"
        );
        let second = files.list(FileScope::Global, 2, Some(&cursor)).unwrap();
        assert_eq!(names(&second), ["a.json", "b.txt"]);
        let third = files
            .list(FileScope::Global, 2, second.next_cursor.as_deref())
            .unwrap();
        assert_eq!(names(&third), ["c.bin"]);
        assert_eq!(third.next_cursor, None);
        // A page that ends exactly at the last file says so.
        let all = files.list(FileScope::Global, 5, None).unwrap();
        assert_eq!((all.files.len(), all.next_cursor), (5, None));
        assert!(files.list(FileScope::Global, 0, None).is_err());
        let json = serde_json::to_value(&third).unwrap();
        assert!(json.get("nextCursor").is_none());
        assert_eq!(json["files"][0]["mimeType"], "application/octet-stream");
        assert!(files.list(FileScope::Chat(3), 10, None).unwrap().files.is_empty());
    }

    fn the_same_bytes_are_stored_once(store) {
        let files = store.files();
        let bytes = b"the same picture".to_vec();
        files.save(FileScope::Chat(1), "a.png", &bytes).unwrap();
        files.save(FileScope::Global, "b.png", &bytes).unwrap();
        if let Some(rows) = pg_rows(store) {
            assert_eq!(rows, (1, 1, 2), "two names, one blob");
        }
        assert!(files.delete(FileScope::Chat(1), "a.png").unwrap());
        assert_eq!(files.load(FileScope::Global, "b.png").unwrap(), Some(bytes.clone()));
        if let Some(rows) = pg_rows(store) {
            assert_eq!(rows, (1, 1, 1), "the other name keeps the blob");
        }
        assert!(files.delete(FileScope::Global, "b.png").unwrap());
        if let Some(rows) = pg_rows(store) {
            assert_eq!(rows, (0, 0, 0), "no name left: the blob went");
        }
    }

    fn a_file_of_several_chunks_round_trips(store) {
        let files = store.files();
        // 3 full chunks of 256 KiB and a partial one, bytes that repeat no chunk.
        let bytes: Vec<u8> = (0..(3 * 256 * 1024 + 1234u32))
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        files.save(FileScope::Global, "big.bin", &bytes).unwrap();
        assert_eq!(files.load(FileScope::Global, "big.bin").unwrap(), Some(bytes.clone()));
        assert_eq!(
            files.stat(FileScope::Global, "big.bin").unwrap().map(|e| e.size),
            Some(bytes.len() as u64)
        );
        if let Some(rows) = pg_rows(store) {
            assert_eq!(rows, (1, 4, 1));
        }
        let mut streamed = Vec::new();
        let n = files.copy_tree_file("global/big.bin", &mut streamed).unwrap();
        assert_eq!((n, streamed == bytes), (bytes.len() as u64, true));
    }

    fn a_file_over_the_cap_is_refused_and_nothing_is_written(store) {
        let files = store.files();
        let size = usize::try_from(MAX_FILE_BYTES).unwrap() + 1;
        let e = files.save(FileScope::Global, "huge.bin", &vec![0; size]).unwrap_err();
        assert!(matches!(e, StoreError::FileTooLarge { .. }), "{e}");
        assert_eq!(e.code(), "limit_exceeded");
        assert!(e.to_string().contains("huge.bin"), "{e}");
        assert!(!files.exists(FileScope::Global, "huge.bin").unwrap());
        assert!(files.tree_files().unwrap().is_empty());
        if let Some(rows) = pg_rows(store) {
            assert_eq!(rows, (0, 0, 0));
        }
        let card = files.save_card_files(1, &[("a.bin".to_owned(), vec![0; size])]);
        assert!(matches!(card, Err(StoreError::FileTooLarge { .. })));
        assert!(files.load_card_files(1).unwrap().is_empty());
    }

    fn deleting_a_chat_deletes_its_files_and_cloning_copies_them(store) {
        let chat = store.chat_create(&Chat { name: "c".into(), ..Default::default() }).unwrap();
        let files = store.files();
        files.save(FileScope::Chat(chat.0), "a.txt", b"a").unwrap();
        files.save(FileScope::Chat(chat.0), "b.txt", b"b").unwrap();
        files.save(FileScope::Global, "g.txt", b"a").unwrap();
        let copy = store.chat_clone(chat, "copy").unwrap();
        let listed = files.list(FileScope::Chat(copy.0), 10, None).unwrap();
        assert_eq!(names(&listed), ["a.txt", "b.txt"]);
        assert_eq!(files.load(FileScope::Chat(copy.0), "b.txt").unwrap(), Some(b"b".to_vec()));
        assert!(store.chat_delete(chat).unwrap());
        assert!(files.list(FileScope::Chat(chat.0), 10, None).unwrap().files.is_empty());
        assert_eq!(files.load(FileScope::Chat(copy.0), "a.txt").unwrap(), Some(b"a".to_vec()));
        assert!(store.chat_delete(copy).unwrap());
        assert_eq!(files.load(FileScope::Global, "g.txt").unwrap(), Some(b"a".to_vec()));
        if let Some(rows) = pg_rows(store) {
            assert_eq!(rows, (1, 1, 1), "only the global file is left");
        }
        assert!(store.chat_get(ChatId(chat.0)).unwrap().is_none());
    }

    fn the_tree_lists_every_library_file_and_not_the_tts_cache(store) {
        let files = store.files();
        files.save(FileScope::Chat(3), "c.txt", b"c").unwrap();
        files.save(FileScope::Global, "g.txt", b"gg").unwrap();
        files.save_card_files(5, &[("x_meta/a.json".to_owned(), b"{}".to_vec())]).unwrap();
        files.tts_save("k.mp3", b"ID3").unwrap();
        let tree: Vec<(String, u64)> = files
            .tree_files()
            .unwrap()
            .into_iter()
            .map(|f| (f.path, f.size))
            .collect();
        assert_eq!(
            tree,
            [
                ("character/5/x_meta/a.json".to_owned(), 2),
                ("chat/3/c.txt".to_owned(), 1),
                ("global/g.txt".to_owned(), 2),
            ]
        );
        assert_eq!(files.tts_find(&["x.mp3".into(), "k.mp3".into()]).unwrap(), Some(("k.mp3".into(), 3)));
        assert_eq!(files.tts_load("k.mp3").unwrap(), Some(b"ID3".to_vec()));
        assert_eq!(files.tts_usage().unwrap(), (1, 3));
        assert_eq!(files.tts_clear().unwrap(), (1, 3));
        assert_eq!(files.tts_usage().unwrap(), (0, 0));
        assert_eq!(files.tts_load("k.mp3").unwrap(), None);
    }
}

/// The same saves give the same pages, cursors included, on both databases.
#[test]
fn listing_pages_are_the_same_on_both_databases() {
    let Some(pg) = crate::support::library(true) else {
        return;
    };
    let lite = crate::support::library(false).unwrap();
    let pages = |store: &Store| {
        for i in (0..23).rev() {
            let name = format!("{}{i:02}.txt", if i % 2 == 0 { "a" } else { "B" });
            store
                .files()
                .save(FileScope::Chat(4), &name, name.as_bytes())
                .unwrap();
        }
        let mut out = Vec::new();
        let mut cursor = None;
        loop {
            let page = store
                .files()
                .list(FileScope::Chat(4), 5, cursor.as_deref())
                .unwrap();
            out.push((
                page.files
                    .iter()
                    .map(|f| (f.name.clone(), f.size, f.path.clone(), f.mime_type.clone()))
                    .collect::<Vec<_>>(),
                page.next_cursor.clone(),
            ));
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return out,
            }
        }
    };
    let (a, b) = (pages(&lite.store), pages(&pg.store));
    assert_eq!(a.len(), 5);
    assert_eq!(a, b);
}
