//! `tavo user …` and `--user NAME`: the accounts of a data folder from the command line. The
//! password comes on stdin (never an argument); the first admin owns the folder's existing
//! library; `--user` works on that user's library alone; removing a user deletes their library
//! unless `--keep-data`, and the last admin cannot go.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::{json, ok, tavo};

/// Runs `tavo` with `stdin` piped in.
fn tavo_stdin(data: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tavo"))
        .args(args)
        .env("TAVO_DATA_DIR", data)
        .env_remove("TAVO_USER")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run tavo: {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("wait")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn users_are_added_listed_isolated_and_removed_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    // A single-user library first: it becomes the first admin's, unchanged.
    ok(tavo(
        &data,
        &[
            "persona",
            "create",
            "--name",
            "Before accounts",
            "--description",
            "kept",
        ],
    ));
    let added = ok(tavo_stdin(
        &data,
        &["user", "add", "Ann", "--admin"],
        "password-ann\n",
    ));
    assert!(added.starts_with("added ann (admin)"), "{added}");
    let short = tavo_stdin(&data, &["user", "add", "bob"], "short\n");
    assert_eq!(short.status.code(), Some(1));
    assert!(
        stderr(&short).contains("8 to 1024 characters"),
        "{}",
        stderr(&short)
    );
    ok(tavo_stdin(&data, &["user", "add", "bob"], "password-bob\n"));
    let dup = tavo_stdin(&data, &["user", "add", "BOB"], "password-bob\n");
    assert!(stderr(&dup).contains("exists already"), "{}", stderr(&dup));

    let users = json(tavo(&data, &["user", "list", "--json"]));
    let names: Vec<&str> = users
        .as_array()
        .map(|a| a.iter().filter_map(|u| u["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["ann", "bob"]);
    assert_eq!(users[0]["library"], ".");
    assert!(users.to_string().contains("usageBytes"));
    assert!(
        !users.to_string().contains("argon2"),
        "no password hash leaves"
    );

    // Ann's library is the folder's own; bob's is empty and his writes stay his.
    let anns = ok(tavo(&data, &["--user", "ann", "list", "persona"]));
    assert!(anns.contains("Before accounts"), "{anns}");
    let bobs = ok(tavo(&data, &["--user", "bob", "list", "persona"]));
    assert!(!bobs.contains("Before accounts"), "{bobs}");
    ok(tavo(
        &data,
        &[
            "--user",
            "bob",
            "persona",
            "create",
            "--name",
            "Bob only",
            "--description",
            "his",
        ],
    ));
    assert!(!ok(tavo(&data, &["--user", "ann", "list", "persona"])).contains("Bob only"));
    let nobody = tavo(&data, &["--user", "nobody", "list", "persona"]);
    assert!(
        stderr(&nobody).contains("there is no user named nobody"),
        "{}",
        stderr(&nobody)
    );
    let info = ok(tavo(&data, &["--user", "bob", "mcp", "info"]));
    assert!(info.contains("/mcp"), "{info}");

    // The last admin stays; the owner of the folder's library keeps it; bob's library goes.
    let last = tavo(&data, &["user", "disable", "ann"]);
    assert!(stderr(&last).contains("last admin"), "{}", stderr(&last));
    let bob_dir = data.join(users[1]["library"].as_str().unwrap_or("none"));
    assert!(bob_dir.is_dir());
    ok(tavo(&data, &["user", "remove", "bob"]));
    assert!(!bob_dir.exists(), "bob's library was deleted");
    assert_eq!(
        json(tavo(&data, &["user", "list", "--json"]))
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[test]
fn a_whole_server_backup_restores_every_user_and_their_library() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join("data");
    ok(tavo_stdin(
        &data,
        &["user", "add", "ann", "--admin"],
        "password-ann\n",
    ));
    ok(tavo_stdin(&data, &["user", "add", "bob"], "password-bob\n"));
    for (user, persona) in [("ann", "Ann's persona"), ("bob", "Bob's persona")] {
        ok(tavo(
            &data,
            &[
                "--user",
                user,
                "persona",
                "create",
                "--name",
                persona,
                "--description",
                "mine",
            ],
        ));
    }
    // The shared library: an admin's library publishes, nobody else's.
    let published = ok(tavo(&data, &["shared", "publish", "persona", "1"]));
    assert!(
        published.contains("\"Ann's persona\" as shared persona"),
        "{published}"
    );
    let refused = tavo(
        &data,
        &["--user", "bob", "shared", "publish", "persona", "1"],
    );
    assert!(
        stderr(&refused).contains("not an admin"),
        "{}",
        stderr(&refused)
    );
    let shared = json(tavo(&data, &["shared", "list", "--json"]));
    assert_eq!(shared[0]["name"], "Ann's persona", "{shared}");
    assert_eq!(shared[0]["publishedBy"], "ann", "{shared}");

    let backup = dir.path().join("server-backup");
    ok(tavo(
        &data,
        &["user", "backup", backup.to_str().unwrap_or_default()],
    ));
    assert!(backup.join("accounts.sqlite").is_file());
    assert!(backup.join("libraries/bob.tavobackup").is_file());
    let again = tavo(
        &data,
        &["user", "backup", backup.to_str().unwrap_or_default()],
    );
    assert!(stderr(&again).contains("not empty"), "{}", stderr(&again));

    let moved = dir.path().join("moved");
    let done = ok(tavo(
        &moved,
        &["user", "restore", backup.to_str().unwrap_or_default()],
    ));
    assert!(done.starts_with("restored 2 users"), "{done}");
    let shared = json(tavo(&moved, &["shared", "list", "--json"]));
    assert_eq!(
        shared[0]["name"], "Ann's persona",
        "the shared library is restored: {shared}"
    );
    let removed = ok(tavo(&moved, &["shared", "remove", "persona", "1"]));
    assert!(removed.starts_with("removed shared persona 1"), "{removed}");
    let users = json(tavo(&moved, &["user", "list", "--json"]));
    assert_eq!(users.as_array().map(Vec::len), Some(2));
    for (user, persona, other) in [
        ("ann", "Ann's persona", "Bob's"),
        ("bob", "Bob's persona", "Ann's"),
    ] {
        let list = ok(tavo(&moved, &["--user", user, "list", "persona"]));
        assert!(
            list.contains(persona) && !list.contains(other),
            "{user}: {list}"
        );
    }
    // The restored passwords are the users' own.
    let accounts = tavo_accounts::Accounts::open(&moved).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        accounts
            .login("bob", "password-bob", std::net::Ipv4Addr::LOCALHOST.into())
            .is_ok()
    );
    let over = tavo(
        &moved,
        &["user", "restore", backup.to_str().unwrap_or_default()],
    );
    assert!(stderr(&over).contains("--yes"), "{}", stderr(&over));
}
