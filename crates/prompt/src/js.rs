//! The one embedded JavaScript engine (QuickJS-NG through rquickjs) on one worker thread,
//! shared by regex rules ([`crate::regex`]) and EJS templates ([`crate::ejs`]).
//!
//! Why one worker for both: the limits that make user code survivable — a wall-clock
//! deadline per call enforced by the interrupt handler, a memory limit on the runtime, a
//! fresh runtime after a call was stopped — live here once. A regex that backtracks forever
//! and a template that loops forever are stopped by the same machinery, and neither can
//! stall a reply for longer than one deadline.
//!
//! A call is a closure run on the worker thread with the [`JsEngine`]; it returns its result
//! through a channel. Callers block until it is done (prompt building already runs on a
//! blocking thread).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rquickjs::{Context, Ctx, Runtime};

/// Why a JavaScript call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsError {
    /// The pattern is not a valid JavaScript regex.
    #[error("invalid regex: {0}")]
    Syntax(String),
    /// The call ran past its deadline and was stopped.
    #[error("stopped after {0} ms: the pattern backtracks too much on this text")]
    Timeout(u64),
    /// The call exceeded the engine's memory limit and was stopped.
    #[error("stopped: the regex engine ran out of its {0} MiB memory limit")]
    OutOfMemory(usize),
    /// The engine itself failed.
    #[error("regex engine error: {0}")]
    Engine(String),
}

/// Limits applied to every call.
#[derive(Debug, Clone, Copy)]
pub struct JsLimits {
    /// Wall-clock deadline of one call.
    pub deadline: Duration,
    /// Memory limit of the runtime, in MiB.
    pub memory_mib: usize,
}

impl Default for JsLimits {
    fn default() -> Self {
        Self {
            deadline: Duration::from_millis(500),
            memory_mib: 64,
        }
    }
}

/// What a call sees on the worker thread: the runtime, its main context, and the limits.
pub struct JsEngine {
    runtime: Runtime,
    context: Context,
    limits: JsLimits,
    epoch: Instant,
    deadline: Arc<AtomicU64>,
    /// Names of helper scripts already evaluated in the main context (see [`Self::install`]).
    installed: HashSet<&'static str>,
}

impl JsEngine {
    fn build(limits: JsLimits, deadline: Arc<AtomicU64>, epoch: Instant) -> Result<Self, JsError> {
        let runtime = Runtime::new().map_err(|e| JsError::Engine(e.to_string()))?;
        runtime.set_memory_limit(limits.memory_mib << 20);
        runtime.set_max_stack_size(1 << 20);
        let flag = deadline.clone();
        runtime.set_interrupt_handler(Some(Box::new(move || {
            let limit = flag.load(Ordering::Relaxed);
            limit != 0 && epoch.elapsed().as_nanos() as u64 > limit
        })));
        let context = Context::full(&runtime).map_err(|e| JsError::Engine(e.to_string()))?;
        Ok(Self {
            runtime,
            context,
            limits,
            epoch,
            deadline,
            installed: HashSet::new(),
        })
    }

    /// The long-lived main context (regex helpers live here).
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// A new, empty context in the same runtime (same limits). User code that may change
    /// globals (templates) runs in one, so nothing leaks into the next call.
    pub fn fresh_context(&self) -> Result<Context, JsError> {
        Context::full(&self.runtime).map_err(|e| JsError::Engine(e.to_string()))
    }

    /// The limits of this engine.
    pub fn limits(&self) -> JsLimits {
        self.limits
    }

    /// Evaluates `source` once per runtime in the main context under `name` (helpers are
    /// installed lazily, and again after the runtime was replaced).
    pub fn install(&mut self, name: &'static str, source: &'static str) -> Result<(), JsError> {
        if self.installed.contains(name) {
            return Ok(());
        }
        self.context
            .with(|ctx| ctx.eval::<(), _>(source))
            .map_err(|e| JsError::Engine(format!("{name} setup failed: {e}")))?;
        self.installed.insert(name);
        Ok(())
    }

    /// Whether the current call is past its deadline.
    pub fn timed_out(&self) -> bool {
        let limit = self.deadline.load(Ordering::Relaxed);
        limit != 0 && self.epoch.elapsed().as_nanos() as u64 > limit
    }

    /// Turns an rquickjs error into a [`JsError`], reading the pending exception.
    pub fn classify(&self, ctx: &Ctx<'_>, error: rquickjs::Error) -> JsError {
        let message = if error.is_exception() {
            let caught = ctx.catch();
            match caught.as_exception() {
                Some(exception) => exception.message().unwrap_or_default(),
                None => caught
                    .as_string()
                    .and_then(|s| s.to_string().ok())
                    .unwrap_or_else(|| "uncaught exception".to_owned()),
            }
        } else {
            error.to_string()
        };
        self.classify_message(&message, matches!(error, rquickjs::Error::Allocation))
    }

    /// Classifies an error message (also used for errors a script caught and returned).
    pub fn classify_message(&self, message: &str, allocation: bool) -> JsError {
        if self.timed_out() || message.contains("interrupted") {
            JsError::Timeout(self.limits.deadline.as_millis() as u64)
        } else if allocation || message.contains("out of memory") {
            JsError::OutOfMemory(self.limits.memory_mib)
        } else if message.contains("regular expression")
            || message.contains("invalid")
            || message.contains("unexpected")
            || message.contains("expecting")
            || message.contains("nothing to repeat")
            || message.contains("flags")
        {
            JsError::Syntax(message.to_owned())
        } else {
            JsError::Engine(message.to_owned())
        }
    }
}

type Job = Box<dyn FnOnce(&mut JsEngine) -> bool + Send>;

/// Handle to the worker thread. Cheap to share; calls are serialised.
pub struct JsWorker {
    sender: Mutex<Sender<Job>>,
}

impl std::fmt::Debug for JsWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JsWorker")
    }
}

impl JsWorker {
    /// Starts a worker thread with the given limits.
    pub fn start(limits: JsLimits) -> Result<Self, JsError> {
        let (sender, receiver) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), JsError>>();
        std::thread::Builder::new()
            .name("tavo-js".into())
            .spawn(move || worker(limits, receiver, ready_tx))
            .map_err(|e| JsError::Engine(format!("cannot start the JavaScript worker: {e}")))?;
        ready_rx.recv().map_err(|_| {
            JsError::Engine("the JavaScript worker stopped while starting".into())
        })??;
        Ok(Self {
            sender: Mutex::new(sender),
        })
    }

    /// The process-wide worker with default limits (regex rules and templates share it).
    pub fn shared() -> Result<Arc<JsWorker>, JsError> {
        static SHARED: OnceLock<Result<Arc<JsWorker>, JsError>> = OnceLock::new();
        SHARED
            .get_or_init(|| JsWorker::start(JsLimits::default()).map(Arc::new))
            .clone()
    }

    /// Runs `call` on the worker under the deadline. A call that timed out or ran out of
    /// memory leaves the runtime to be replaced before the next call.
    pub fn run<T, F>(&self, call: F) -> Result<T, JsError>
    where
        T: Send + 'static,
        F: FnOnce(&mut JsEngine) -> Result<T, JsError> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel();
        let job: Job = Box::new(move |engine| {
            let result = call(engine);
            let failed = matches!(result, Err(JsError::Timeout(_) | JsError::OutOfMemory(_)));
            let _ = tx.send(result);
            failed
        });
        {
            let sender = self
                .sender
                .lock()
                .map_err(|_| JsError::Engine("the JavaScript worker lock is poisoned".into()))?;
            sender
                .send(job)
                .map_err(|_| JsError::Engine("the JavaScript worker has stopped".into()))?;
        }
        rx.recv()
            .map_err(|_| JsError::Engine("the JavaScript worker has stopped".into()))?
    }
}

fn worker(limits: JsLimits, jobs: Receiver<Job>, ready: Sender<Result<(), JsError>>) {
    let epoch = Instant::now();
    let deadline = Arc::new(AtomicU64::new(0));
    let mut engine = match JsEngine::build(limits, deadline.clone(), epoch) {
        Ok(engine) => {
            let _ = ready.send(Ok(()));
            engine
        }
        Err(err) => {
            let _ = ready.send(Err(err));
            return;
        }
    };
    while let Ok(job) = jobs.recv() {
        let started = epoch.elapsed();
        deadline.store(
            (started + limits.deadline).as_nanos() as u64,
            Ordering::Relaxed,
        );
        let failed = job(&mut engine);
        deadline.store(0, Ordering::Relaxed);
        if failed {
            // A stopped call may leave garbage behind; start from a clean runtime.
            match JsEngine::build(limits, deadline.clone(), epoch) {
                Ok(fresh) => engine = fresh,
                Err(_) => return,
            }
        }
    }
}
