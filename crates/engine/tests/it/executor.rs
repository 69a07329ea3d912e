//! The engine never waits for the store on the executor: a worker that blocks on the store's
//! one connection stalls every event stream it relays.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::json;
use tavo_engine::{CallRunner, CallStatus, Control, EventHub, Limits, ModelCall};
use tavo_store::Store;
use tavo_tools::ops::common::NoArgs;
use tavo_tools::{ExposedSet, OpSpec, Outcome, Registry, Safety, Services};

#[test]
fn a_tool_call_reads_the_approval_policy_off_the_executor() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut registry = Registry::new();
    registry
        .add(
            OpSpec::new("test.noop", Safety::Read, "Does nothing."),
            |_: NoArgs, _ctx| async { Ok(Outcome::json(json!({"done": true}))) },
        )
        .unwrap();
    let mut exposed = ExposedSet::default();
    exposed.expose(["tavo_test_noop".to_owned()]);
    let mut runner = CallRunner::new(
        Arc::new(registry),
        Arc::new(Services::default()),
        store.clone(),
        tavo_model::ChatId(1),
        "rpl_executor",
        Limits::default(),
        exposed,
    );

    // Another thread holds the store (as a long import would) for a while.
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let holder = {
        let store = store.clone();
        std::thread::spawn(move || {
            store.write(|_| {
                let _ = held_tx.send(());
                std::thread::sleep(Duration::from_millis(600));
                Ok(())
            })
        })
    };
    held_rx.recv().unwrap();

    // One executor thread: a ticker beside the call only ticks if the call does not block it.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ticks = Arc::new(AtomicU32::new(0));
    let outcome = rt.block_on(async {
        let ticker = tokio::spawn({
            let ticks = ticks.clone();
            async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    ticks.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        let call = ModelCall {
            id: "c1".into(),
            name: "tavo_test_noop".into(),
            arguments: json!({}),
            arguments_error: None,
        };
        let control = Control::new(EventHub::new("rpl_executor"), None);
        let outcome = runner.execute(&call, &control, None).await;
        ticker.abort();
        outcome
    });
    holder.join().unwrap().unwrap();
    assert_eq!(
        outcome.card.status,
        CallStatus::Ok,
        "the call ran once the store was free"
    );
    let ticked = ticks.load(Ordering::Relaxed);
    assert!(
        ticked >= 3,
        "the executor stood still while the call waited for the store ({ticked} ticks)"
    );
}
