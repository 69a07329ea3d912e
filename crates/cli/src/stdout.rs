//! Writing results to stdout when the reader may go away (`tavo show lorebook 1 | head -1`).
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe fails with `BrokenPipe`, and std's
//! `println!` panics on it (exit code 101 and a panic message). The crate's `println!` and
//! `print!` (defined in `main.rs`, shadowing std's) come here instead: on a closed stdout the
//! command unwinds with [`StdoutClosed`] — no panic hook runs, so nothing is printed, and
//! destructors still run (an open transaction rolls back) — and `main` exits 0, as `git log | head`
//! users expect from a tool whose reader simply stopped reading. Errors that reach `main` from an
//! explicit `write_all(...)?` on stdout are recognised the same way ([`is_closed_pipe`]).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// The unwind payload of a write to a closed stdout.
#[derive(Debug)]
pub struct StdoutClosed;

static CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether stdout was found closed (a write failed with `BrokenPipe`) at any point of the run,
/// also in a task whose unwind the runtime caught.
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// Writes `args` (and a newline when `newline`) to stdout.
pub fn write(args: std::fmt::Arguments<'_>, newline: bool) {
    if closed() {
        std::panic::resume_unwind(Box::new(StdoutClosed));
    }
    let mut out = std::io::stdout().lock();
    let written = out.write_fmt(args).and_then(|()| {
        if newline {
            out.write_all(b"\n")
        } else {
            Ok(())
        }
    });
    if let Err(e) = written {
        failed(&e);
    }
}

/// A write to stdout failed: a closed pipe ends the command quietly; anything else (a full
/// disk behind a redirect) is an error the user must see.
fn failed(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        CLOSED.store(true, Ordering::Relaxed);
        std::panic::resume_unwind(Box::new(StdoutClosed));
    }
    eprintln!("error: cannot write to stdout: {e}");
    std::process::exit(1);
}

/// Whether an error is a write to a closed pipe (anywhere in its chain).
pub fn is_closed_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
