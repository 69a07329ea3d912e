//! What the client measures: SSE events, the latencies of the mock's stamps, percentiles,
//! and the server's memory, threads and CPU from `/proc`.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::StreamExt;

use crate::mock::now_ns;

/// Reads an SSE response; calls `on_event(event, data)` per event until it returns false.
/// Kept lean (no copy of a block, no allocation for one-line data): the client shares the
/// machine's two cores with the server it measures, and every microsecond it spends is one
/// the server under test waits for.
pub async fn read_sse(
    resp: reqwest::Response,
    mut on_event: impl FnMut(&str, &str) -> bool,
) -> Result<(), String> {
    let mut stream = resp.bytes_stream();
    let mut buf = String::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        buf.push_str(&String::from_utf8_lossy(&chunk));
        let mut start = 0;
        while let Some(end) = buf[start..].find("\n\n") {
            let (event, data) = parse_block(&buf[start..start + end]);
            start += end + 2;
            if !on_event(event, &data) {
                return Ok(());
            }
        }
        buf.drain(..start);
    }
    Ok(())
}

/// The event name (`text_delta`, `finished`, `other`, or `message` when unnamed) and the data
/// of one SSE block.
fn parse_block(block: &str) -> (&'static str, std::borrow::Cow<'_, str>) {
    let mut event = "message";
    let mut data = std::borrow::Cow::Borrowed("");
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("event:") {
            event = match v.trim() {
                "text_delta" => "text_delta",
                "finished" => "finished",
                _ => "other",
            };
        } else if let Some(v) = line.strip_prefix("data:") {
            let v = v.trim_start();
            if data.is_empty() {
                data = std::borrow::Cow::Borrowed(v);
            } else {
                data.to_mut().push_str(v);
            }
        }
    }
    (event, data)
}

/// The value of the string field `key` in a JSON object, read without parsing the object:
/// enough for the stamps (digits and `|`, never escaped) that the latency is measured on.
pub fn string_field<'a>(json: &'a str, key: &str) -> Option<&'a str> {
    let at = json.find(&format!("\"{key}\":\""))? + key.len() + 4;
    let len = json[at..].find('"')?;
    Some(&json[at..at + len])
}

/// Latencies (ns) of the timestamps carried by a stream of text pieces.
#[derive(Default)]
pub struct Stamps {
    pending: String,
    /// (arrival time, latency), both in ns.
    pub latencies: Vec<(u64, u64)>,
}

impl Stamps {
    pub fn feed(&mut self, text: &str) {
        let arrived = now_ns();
        self.pending.push_str(text);
        while let Some(end) = self.pending.find('|') {
            let stamp: String = self.pending.drain(..=end).collect();
            if let Ok(sent) = stamp.trim_end_matches('|').parse::<u64>() {
                self.latencies.push((arrived, arrived.saturating_sub(sent)));
            }
        }
    }
}

pub fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)] as f64 / 1e6
}

/// A numeric field of `/proc/<pid>/status` (`VmRSS` in kB, `Threads`).
pub fn proc_status(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// CPU seconds (user + system) a process has used, from `/proc/<pid>/stat`.
pub fn cpu_secs(pid: &str) -> f64 {
    let ticks = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            // Fields after the command name, which may contain spaces: state is field 3, utime 14.
            let rest = s.rsplit_once(") ")?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
        })
        .unwrap_or(0);
    ticks as f64 / 100.0
}

pub fn rss_kb(pid: u32) -> u64 {
    proc_status(pid, "VmRSS")
}

pub fn mb(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

/// Samples the server's RSS and thread count every 20 ms until `stop`; returns the peaks.
pub fn sample_peaks(
    pid: u32,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<(u64, u64)> {
    std::thread::spawn(move || {
        let (mut rss, mut threads) = (0, 0);
        while !stop.load(Ordering::Relaxed) {
            rss = rss.max(rss_kb(pid));
            threads = threads.max(proc_status(pid, "Threads"));
            std::thread::sleep(Duration::from_millis(20));
        }
        (rss, threads)
    })
}

/// Latency by arrival time, in 100 ms windows from the first arrival: where the tail sits.
pub fn timeline(samples: &[(u64, u64)]) -> String {
    let Some(first) = samples.iter().map(|s| s.0).min() else {
        return String::new();
    };
    let mut windows: std::collections::BTreeMap<u64, Vec<u64>> = Default::default();
    for &(arrived, latency) in samples {
        windows
            .entry((arrived - first) / 100_000_000)
            .or_default()
            .push(latency);
    }
    let mut out = String::from("| window (ms) | events | p50 / p99 / max (ms) |\n|---|---|---|\n");
    for (w, mut v) in windows {
        v.sort_unstable();
        out.push_str(&format!(
            "| {}–{} | {} | {:.3} / {:.3} / {:.3} |\n",
            w * 100,
            w * 100 + 100,
            v.len(),
            percentile(&v, 0.5),
            percentile(&v, 0.99),
            percentile(&v, 1.0)
        ));
    }
    out
}
