//! Group replies end to end against the mock provider over 127.0.0.1: each reply mode, muted
//! members, `@name`, contextual speaker selection (its parsing and its fallback), an explicit
//! speaker, the hook sources of group turns, and cancelling in the middle of a group reply.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::{Answers, Lab, drive, final_status, lab};
use serde_json::Value;
use tavo_engine::{EventKind, ReplyEvent, ReplyRequest, ReplyStatus};
use tavo_model::{Character, CharacterId, CharacterSummary, Chat, ChatId, ReplyMode, Role};
use tavo_testkit::{Script, Turn, Wire};
use tavo_tools::Services;

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// A group chat of Ann, Bo and Cy (in that order) with `mode`, `muted` muted by name.
fn group(lab: &Lab, mode: ReplyMode, muted: &[&str]) -> (ChatId, Vec<CharacterId>) {
    ok(lab.store.write(|tx| {
        let mut members = Vec::new();
        for name in ["Ann", "Bo", "Cy"] {
            let id = tx.create(&Character {
                name: name.into(),
                description: format!("{name} is in the group."),
                ..Character::default()
            })?;
            members.push(CharacterSummary {
                id,
                name: name.into(),
                avatar: None,
            });
        }
        let ids: Vec<CharacterId> = members.iter().map(|m| m.id).collect();
        let mut chat = Chat {
            name: "group".into(),
            characters: members.clone(),
            reply_mode: mode,
            ..Chat::default()
        };
        let muted: Vec<CharacterId> = members
            .iter()
            .filter(|m| muted.contains(&m.name.as_str()))
            .map(|m| m.id)
            .collect();
        chat.set_muted(&muted);
        Ok((tx.chat_create(&chat)?, ids))
    }))
}

fn speakers(lab: &Lab, chat: ChatId) -> Vec<(Option<CharacterId>, String)> {
    ok(lab.store.messages_all(chat))
        .into_iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| (m.character_id, m.content))
        .collect()
}

fn speaker_events(events: &[ReplyEvent]) -> Vec<(Option<CharacterId>, String, u32, u32)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Speaker {
                character_id,
                name,
                turn,
                turns,
                ..
            } => Some((*character_id, name.clone(), *turn, *turns)),
            _ => None,
        })
        .collect()
}

fn warnings(events: &[ReplyEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Warning { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

async fn reply(
    lab: &Lab,
    chat: ChatId,
    text: &str,
    speaker: Option<CharacterId>,
) -> Vec<ReplyEvent> {
    let engine = lab.engine(Services::default(), None);
    let handle = ok(engine.start(ReplyRequest::new(
        chat,
        tavo_engine::ReplyKind::Normal {
            message: tavo_engine::UserMessage::new(text, None).ok(),
            speaker,
        },
    )));
    drive(&handle, &Answers::default()).await
}

fn texts(turns: &[&str]) -> Script {
    Script::new(turns.iter().map(|t| Turn::text(*t)).collect())
}

#[tokio::test]
async fn all_reply_answers_every_unmuted_member_in_order_in_one_reply() {
    let lab = lab(Wire::OpenaiChat, texts(&["from one", "from two"]), &[]).await;
    let (chat, ids) = group(&lab, ReplyMode::All, &["Bo"]);
    let events = reply(&lab, chat, "hello everyone", None).await;
    let (status, text) = final_status(&events);
    assert_eq!(status, ReplyStatus::Finished);
    assert_eq!(text, "from one\n\nfrom two");
    assert_eq!(
        speakers(&lab, chat),
        [
            (Some(ids[0]), "from one".to_owned()),
            (Some(ids[2]), "from two".to_owned())
        ]
    );
    assert_eq!(
        speaker_events(&events),
        [
            (Some(ids[0]), "Ann".to_owned(), 1, 2),
            (Some(ids[2]), "Cy".to_owned(), 2, 2)
        ]
    );
    let started: Vec<_> = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Started { .. }))
        .collect();
    assert_eq!(started.len(), 1, "one reply, one started event");
    assert_eq!(
        events.iter().filter(|e| e.is_final()).count(),
        1,
        "one finished event"
    );
    // The second speaker's prompt already holds the first one's answer, and is Cy's.
    let requests = lab.mock.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].body.to_string();
    assert!(second.contains("from one"), "{second}");
    assert!(second.contains("Cy is in the group."), "{second}");
}

#[tokio::test]
async fn natural_mode_answers_the_mentioned_members_in_mention_order() {
    let lab = lab(Wire::OpenaiChat, texts(&["c", "a"]), &[]).await;
    let (chat, ids) = group(&lab, ReplyMode::Natural, &[]);
    let events = reply(&lab, chat, "cy, what do you and ann think?", None).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    let who: Vec<_> = speakers(&lab, chat).into_iter().map(|s| s.0).collect();
    assert_eq!(who, [Some(ids[2]), Some(ids[0])]);
}

#[tokio::test]
async fn natural_mode_without_mentions_draws_one_member_with_the_reply_seed() {
    let lab = lab(Wire::OpenaiChat, texts(&["one voice"]), &[]).await;
    let (chat, ids) = group(&lab, ReplyMode::Natural, &["Ann"]);
    let events = reply(&lab, chat, "hello?", None).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    let who: Vec<_> = speakers(&lab, chat).into_iter().map(|s| s.0).collect();
    // The pool is the unmuted members (Bo, Cy); the seed is the prompt's (chat, 1 message).
    let pool = [ids[1], ids[2]];
    let seed = tavo_engine::prompt::reply_seed(chat, 1);
    let expected = pool[tavo_engine::group::select::draw(seed, pool.len())];
    assert_eq!(who, [Some(expected)]);
}

#[tokio::test]
async fn a_muted_member_is_skipped_even_when_mentioned_but_answers_when_chosen() {
    let lab = lab(Wire::OpenaiChat, texts(&["not bo", "bo speaks"]), &[]).await;
    let (chat, ids) = group(&lab, ReplyMode::Natural, &["Bo"]);
    let events = reply(&lab, chat, "Bo, are you there?", None).await;
    let who: Vec<_> = speakers(&lab, chat).into_iter().map(|s| s.0).collect();
    assert_eq!(who.len(), 1);
    assert_ne!(who[0], Some(ids[1]), "muted Bo does not answer");
    assert!(
        warnings(&events).iter().any(|w| w.contains("Bo is muted")),
        "{:?}",
        warnings(&events)
    );
    // Quick group speech: chosen explicitly, the muted member answers.
    let events = reply(&lab, chat, "Bo, please", Some(ids[1])).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    let last = speakers(&lab, chat).pop();
    assert_eq!(last, Some((Some(ids[1]), "bo speaks".to_owned())));
}

#[tokio::test]
async fn a_speaker_who_is_not_a_member_is_refused_before_anything_is_written() {
    let lab = lab(Wire::OpenaiChat, texts(&["x"]), &[]).await;
    let (chat, _) = group(&lab, ReplyMode::All, &[]);
    let engine = lab.engine(Services::default(), None);
    let e = engine
        .start(ReplyRequest::new(
            chat,
            tavo_engine::ReplyKind::Normal {
                message: tavo_engine::UserMessage::new("hi", None).ok(),
                speaker: Some(CharacterId(9999)),
            },
        ))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("not a member"), "{e}");
    assert_eq!(ok(lab.store.message_count(chat)), 0);
}

#[tokio::test]
async fn designated_mode_answers_only_at_names_and_warns_when_nobody_is_addressed() {
    let lab = lab(Wire::OpenaiChat, texts(&["cy here", "bo here"]), &[]).await;
    let (chat, ids) = group(&lab, ReplyMode::Designated, &[]);
    let events = reply(&lab, chat, "Ann, Bo, Cy: anyone?", None).await;
    assert_eq!(
        final_status(&events),
        (ReplyStatus::Finished, String::new())
    );
    assert!(
        speakers(&lab, chat).is_empty(),
        "names without @ address nobody"
    );
    assert!(
        warnings(&events)
            .iter()
            .any(|w| w.contains("nobody was addressed")),
        "{:?}",
        warnings(&events)
    );
    assert!(lab.mock.requests().is_empty());
    let events = reply(&lab, chat, "@Cy and @bo, hi", None).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    let who: Vec<_> = speakers(&lab, chat).into_iter().map(|s| s.0).collect();
    assert_eq!(who, [Some(ids[2]), Some(ids[1])]);
}

#[tokio::test]
async fn contextual_mode_asks_who_answers_and_parses_the_names() {
    let script = texts(&["- Cy\n- **ann**.", "cy answers", "ann answers"]);
    let lab = lab(Wire::OpenaiChat, script, &[]).await;
    let (chat, ids) = group(&lab, ReplyMode::Contextual, &["Bo"]);
    let events = reply(&lab, chat, "so, what now?", None).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    assert_eq!(
        speakers(&lab, chat),
        [
            (Some(ids[2]), "cy answers".to_owned()),
            (Some(ids[0]), "ann answers".to_owned())
        ]
    );
    let requests = lab.mock.requests();
    assert_eq!(requests.len(), 3);
    let selection = requests[0].body.to_string();
    assert!(
        selection.contains("between User and Ann, Bo, Cy"),
        "{{{{group}}}} names every member: {selection}"
    );
    assert!(
        selection.contains("reply next: Ann, Cy?"),
        "{{{{groupNotMuted}}}}: {selection}"
    );
    assert!(selection.contains("User: so, what now?"), "{selection}");
}

#[tokio::test]
async fn contextual_mode_uses_its_own_prompt_setting() {
    let script = texts(&["Bo", "bo answers"]);
    // A prompt field of the chat: EJS first, then macros, then the roster's placeholders.
    let prompt = Value::from(
        "<% if (true) { %>Pick<% } %> from {{groupNotMuted}} only. <%= 'PROMPT' %>-MARK",
    );
    let lab = lab(Wire::OpenaiChat, script, &[("group.speakerPrompt", prompt)]).await;
    let (chat, ids) = group(&lab, ReplyMode::Contextual, &[]);
    let events = reply(&lab, chat, "hm", None).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    assert_eq!(speakers(&lab, chat)[0].0, Some(ids[1]));
    let selection = lab.mock.requests()[0].body.to_string();
    assert!(
        selection.contains("Pick from Ann, Bo, Cy only. PROMPT-MARK"),
        "{selection}"
    );
    assert!(
        selection.contains("User: hm"),
        "the transcript is appended: {selection}"
    );
}

#[tokio::test]
async fn contextual_mode_falls_back_to_natural_when_selection_fails_or_names_nobody() {
    // A failed request.
    let script = Script::new(vec![Turn::error(500, "boom"), Turn::text("bo answers")]);
    let lab = lab(Wire::OpenaiChat, script, &[]).await;
    let (chat, ids) = group(&lab, ReplyMode::Contextual, &[]);
    let events = reply(&lab, chat, "Bo, you first", None).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    assert_eq!(
        speakers(&lab, chat),
        [(Some(ids[1]), "bo answers".to_owned())]
    );
    assert!(
        warnings(&events).iter().any(
            |w| w.contains("contextual speaker selection failed") && w.contains("natural mode")
        ),
        "{:?}",
        warnings(&events)
    );
    // An answer that names no member.
    let script = texts(&["Nobody should.", "cy answers"]);
    let lab = lab_with(script).await;
    let (chat, ids) = group(&lab, ReplyMode::Contextual, &[]);
    let events = reply(&lab, chat, "and you, Cy?", None).await;
    assert_eq!(
        speakers(&lab, chat),
        [(Some(ids[2]), "cy answers".to_owned())]
    );
    assert!(
        warnings(&events)
            .iter()
            .any(|w| w.contains("named no member")),
        "{:?}",
        warnings(&events)
    );
}

async fn lab_with(script: Script) -> Lab {
    lab(Wire::OpenaiChat, script, &[]).await
}

#[tokio::test]
async fn cancelling_a_group_reply_stops_it_as_a_whole() {
    let slow = Turn {
        text: Some("a long, slow answer that streams one piece at a time".into()),
        delay_ms: 150,
        chunk: Some(4),
        ..Turn::default()
    };
    let script = Script::new(vec![Turn::text("first done"), slow, Turn::text("never")]);
    let lab = lab(Wire::OpenaiChat, script, &[]).await;
    let (chat, ids) = group(&lab, ReplyMode::All, &[]);
    let engine = lab.engine(Services::default(), None);
    let handle = ok(engine.start(ReplyRequest::normal(chat, "go")));
    let mut sub = handle.subscribe(0);
    let mut events = Vec::new();
    let mut second_speaking = false;
    let run = async {
        while let Some(item) = sub.next().await {
            let ev = ok(item);
            if let EventKind::Speaker { turn: 2, .. } = ev.kind {
                second_speaking = true;
            }
            if second_speaking && matches!(ev.kind, EventKind::TextDelta { .. }) {
                handle.cancel();
            }
            let last = ev.is_final();
            events.push(ev);
            if last {
                break;
            }
        }
    };
    ok(tokio::time::timeout(Duration::from_secs(30), run).await);
    let (status, text) = final_status(&events);
    assert_eq!(status, ReplyStatus::Cancelled);
    assert!(text.starts_with("first done\n\n"), "{text}");
    let said = speakers(&lab, chat);
    assert_eq!(said.len(), 2, "the third member never speaks: {said:?}");
    assert_eq!(said[0], (Some(ids[0]), "first done".to_owned()));
    assert_eq!(said[1].0, Some(ids[1]));
    assert!(
        !said[1].1.is_empty() && said[1].1.len() < 40,
        "the second answer is kept as far as it came: {:?}",
        said[1].1
    );
    assert_eq!(lab.mock.requests().len(), 2);
    assert_eq!(handle.wait().await, ReplyStatus::Cancelled);
}

/// Records every hook the engine runs: (kind, source, generationId).
#[derive(Default)]
struct Recorder(Mutex<Vec<(String, String, String)>>);

impl tavo_engine::hooks::GenerationHooks for Recorder {
    fn listening(&self, _chat: ChatId) -> bool {
        true
    }

    fn run(
        &self,
        _chat: ChatId,
        kind: &'static str,
        event: Value,
    ) -> tavo_tools::operation::BoxFuture<Option<Value>> {
        let field = |k: &str| {
            event
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push((
            kind.to_owned(),
            field("source"),
            field("generationId"),
        ));
        Box::pin(async { None })
    }
}

#[tokio::test]
async fn group_turns_are_group_replies_to_plugin_hooks_one_generation_per_turn() {
    let lab = lab(Wire::OpenaiChat, texts(&["a", "b", "c", "d"]), &[]).await;
    let (chat, _) = group(&lab, ReplyMode::All, &["Cy"]);
    let recorder = Arc::new(Recorder::default());
    let engine = lab
        .engine(Services::default(), None)
        .with_hooks(recorder.clone());
    let handle = ok(engine.start(ReplyRequest::normal(chat, "hi")));
    let events = drive(&handle, &Answers::default()).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    let id = handle.id().to_owned();
    let seen = recorder.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let want = |k: &str, g: &str| (k.to_owned(), "groupReply".to_owned(), g.to_owned());
    let second = format!("{id}#2");
    assert_eq!(
        seen,
        [
            want("generation:prepare", &id),
            want("generation:success", &id),
            want("generation:prepare", &second),
            want("generation:success", &second),
        ]
    );
    // Characters talking on without a new user message: othersContinuation.
    recorder.0.lock().unwrap_or_else(|p| p.into_inner()).clear();
    let handle = ok(engine.start(ReplyRequest::normal(chat, "")));
    let events = drive(&handle, &Answers::default()).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished, "{events:?}");
    let seen = recorder.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
    assert!(
        !seen.is_empty() && seen.iter().all(|s| s.1 == "othersContinuation"),
        "{seen:?}"
    );
}

#[tokio::test]
async fn the_prompt_preview_is_built_for_the_member_the_mode_picks_first() {
    let lab = lab(Wire::OpenaiChat, texts(&[]), &[]).await;
    let (chat, ids) = group(&lab, ReplyMode::Designated, &[]);
    let mut m = tavo_model::Message::new(Role::User, "@Cy, your turn");
    m.send_date = None;
    ok(lab.store.message_append(chat, &m));
    let engine = lab.engine(Services::default(), None);
    let preview = |speaker: Option<CharacterId>| {
        let engine = engine.clone();
        let req = tavo_engine::prompt::PreviewRequest {
            chat,
            kind: tavo_tools::GenerationKind::Normal,
            connection: None,
            model: None,
            overrides: Default::default(),
            seed: None,
            speaker,
            record: false,
        };
        move || engine.preview(&req)
    };
    let p = ok(tokio::task::spawn_blocking(preview(None))
        .await
        .unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(
        p.base.speaker_id,
        Some(ids[2]),
        "designated: @Cy speaks first"
    );
    let p = ok(tokio::task::spawn_blocking(preview(Some(ids[1])))
        .await
        .unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(p.base.speaker_id, Some(ids[1]), "an explicit speaker wins");
}

#[tokio::test]
async fn continuing_in_a_group_keeps_the_message_speaker() {
    let lab = lab(Wire::OpenaiChat, texts(&["a1", "b1", " more"]), &[]).await;
    let (chat, ids) = group(&lab, ReplyMode::All, &["Cy"]);
    let events = reply(&lab, chat, "go", None).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    let engine = lab.engine(Services::default(), None);
    let handle = ok(engine.start(ReplyRequest::new(chat, tavo_engine::ReplyKind::Continue)));
    let events = drive(&handle, &Answers::default()).await;
    assert_eq!(final_status(&events).0, ReplyStatus::Finished);
    assert_eq!(
        speaker_events(&events)
            .iter()
            .map(|e| e.0)
            .collect::<Vec<_>>(),
        [Some(ids[1])],
        "one turn, announced: the message's speaker goes on"
    );
    assert_eq!(
        speakers(&lab, chat),
        [
            (Some(ids[0]), "a1".to_owned()),
            (Some(ids[1]), "b1 more".to_owned())
        ]
    );
    let third = lab.mock.requests()[2].body.to_string();
    assert!(
        third.contains("Bo is in the group."),
        "Bo continues: {third}"
    );
}
