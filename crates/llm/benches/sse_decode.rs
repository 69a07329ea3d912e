//! SSE decoding throughput: a 10,000-event stream per protocol, bytes fed in 4 KiB reads (as
//! a socket delivers them), including JSON parsing of every event.
//!
//! Run: `cargo bench -p tavo-llm --bench sse_decode`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tavo_llm::Protocol;
use tavo_llm::codec::StreamDecode;

const EVENTS: usize = 10_000;

fn openai_chat_stream() -> Vec<u8> {
    let mut s = String::new();
    for i in 0..EVENTS {
        s.push_str(&format!(
            "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" token{i}\"}},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    s.push_str("data: [DONE]\n\n");
    s.into_bytes()
}

fn anthropic_stream() -> Vec<u8> {
    let mut s = String::from(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    );
    for i in 0..EVENTS {
        s.push_str(&format!(
            "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\" token{i}\"}}}}\n\n"
        ));
    }
    s.push_str("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    s.into_bytes()
}

fn gemini_stream() -> Vec<u8> {
    let mut s = String::new();
    for i in 0..EVENTS {
        s.push_str(&format!(
            "data: {{\"candidates\":[{{\"content\":{{\"role\":\"model\",\"parts\":[{{\"text\":\" token{i}\"}}]}},\"index\":0}}]}}\r\n\r\n"
        ));
    }
    s.push_str("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n");
    s.into_bytes()
}

fn decode(protocol: Protocol, bytes: &[u8], out: &mut Vec<tavo_llm::StreamEvent>) -> usize {
    let mut d = StreamDecode::new(protocol);
    out.clear();
    for chunk in bytes.chunks(4096) {
        d.feed(chunk, out);
    }
    d.finish(out);
    out.len()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("sse_decode_10k_events");
    for (name, protocol, bytes) in [
        ("openai_chat", Protocol::OpenaiChat, openai_chat_stream()),
        ("anthropic", Protocol::Anthropic, anthropic_stream()),
        ("gemini", Protocol::Gemini, gemini_stream()),
    ] {
        let mut out = Vec::with_capacity(EVENTS + 16);
        assert!(decode(protocol, &bytes, &mut out) >= EVENTS);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(format!("{name}/bytes"), |b| {
            b.iter(|| black_box(decode(protocol, black_box(&bytes), &mut out)))
        });
        group.throughput(Throughput::Elements(EVENTS as u64));
        group.bench_function(format!("{name}/events"), |b| {
            b.iter(|| black_box(decode(protocol, black_box(&bytes), &mut out)))
        });
    }
    group.finish();
}

// `criterion_group!` makes a `pub fn` per group: in a private module it needs no docs.
mod groups {
    use super::*;

    criterion_group!(benches, bench);
}
criterion_main!(groups::benches);
