//! Engine overhead per tool round, excluding the model and the tool: one call through every
//! gate (exposure, strict validation, approval policy read, budgets, envelope, two card events)
//! plus building the next round's request messages over a 40-message prompt.
//! Target: under 200 µs per round.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tavo_engine::prompt::with_hint;
use tavo_engine::{CallRunner, Control, EventHub, Limits, ModelCall};
use tavo_llm::{Message, Part, Role};
use tavo_prompt::PromptConverter;
use tavo_store::Store;
use tavo_tools::ops::common::NoArgs;
use tavo_tools::{ExposedSet, OpSpec, Outcome, Registry, Safety, Services};

fn bench(c: &mut Criterion) {
    let Ok(dir) = tempfile::tempdir() else { return };
    let Ok(store) = Store::open(dir.path()) else {
        return;
    };
    let mut registry = Registry::new();
    let spec = OpSpec::new("bench.noop", Safety::Read, "Does nothing, instantly.");
    if registry
        .add(spec, |_: NoArgs, _ctx| async {
            Ok(Outcome::json(json!({"done": true})))
        })
        .is_err()
    {
        return;
    }
    let registry = Arc::new(registry);
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let base: Vec<Message> = (0..40)
        .map(|i| {
            Message::text(
                if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                },
                "a line of chat history ".repeat(8),
            )
        })
        .collect();
    let call = ModelCall {
        id: "c1".into(),
        name: "tavo_bench_noop".into(),
        arguments: json!({}),
        arguments_error: None,
    };

    c.bench_function("tool_round_overhead", |b| {
        b.iter(|| {
            let mut exposed = ExposedSet::default();
            exposed.expose(["tavo_bench_noop".to_owned()]);
            let limits = Limits {
                max_calls: u32::MAX,
                ..Limits::default()
            };
            let mut runner = CallRunner::new(
                registry.clone(),
                Arc::new(Services::default()),
                store.clone(),
                tavo_model::ChatId(1),
                "rpl_bench",
                limits,
                exposed,
            );
            let control = Control::new(EventHub::new("rpl_bench"), None);
            let outcome = rt.block_on(runner.execute(&call, &control, None));
            let mut messages = with_hint(&base, Some("hint"), PromptConverter::None);
            messages.push(Message {
                role: Role::Assistant,
                parts: vec![Part::ToolCall {
                    id: "c1".into(),
                    name: "tavo_bench_noop".into(),
                    arguments: json!({}),
                    native: None,
                }],
            });
            messages.push(Message {
                role: Role::Tool,
                parts: vec![outcome.result],
            });
            black_box(messages)
        })
    });
}

// `criterion_group!` makes a `pub fn` per group: in a private module it needs no docs.
mod groups {
    use super::*;

    criterion_group!(benches, bench);
}
criterion_main!(groups::benches);
