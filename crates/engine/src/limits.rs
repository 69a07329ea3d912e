//! The limits of one reply, all adjustable (`tavo settings set tools.… VALUE`).

use std::time::Duration;

use tavo_llm::InterleavedReasoning;
use tavo_tools::ToolSettings;
use tavo_tools::exposure::ReasoningMode;

/// What bounds one reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Model rounds that may call tools (`tools.recursionLimit`, default 5 as seed 001 says).
    /// When reached, the next request still declares the tools (providers require it while
    /// the history holds calls) but forbids calling them, so the model answers.
    pub recursion_limit: u32,
    /// Tool calls executed in one reply (`tools.maxCalls`); later calls fail with
    /// `limit_exceeded` without running.
    pub max_calls: u32,
    /// Time one call may run (`tools.callTimeoutSeconds`); time spent waiting for the user is
    /// never counted.
    pub call_timeout: Duration,
    /// Time one page tool may run: Tavo's JavaScript tool time-out (120 s), since a page tool
    /// may fetch or wait on its own UI; time spent waiting for the user is never counted.
    pub page_call_timeout: Duration,
    /// Bytes all results of the reply may take (256 KiB, seed 000).
    pub reply_budget: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self::from_settings(&ToolSettings::default())
    }
}

impl Limits {
    /// The limits the settings describe.
    pub fn from_settings(s: &ToolSettings) -> Self {
        Self {
            recursion_limit: s.recursion_limit,
            max_calls: s.max_calls,
            call_timeout: Duration::from_secs(u64::from(s.call_timeout_seconds.max(1))),
            page_call_timeout: Duration::from_secs(u64::from(s.page_call_timeout_seconds.max(1))),
            reply_budget: tavo_tools::REPLY_LIMIT,
        }
    }
}

/// The provider-side interleaved-reasoning mode of a settings mode.
pub fn interleaved(mode: ReasoningMode) -> InterleavedReasoning {
    match mode {
        ReasoningMode::Disabled => InterleavedReasoning::Disabled,
        ReasoningMode::SinceLastUserMessage => InterleavedReasoning::SinceLastUserMessage,
        ReasoningMode::ActiveToolChain => InterleavedReasoning::ActiveToolChain,
    }
}
