//! `extension_tool_search` over 500 outside tools (as 10 MCP servers of 50 tools would register
//! them), called through the dispatcher as a reply calls it.
//!
//! `cargo bench -p tavo-tools --bench extension_search`

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tavo_tools::extension::{ExtensionRegistry, ExtensionSource};
use tavo_tools::{CallScope, Dispatcher, Services, ToolCall, ToolSettings, UnattendedDoor};

const VERBS: [&str; 10] = [
    "read",
    "write",
    "list",
    "search",
    "delete",
    "create",
    "move",
    "rename",
    "fetch",
    "summarise",
];
const NOUNS: [&str; 5] = ["file", "issue", "page", "calendar event", "message"];

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let store = tavo_store::Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let registry = tavo_tools::builtin_registry().unwrap_or_else(|e| panic!("{e}"));
    let extensions = ExtensionRegistry::default();
    for server in 0..10 {
        for (i, (verb, noun)) in VERBS
            .iter()
            .flat_map(|v| NOUNS.iter().map(move |n| (v, n)))
            .enumerate()
        {
            let name = format!("mcp_srv{server}_{verb}_{}_{i}", noun.replace(' ', "_"));
            let description = format!(
                "[MCP server srv{server}] {verb} a {noun} in the user's workspace by id or path"
            );
            let schema = json!({"type": "object", "properties": {"id": {"type": "string"}, "path": {"type": "string"}}});
            extensions
                .register(
                    &name,
                    None,
                    &description,
                    schema,
                    false,
                    ExtensionSource::Mcp {
                        server: format!("srv{server}"),
                    },
                )
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    assert_eq!(extensions.len(), 500);
    let services = Arc::new(Services {
        extensions,
        ..Default::default()
    });
    let dispatcher = Dispatcher::new(store, registry, services, tavo_tools::Gate::default());
    let settings = ToolSettings::default();
    let door = UnattendedDoor {
        confirmed: true,
        refusal: |_| tavo_tools::ToolError::internal("x"),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let call = ToolCall::new(
        "b",
        "extension_tool_search",
        json!({"query": "rename a calendar event", "limit": 8}),
    );
    let probe = runtime.block_on(async {
        let mut scope = CallScope::direct(Some(tavo_model::ChatId(1)), &settings);
        dispatcher.call(&mut scope, &call, &door).await
    });
    assert_eq!(
        probe.completed.envelope["ok"], true,
        "{}",
        probe.completed.envelope
    );
    c.bench_function("extension_tool_search over 500 outside tools", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut scope = CallScope::direct(Some(tavo_model::ChatId(1)), &settings);
                black_box(dispatcher.call(&mut scope, black_box(&call), &door).await)
            })
        })
    });
}

// `criterion_group!` makes a `pub fn` per group: in a private module it needs no docs.
mod groups {
    use super::*;

    criterion_group!(benches, bench);
}
criterion_main!(groups::benches);
