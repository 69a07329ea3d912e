//! The one call path every door takes (`Dispatcher`): each gate, with the doors' differences
//! reduced to how they confirm and ask.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tavo_model::ChatId;

use serde_json::{Value, json};
use tavo_store::Store;
use tavo_tools::dispatch::{DoorFuture, PendingCall};
use tavo_tools::extension::ExtensionTool;
use tavo_tools::operation::BoxFuture;
use tavo_tools::{
    Approval, ApprovalPolicy, CallScope, Confirmation, Dispatcher, Door, ExposedSet,
    ExtensionRunner, ExtensionSource, Gate, Question, Services, ToolCall, ToolError, ToolSettings,
    UnattendedDoor, UserAnswer, builtin_registry,
};

struct Lib {
    _dir: tempfile::TempDir,
    store: Store,
}

fn lib() -> Lib {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    Lib { _dir: dir, store }
}

fn chat(store: &Store) -> ChatId {
    store
        .chat_create(&tavo_model::Chat {
            name: "c".into(),
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"))
}

fn characters(store: &Store) -> Vec<tavo_model::Character> {
    store
        .list::<tavo_model::Character>()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn dispatcher(store: &Store, services: Services) -> Dispatcher {
    let registry = builtin_registry().unwrap_or_else(|e| panic!("{e}"));
    Dispatcher::new(store.clone(), registry, Arc::new(services), Gate::default())
}

/// A door that records what it was asked and answers as told.
struct ScriptedDoor {
    confirm: Result<Confirmation, ToolError>,
    answer: UserAnswer,
    delay: Duration,
    confirms: AtomicUsize,
    asks: AtomicUsize,
}

impl ScriptedDoor {
    fn new(confirm: Result<Confirmation, ToolError>, answer: UserAnswer) -> Self {
        Self {
            confirm,
            answer,
            delay: Duration::ZERO,
            confirms: AtomicUsize::new(0),
            asks: AtomicUsize::new(0),
        }
    }
}

impl Door for ScriptedDoor {
    fn confirm<'a>(
        &'a self,
        _call: PendingCall<'a>,
    ) -> DoorFuture<'a, Result<Confirmation, ToolError>> {
        self.confirms.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            self.confirm.clone()
        })
    }

    fn ask<'a>(&'a self, _call: PendingCall<'a>, _q: Question) -> DoorFuture<'a, UserAnswer> {
        self.asks.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            self.answer.clone()
        })
    }
}

fn allow() -> ScriptedDoor {
    ScriptedDoor::new(
        Ok(Confirmation::Allow { remember: false }),
        UserAnswer::Cancelled,
    )
}

async fn call(
    d: &Dispatcher,
    scope: &mut CallScope,
    name: &str,
    args: Value,
    door: &dyn Door,
) -> Value {
    d.call(scope, &ToolCall::new("c1", name, args), door)
        .await
        .completed
        .envelope
}

#[tokio::test]
async fn a_write_that_asks_runs_only_with_the_doors_consent() {
    let l = lib();
    let d = dispatcher(&l.store, Services::default());
    let settings = ToolSettings::default();
    let args = json!({"character": {"name": "Zed", "firstMes": "Yo"}});
    // Without consent: refused with the door's own refusal, nothing written.
    let unattended = UnattendedDoor {
        confirmed: false,
        refusal: |tool| ToolError::denied(format!("{tool}: pass consent")),
    };
    let mut scope = CallScope::direct(None, &settings);
    let env = call(
        &d,
        &mut scope,
        "tavo_character_create",
        args.clone(),
        &unattended,
    )
    .await;
    assert_eq!(env["ok"], json!(false), "{env}");
    assert_eq!(env["error"]["code"], json!("permission_denied"));
    assert!(
        env["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("pass consent")
    );
    assert!(characters(&l.store).is_empty(), "nothing written");
    // With consent: it runs.
    let door = allow();
    let env = call(&d, &mut scope, "character.create", args, &door).await;
    assert_eq!(env["ok"], json!(true), "{env}");
    assert_eq!(door.confirms.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn arguments_are_checked_before_the_door_is_asked() {
    let l = lib();
    let d = dispatcher(&l.store, Services::default());
    let door = allow();
    let mut scope = CallScope::direct(None, &ToolSettings::default());
    let env = call(
        &d,
        &mut scope,
        "tavo_character_create",
        json!({"character": {"name": 3}}),
        &door,
    )
    .await;
    assert_eq!(env["error"]["code"], json!("invalid_arguments"), "{env}");
    assert_eq!(
        door.confirms.load(Ordering::SeqCst),
        0,
        "never asked about a bad call"
    );
}

#[tokio::test]
async fn the_policy_denies_at_every_door_and_remembers_per_chat() {
    let l = lib();
    let chat = chat(&l.store);
    let d = dispatcher(&l.store, Services::default());
    let mut policy = ApprovalPolicy::default();
    policy.remember(None, "tavo_memory_get", Approval::Deny);
    policy.save(&l.store).unwrap_or_else(|e| panic!("{e}"));
    let door = allow();
    let mut scope = CallScope::direct(Some(chat), &ToolSettings::default());
    let env = call(&d, &mut scope, "tavo_memory_get", json!({}), &door).await;
    assert_eq!(env["error"]["code"], json!("permission_denied"), "{env}");
    // A remembered "allow" in this chat skips the door next time.
    let remembering = ScriptedDoor::new(
        Ok(Confirmation::Allow { remember: true }),
        UserAnswer::Cancelled,
    );
    let args = json!({"character": {"name": "A", "firstMes": "hi"}});
    let env = call(
        &d,
        &mut scope,
        "tavo_character_create",
        args.clone(),
        &remembering,
    )
    .await;
    assert_eq!(env["ok"], json!(true), "{env}");
    let env = call(&d, &mut scope, "tavo_character_create", args, &remembering).await;
    assert_eq!(env["ok"], json!(true), "{env}");
    assert_eq!(remembering.confirms.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_reply_scope_only_calls_what_the_model_was_shown() {
    let l = lib();
    let chat = chat(&l.store);
    let d = dispatcher(&l.store, Services::default());
    let mut exposed = ExposedSet::default();
    exposed.expose(["tavo_memory_get".to_owned()]);
    let mut scope = CallScope::reply(
        chat,
        exposed,
        2,
        (Duration::from_secs(5), Duration::from_secs(5)),
        1 << 18,
    );
    let door = allow();
    let env = call(&d, &mut scope, "memory.get", json!({}), &door).await;
    assert_eq!(
        env["error"]["code"],
        json!("unknown_tool"),
        "operation names are not tool names: {env}"
    );
    let env = call(&d, &mut scope, "tavo_memory_get", json!({}), &door).await;
    assert_eq!(env["ok"], json!(true), "{env}");
    // The call limit (2) was reached by the two calls above.
    let env = call(&d, &mut scope, "tavo_memory_get", json!({}), &door).await;
    assert_eq!(env["error"]["code"], json!("limit_exceeded"), "{env}");
    // A direct scope takes the operation name.
    let mut direct = CallScope::direct(Some(chat), &ToolSettings::default());
    let env = call(&d, &mut direct, "memory.get", json!({}), &door).await;
    assert_eq!(env["ok"], json!(true), "{env}");
}

#[tokio::test]
async fn a_chat_tool_without_a_chat_says_so_without_naming_a_door() {
    let l = lib();
    let d = dispatcher(&l.store, Services::default());
    let mut scope = CallScope::direct(None, &ToolSettings::default());
    let env = call(&d, &mut scope, "tavo_memory_get", json!({}), &allow()).await;
    assert_eq!(env["error"]["code"], json!("resource_not_found"), "{env}");
    let message = env["error"]["message"].as_str().unwrap_or_default();
    assert!(
        !message.contains("CLI") && !message.contains("--chat"),
        "{message}"
    );
}

#[tokio::test]
async fn questions_go_to_the_door_and_waiting_is_not_timed() {
    let l = lib();
    let chat = chat(&l.store);
    let d = dispatcher(&l.store, Services::default());
    let mut door = ScriptedDoor::new(
        Ok(Confirmation::Allow { remember: false }),
        UserAnswer::Custom {
            text: "blue".into(),
        },
    );
    door.delay = Duration::from_millis(1500);
    let settings = ToolSettings {
        call_timeout_seconds: 1,
        ..Default::default()
    };
    let mut scope = CallScope::direct(Some(chat), &settings);
    let done = d
        .call(
            &mut scope,
            &ToolCall::new("q", "tavo_ask_user", json!({"question": "colour?"})),
            &door,
        )
        .await;
    assert_eq!(
        done.completed.envelope["ok"],
        json!(true),
        "{}",
        done.completed.envelope
    );
    assert_eq!(door.asks.load(Ordering::SeqCst), 1);
    assert!(done.waited >= Duration::from_millis(1500));
}

struct SlowRunner;

impl ExtensionRunner for SlowRunner {
    fn run(
        &self,
        _t: &ExtensionTool,
        _chat: ChatId,
        args: Value,
        _timeout: Duration,
    ) -> BoxFuture<Result<Value, ToolError>> {
        Box::pin(async move {
            let ms = args["ms"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(json!({"slept": ms}))
        })
    }
}

#[tokio::test]
async fn the_call_timeout_of_the_settings_applies_at_a_direct_door() {
    let l = lib();
    let chat = chat(&l.store);
    let services = Services::default();
    services
        .extensions
        .register(
            "sleepy",
            None,
            "sleeps",
            json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
            false,
            ExtensionSource::Page { id: "p".into() },
        )
        .unwrap_or_else(|e| panic!("{e}"));
    services.extensions.set_page_chat("p", Some(chat));
    let d = dispatcher(&l.store, services).with_extensions(Some(Arc::new(SlowRunner)));
    let settings = ToolSettings {
        call_timeout_seconds: 1,
        ..Default::default()
    };
    let mut scope = CallScope::direct(Some(chat), &settings);
    let env = call(&d, &mut scope, "sleepy", json!({"ms": 10}), &allow()).await;
    assert_eq!(env["result"], json!({"slept": 10}), "{env}");
    let env = call(&d, &mut scope, "sleepy", json!({"ms": 3000}), &allow()).await;
    assert_eq!(env["error"]["code"], json!("timeout"), "{env}");
}
