//! An incremental Server-Sent Events reader, correct for any split of the bytes.
//!
//! Why not `sse-stream`: per the SSE specification it drops a final event that has no blank
//! line after it, and the Anthropic SDK's recorded streams end exactly like that; it also
//! allocates a `String` per field per event. This reader keeps two reusable buffers, so an
//! event costs no allocation of its own; the callback borrows the event name and data.
//!
//! Rules (WHATWG "event stream interpretation"): lines end in `\n`, `\r\n` or `\r` (a `\r` at
//! the end of one chunk and a `\n` at the start of the next are one line end); a leading UTF-8
//! BOM is skipped; `:` starts a comment; `data` lines are joined with `\n`; one space after the
//! colon is dropped; a blank line dispatches the event if it has data. Unlike the spec, a final
//! event without a blank line is dispatched at [`SseParser::finish`].

/// One dispatched event. `event` is empty when the stream named none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field (Anthropic `content_block_delta`, Responses
    /// `response.output_text.delta`); OpenAI Chat and Gemini send none.
    pub event: &'a str,
    /// The `data:` lines joined with `\n`: one JSON value, or OpenAI's `[DONE]`.
    pub data: &'a str,
}

/// The reader's state between chunks.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of a line not yet terminated.
    partial: Vec<u8>,
    data: String,
    event: String,
    has_data: bool,
    /// The previous chunk ended in `\r`: a `\n` first in the next one belongs to it.
    pending_cr: bool,
    /// The first line was seen (the BOM can only precede it).
    started: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseParser {
    /// A reader at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next bytes; calls `on` for every event completed by them.
    pub fn feed(&mut self, mut chunk: &[u8], on: &mut dyn FnMut(SseEvent<'_>)) {
        if self.pending_cr {
            self.pending_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        while !chunk.is_empty() {
            match memchr::memchr2(b'\n', b'\r', chunk) {
                None => {
                    self.partial.extend_from_slice(chunk);
                    return;
                }
                Some(i) => {
                    let line_end = i;
                    let mut next = i + 1;
                    if chunk[i] == b'\r' {
                        if next == chunk.len() {
                            self.pending_cr = true;
                        } else if chunk[next] == b'\n' {
                            next += 1;
                        }
                    }
                    if self.partial.is_empty() {
                        self.line(&chunk[..line_end], on);
                    } else {
                        self.partial.extend_from_slice(&chunk[..line_end]);
                        let line = std::mem::take(&mut self.partial);
                        self.line(&line, on);
                        self.partial = line;
                        self.partial.clear();
                    }
                    chunk = &chunk[next..];
                }
            }
        }
    }

    /// Ends the stream: a last line without a line end, and a last event without a blank line
    /// after it, are delivered too.
    pub fn finish(&mut self, on: &mut dyn FnMut(SseEvent<'_>)) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, on);
        }
        self.dispatch(on);
        self.pending_cr = false;
    }

    fn line(&mut self, mut line: &[u8], on: &mut dyn FnMut(SseEvent<'_>)) {
        if !self.started {
            // The BOM can only come before the first line; a split BOM was reassembled in
            // `partial` because it contains no line end.
            self.started = true;
            if let Some(rest) = line.strip_prefix(BOM) {
                line = rest;
            }
        }
        if line.is_empty() {
            self.dispatch(on);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(c) => {
                let v = &line[c + 1..];
                (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                push_utf8(&mut self.data, value);
            }
            b"event" => {
                self.event.clear();
                push_utf8(&mut self.event, value);
            }
            // `id` and `retry` matter for reconnecting EventSource clients, not for one
            // provider response; unknown fields are ignored as the spec says.
            _ => {}
        }
    }

    fn dispatch(&mut self, on: &mut dyn FnMut(SseEvent<'_>)) {
        if self.has_data {
            on(SseEvent {
                event: &self.event,
                data: &self.data,
            });
        }
        self.data.clear();
        self.event.clear();
        self.has_data = false;
    }
}

/// Appends bytes that should be UTF-8; invalid sequences become U+FFFD rather than failing the
/// whole stream (line ends are ASCII, so a multi-byte character is never cut by the reader).
fn push_utf8(buf: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(s) => buf.push_str(s),
        Err(_) => buf.push_str(&String::from_utf8_lossy(bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        let mut on = |e: SseEvent<'_>| out.push((e.event.to_owned(), e.data.to_owned()));
        for c in chunks {
            p.feed(c, &mut on);
        }
        p.finish(&mut on);
        out
    }

    #[test]
    fn basic_framing_comments_and_multiline_data() {
        let got = collect(&[b": hi\nevent: a\ndata: 1\ndata:2\n\ndata: x\n\n"]);
        assert_eq!(
            got,
            vec![("a".into(), "1\n2".into()), (String::new(), "x".into())]
        );
    }

    #[test]
    fn crlf_split_across_chunks_and_bom_split() {
        let got = collect(&[b"\xEF\xBB", b"\xBFdata: 1\r", b"\n\r", b"\ndata: 2\r\r"]);
        assert_eq!(
            got,
            vec![(String::new(), "1".into()), (String::new(), "2".into())]
        );
    }

    #[test]
    fn last_event_without_blank_line_is_delivered_at_finish() {
        let got = collect(&[b"event: e\ndata: {}"]);
        assert_eq!(got, vec![("e".into(), "{}".into())]);
    }

    #[test]
    fn event_without_data_is_not_dispatched() {
        assert!(collect(&[b"event: only\n\n...\n\n"]).is_empty());
    }
}
