//! Chat and global file storage: name rules, save/load/delete/exists, listing and paging.

use crate::support::store;
use tavo_store::{FileScope, StoreError};

#[test]
fn save_load_overwrite_delete_exists() {
    let (dir, store) = store();
    let files = store.files();
    let path = files.save(FileScope::Chat(7), "note.md", b"# one").unwrap();
    assert_eq!(path, "files/chat/note.md");
    assert!(dir.path().join("files/chat/7/note.md").is_file());
    assert_eq!(
        files
            .load(FileScope::Chat(7), "note.md")
            .unwrap()
            .as_deref(),
        Some(&b"# one"[..])
    );
    files.save(FileScope::Chat(7), "note.md", b"# two").unwrap();
    assert_eq!(
        files
            .load(FileScope::Chat(7), "note.md")
            .unwrap()
            .as_deref(),
        Some(&b"# two"[..])
    );
    assert!(
        !files.exists(FileScope::Chat(8), "note.md").unwrap(),
        "chats do not share files"
    );
    assert!(!files.exists(FileScope::Global, "note.md").unwrap());
    assert!(files.delete(FileScope::Chat(7), "note.md").unwrap());
    assert!(!files.delete(FileScope::Chat(7), "note.md").unwrap());
    assert_eq!(files.load(FileScope::Chat(7), "note.md").unwrap(), None);
}

#[test]
fn every_operation_refuses_bad_names() {
    let (dir, store) = store();
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
    assert!(!dir.path().join("escape.txt").exists());
    assert!(!dir.path().join("files/escape.txt").exists());
}

#[test]
fn listing_is_sorted_case_sensitively_and_pages_by_cursor() {
    let (_dir, store) = store();
    let files = store.files();
    for name in ["b.txt", "B.png", "a.json", "c.bin", "A.md"] {
        files
            .save(FileScope::Global, name, name.as_bytes())
            .unwrap();
    }
    let first = files.list(FileScope::Global, 2, None).unwrap();
    assert_eq!(
        first
            .files
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>(),
        ["A.md", "B.png"]
    );
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
    assert_eq!(
        second
            .files
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>(),
        ["a.json", "b.txt"]
    );
    let third = files
        .list(FileScope::Global, 2, second.next_cursor.as_deref())
        .unwrap();
    assert_eq!(
        third
            .files
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>(),
        ["c.bin"]
    );
    assert_eq!(third.next_cursor, None);
    let json = serde_json::to_value(&third).unwrap();
    assert!(json.get("nextCursor").is_none());
    assert_eq!(json["files"][0]["mimeType"], "application/octet-stream");
    assert!(
        files
            .list(FileScope::Chat(3), 10, None)
            .unwrap()
            .files
            .is_empty()
    );
}
