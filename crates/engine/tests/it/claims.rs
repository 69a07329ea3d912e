//! One live reply per chat across engines and processes: the claim kept in the chat's reply
//! record refuses a second reply while its owner runs, and is taken over — its reply marked
//! cancelled — once the owner is gone, even when its pid now names another process or a
//! zombie.

#![cfg(target_os = "linux")]

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::support::{self, lab};
use tavo_engine::{EngineError, ReplyRecord, ReplyRequest, ReplyStatus};
use tavo_model::{Message, Role};
use tavo_testkit::{Script, Turn, Wire};
use tavo_tools::Services;

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// A turn that streams for a few seconds unless cancelled.
fn slow_turn() -> Turn {
    Turn {
        text: Some("a slow answer that takes its time".into()),
        chunk: Some(1),
        delay_ms: 100,
        ..Turn::default()
    }
}

/// Field 22 of `/proc/<pid>/stat` (start time in clock ticks after boot) and field 3 (state).
fn stat(pid: u32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some((
        fields.first()?.chars().next()?,
        fields.get(19)?.parse().ok()?,
    ))
}

fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_owned())
}

/// The pid of a process that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut child = ok(Command::new("true").spawn());
    let pid = child.id();
    ok(child.wait());
    pid
}

fn sleeper() -> Child {
    ok(Command::new("sleep").arg("30").spawn())
}

/// A `running` record of a reply writing an assistant message of the lab's chat, owned by
/// `pid` started at `start`.
fn stale_record(lab: &support::Lab, pid: u32, start: Option<u64>) -> ReplyRecord {
    let message = ok(lab
        .store
        .message_append(lab.chat, &Message::new(Role::Assistant, "half a")));
    let record = ReplyRecord {
        id: "rpl_elsewhere".into(),
        chat_id: lab.chat,
        message_id: Some(message),
        status: ReplyStatus::Running,
        pid,
        process_start: start,
        boot_id: boot_id(),
        replica: None,
        started_at: "2026-01-01T00:00:00.000Z".into(),
        updated_at: "2026-01-01T00:00:00.000Z".into(),
    };
    ok(lab.store.setting_set(
        &ReplyRecord::key(lab.chat),
        &ok(serde_json::to_value(&record)),
    ));
    record
}

fn stored_status(lab: &support::Lab) -> Option<(String, ReplyStatus)> {
    ReplyRecord::load(&lab.store, lab.chat)
        .ok()
        .flatten()
        .map(|r| (r.id, r.status))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_engine_on_the_same_library_is_told_the_chat_is_busy() {
    let lab = lab(
        Wire::OpenaiChat,
        Script::new(vec![slow_turn(), Turn::text("second")]),
        &[],
    )
    .await;
    let first = lab.engine(Services::default(), None);
    let second = lab.engine(Services::default(), None);
    let live = ok(first.start(ReplyRequest::normal(lab.chat, "one")));

    let refused = second.start(ReplyRequest::normal(lab.chat, "two"));
    match refused {
        Err(EngineError::BusyElsewhere { chat, reply, pid }) => {
            assert_eq!(
                (chat, reply.as_str(), pid),
                (lab.chat, live.id(), std::process::id())
            );
        }
        other => panic!("expected busy, got {other:?}"),
    }
    let message = second
        .start(ReplyRequest::normal(lab.chat, "two"))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        message.contains(live.id()) && message.contains("pid"),
        "{message}"
    );
    // The refused start wrote nothing: no user message, the claim still the first reply's.
    // (The first reply's own user message is written in the background, so the count is no
    // measure: look for the refused text.)
    assert!(
        lab.messages().iter().all(|m| m.content != "two"),
        "{:?}",
        lab.messages()
    );
    assert_eq!(
        stored_status(&lab),
        Some((live.id().to_owned(), ReplyStatus::Running))
    );
    // A recovery by the second engine leaves the first's live reply alone.
    assert!(ok(second.recover()).is_empty());

    live.cancel();
    assert_eq!(live.wait().await, ReplyStatus::Cancelled);
    let next = ok(second.start(ReplyRequest::normal(lab.chat, "two")));
    assert_eq!(next.wait().await, ReplyStatus::Finished);
    assert_eq!(
        stored_status(&lab),
        Some((next.id().to_owned(), ReplyStatus::Finished))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_that_fails_after_the_claim_gives_it_back() {
    let lab = lab(Wire::OpenaiChat, Script::new(vec![]), &[]).await;
    let engine = lab.engine(Services::default(), None);
    // A continue in a chat without a character's message fails after the claim is taken.
    let failed = engine.start(ReplyRequest::new(
        lab.chat,
        tavo_engine::ReplyKind::Continue,
    ));
    assert!(matches!(failed, Err(EngineError::NothingToContinue(_))));
    assert_eq!(stored_status(&lab), None, "the chat had no record before");
    let other = lab.engine(Services::default(), None);
    let refused = other.start(ReplyRequest::new(
        lab.chat,
        tavo_engine::ReplyKind::Continue,
    ));
    assert!(
        matches!(refused, Err(EngineError::NothingToContinue(_))),
        "{refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_of_a_dead_process_is_taken_over_and_its_reply_cancelled() {
    let lab = lab(Wire::OpenaiChat, Script::new(vec![Turn::text("hi")]), &[]).await;
    let stale = stale_record(&lab, dead_pid(), Some(1));
    let engine = lab.engine(Services::default(), None);
    let handle = ok(engine.start(ReplyRequest::normal(lab.chat, "hello")));
    assert_eq!(handle.wait().await, ReplyStatus::Finished);
    let old = ok(lab.store.message_get(
        stale
            .message_id
            .expect("the stale record names its message"),
    ));
    let old = old.unwrap_or_else(|| panic!("the old message is kept"));
    assert_eq!(old.extra["tavoReply"]["id"], "rpl_elsewhere");
    assert_eq!(old.extra["tavoReply"]["status"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_pid_holds_the_chat_only_with_its_own_start_time() {
    let lab = lab(Wire::OpenaiChat, Script::new(vec![Turn::text("hi")]), &[]).await;
    let mut child = sleeper();
    let pid = child.id();
    let (_, start) = stat(pid).unwrap_or_else(|| panic!("no stat for {pid}"));
    let engine = lab.engine(Services::default(), None);

    // The recorded process is the one running under that pid: busy, and recovery keeps it.
    stale_record(&lab, pid, Some(start));
    match engine.start(ReplyRequest::normal(lab.chat, "hello")) {
        Err(EngineError::BusyElsewhere {
            reply, pid: owner, ..
        }) => {
            assert_eq!((reply.as_str(), owner), ("rpl_elsewhere", pid));
        }
        other => panic!("expected busy, got {other:?}"),
    }
    assert!(ok(engine.recover()).is_empty());

    // The same pid with another start time is another process: the claim is stale.
    stale_record(&lab, pid, Some(start + 1));
    let handle = ok(engine.start(ReplyRequest::normal(lab.chat, "hello")));
    assert_eq!(handle.wait().await, ReplyStatus::Finished);

    // And so is a record of another boot.
    let mut other_boot = stale_record(&lab, pid, Some(start));
    other_boot.boot_id = Some("00000000-0000-0000-0000-000000000000".into());
    ok(lab.store.setting_set(
        &ReplyRecord::key(lab.chat),
        &ok(serde_json::to_value(&other_boot)),
    ));
    let cancelled = ok(engine.recover());
    assert_eq!(cancelled.len(), 1);
    assert_eq!(cancelled[0].id, "rpl_elsewhere");
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zombie_does_not_hold_the_chat() {
    let lab = lab(Wire::OpenaiChat, Script::new(vec![Turn::text("hi")]), &[]).await;
    let mut child = sleeper();
    let pid = child.id();
    let (_, start) = stat(pid).unwrap_or_else(|| panic!("no stat for {pid}"));
    ok(child.kill());
    // Killed but not reaped: the pid stays, in state Z, with the same start time.
    let deadline = Instant::now() + Duration::from_secs(10);
    while stat(pid).map(|(state, _)| state) != Some('Z') {
        assert!(Instant::now() < deadline, "the child never became a zombie");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stale_record(&lab, pid, Some(start));
    let engine = lab.engine(Services::default(), None);
    let handle = ok(engine.start(ReplyRequest::normal(lab.chat, "hello")));
    assert_eq!(handle.wait().await, ReplyStatus::Finished);
    let _ = child.wait();
}
