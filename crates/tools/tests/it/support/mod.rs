//! Shared helpers: a temp store, the builtin registry, one-call helpers.

use std::sync::Arc;

use serde_json::{Value, json};
use tavo_model::{Chat, ChatId};
use tavo_store::Store;
use tavo_tools::registry::Completed;
use tavo_tools::{CallStep, OpContext, Registry, ReplyBudget, UserAnswer, builtin_registry};

pub struct Lib {
    pub _dir: tempfile::TempDir,
    pub store: Store,
    pub registry: Arc<Registry>,
}

impl Lib {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(dir.path()).expect("store");
        let registry = builtin_registry().expect("registry");
        Self {
            _dir: dir,
            store,
            registry,
        }
    }

    pub fn chat(&self, name: &str) -> ChatId {
        let chat = Chat {
            name: name.into(),
            ..Default::default()
        };
        self.store.chat_create(&chat).expect("chat")
    }

    pub fn ctx(&self, chat: Option<ChatId>) -> OpContext {
        OpContext::new(self.store.clone(), self.registry.clone(), chat)
    }

    /// One call with a fresh budget; a pause is answered with `answer` (or fails the test).
    pub async fn call_with(
        &self,
        chat: Option<ChatId>,
        tool: &str,
        args: Value,
        budget: &mut ReplyBudget,
    ) -> Completed {
        match self.registry.call(tool, args, self.ctx(chat), budget).await {
            CallStep::Finished(done) => done,
            CallStep::Paused { question, .. } => panic!("unexpected question {question:?}"),
        }
    }

    pub async fn call(&self, chat: Option<ChatId>, tool: &str, args: Value) -> Value {
        self.call_with(chat, tool, args, &mut ReplyBudget::default())
            .await
            .envelope
    }

    pub async fn ok(&self, chat: Option<ChatId>, tool: &str, args: Value) -> Value {
        let env = self.call(chat, tool, args.clone()).await;
        assert_eq!(env["ok"], json!(true), "{tool} {args} -> {env}");
        env["result"].clone()
    }

    pub async fn err(&self, chat: Option<ChatId>, tool: &str, args: Value) -> Value {
        let env = self.call(chat, tool, args.clone()).await;
        assert_eq!(
            env["ok"],
            json!(false),
            "{tool} {args} should fail -> {env}"
        );
        env["error"].clone()
    }

    /// A call that pauses for the user, answered with `answer`.
    pub async fn answered(
        &self,
        chat: Option<ChatId>,
        tool: &str,
        args: Value,
        answer: UserAnswer,
    ) -> (tavo_tools::Question, Value) {
        let mut budget = ReplyBudget::default();
        match self
            .registry
            .call(tool, args, self.ctx(chat), &mut budget)
            .await
        {
            CallStep::Paused { question, resume } => {
                match Registry::resume(resume, answer, &mut budget).await {
                    CallStep::Finished(done) => (question, done.envelope),
                    CallStep::Paused { .. } => panic!("asked twice"),
                }
            }
            CallStep::Finished(done) => panic!("expected a question, got {}", done.envelope),
        }
    }
}
