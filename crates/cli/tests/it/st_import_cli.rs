//! `tavo import` of a SillyTavern user folder: `settings.json` gives one persona per line, a
//! group definition in `groups/` takes its chat file from `group chats/` (which is then not
//! imported again on its own), with the members, reply mode and muted member.

use std::path::PathBuf;
use std::process::Output;

use crate::support::tavo;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../formats/tests/data/st"
    ))
    .join(name)
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

#[test]
fn a_sillytavern_user_folder_imports_personas_and_group_chats() {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path().join("lib");
    let user = dir.path().join("default-user");
    for sub in ["characters", "groups", "group chats"] {
        std::fs::create_dir_all(user.join(sub)).expect("mkdir");
    }
    for name in ["Ann", "Bo"] {
        std::fs::write(
            user.join("characters").join(format!("{name}.json")),
            format!(r#"{{"spec":"chara_card_v2","spec_version":"2.0","data":{{"name":"{name}","first_mes":"hi"}}}}"#),
        )
        .expect("card");
    }
    std::fs::copy(fixture("settings.json"), user.join("settings.json")).expect("copy");
    std::fs::copy(
        fixture("group.json"),
        user.join("groups/1721432460000.json"),
    )
    .expect("copy");
    let chat = "2024-7-19@22h51m00s.jsonl";
    std::fs::copy(fixture(chat), user.join("group chats").join(chat)).expect("copy");
    // Characters first, so the group finds its members.
    let out = tavo(
        &data,
        &["import", user.join("characters").to_str().expect("path")],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = tavo(
        &data,
        &[
            "import",
            user.join("settings.json").to_str().expect("path"),
            user.join("groups").to_str().expect("path"),
            user.join("group chats").to_str().expect("path"),
            "--json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = lines(&out);
    let kinds: Vec<&str> = got
        .iter()
        .map(|l| l["kind"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(kinds, ["persona", "persona", "persona", "chat"], "{got:?}");
    assert_eq!(got[0]["name"], "Wren");
    let chat_line = &got[3];
    assert_eq!(chat_line["name"], "2024-7-19@22h51m00s");
    assert!(
        chat_line["warnings"]
            .as_array()
            .expect("warnings")
            .iter()
            .any(|w| w["code"] == "chat.character-unmatched"
                && w["message"].as_str().unwrap_or("").contains("Nobody Here")),
        "{chat_line}"
    );
    let id = chat_line["chatId"].as_i64().expect("chatId").to_string();
    let show = tavo(&data, &["show", "chat", &id, "--json"]);
    let chat: Value = serde_json::from_slice(&show.stdout).expect("chat json");
    assert_eq!(chat["replyMode"], "all");
    assert_eq!(chat["characters"].as_array().map(Vec::len), Some(2));
    assert_eq!(chat["mutedCharacterIds"].as_array().map(Vec::len), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("imported 3 of 3 file(s)"), "{stderr}");
}
