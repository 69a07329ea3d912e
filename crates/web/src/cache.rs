//! The per-reply snapshot cache behind `nextCursor`.
//!
//! A reply owns one [`FetchCache`]. A long document is stored once, split into pages up front,
//! and every cursor names (cache, snapshot, page): reading the next page never downloads again,
//! and a cursor from another reply (another cache nonce), a forged one, or one whose snapshot
//! was evicted to stay under the byte budget fails instead of falling back to the URL.

use std::collections::VecDeque;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use crate::document::{FetchResult, FetchedDocument};
use crate::error::FetchError;
use crate::paging::page_starts;

const CURSOR_VERSION: &str = "wf1";

/// Metadata of a cached document: everything of a result except the page text.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Snapshot {
    id: u32,
    url: String,
    final_url: String,
    status: u16,
    content_type: String,
    title: Option<String>,
    warnings: Vec<crate::warning::Warning>,
    /// The document itself was cut by a size limit.
    limit_truncated: bool,
    markdown: String,
    /// Start offset of each page.
    pages: Vec<usize>,
}

/// Cached documents of one reply, at most `capacity` bytes of Markdown.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FetchCache {
    nonce: u64,
    capacity: u64,
    page_bytes: usize,
    next_id: u32,
    bytes: u64,
    snapshots: VecDeque<Snapshot>,
}

impl FetchCache {
    /// An empty cache of `capacity` bytes that pages at `page_bytes`.
    pub fn new(capacity: u64, page_bytes: usize) -> Self {
        Self {
            nonce: rand::random(),
            capacity,
            page_bytes,
            next_id: 0,
            bytes: 0,
            snapshots: VecDeque::new(),
        }
    }

    /// The default cache: 24 MiB, 24 KiB pages.
    pub fn with_limits(limits: &crate::policy::FetchLimits) -> Self {
        Self::new(limits.cache_bytes, limits.page_bytes)
    }

    /// Bytes of Markdown currently held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Pages `doc`, caches it when it has more than one page, and returns its first page.
    pub fn first_page(&mut self, doc: FetchedDocument) -> FetchResult {
        let pages = page_starts(&doc.markdown, self.page_bytes);
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        let snapshot = Snapshot {
            id,
            url: doc.url,
            final_url: doc.final_url,
            status: doc.status,
            content_type: doc.content_type,
            title: doc.title,
            warnings: doc.warnings,
            limit_truncated: doc.limit_truncated,
            markdown: doc.markdown,
            pages,
        };
        let result = self.render(&snapshot, 0);
        if snapshot.pages.len() > 1 {
            self.insert(snapshot);
        }
        result
    }

    /// The page a cursor points to.
    pub fn page(&self, cursor: &str) -> Result<FetchResult, FetchError> {
        let (nonce, id, page) = decode_cursor(cursor).ok_or(FetchError::InvalidCursor)?;
        if nonce != self.nonce {
            return Err(FetchError::InvalidCursor);
        }
        let Some(snapshot) = self.snapshots.iter().find(|s| s.id == id) else {
            // Ids below next_id were issued by this cache: the snapshot was evicted.
            return Err(if id < self.next_id {
                FetchError::CursorExpired
            } else {
                FetchError::InvalidCursor
            });
        };
        if page == 0 || page >= snapshot.pages.len() {
            return Err(FetchError::InvalidCursor);
        }
        Ok(self.render(snapshot, page))
    }

    fn insert(&mut self, snapshot: Snapshot) {
        let size = snapshot.markdown.len() as u64;
        while self.bytes + size > self.capacity {
            match self.snapshots.pop_front() {
                Some(old) => self.bytes -= old.markdown.len() as u64,
                None => break,
            }
        }
        if size <= self.capacity {
            self.bytes += size;
            self.snapshots.push_back(snapshot);
        }
    }

    fn render(&self, snapshot: &Snapshot, page: usize) -> FetchResult {
        let start = snapshot.pages[page];
        let end = snapshot
            .pages
            .get(page + 1)
            .copied()
            .unwrap_or(snapshot.markdown.len());
        let has_next = page + 1 < snapshot.pages.len();
        FetchResult {
            url: snapshot.url.clone(),
            final_url: snapshot.final_url.clone(),
            status: snapshot.status,
            content_type: snapshot.content_type.clone(),
            title: snapshot.title.clone(),
            markdown: snapshot.markdown[start..end].to_string(),
            truncated: has_next || snapshot.limit_truncated,
            next_cursor: has_next.then(|| encode_cursor(self.nonce, snapshot.id, page + 1)),
            warnings: snapshot.warnings.clone(),
            content_bytes: (end - start) as u64,
        }
    }
}

fn encode_cursor(nonce: u64, id: u32, page: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{CURSOR_VERSION}:{nonce:016x}:{id}:{page}"))
}

fn decode_cursor(cursor: &str) -> Option<(u64, u32, usize)> {
    let raw = URL_SAFE_NO_PAD.decode(cursor.trim()).ok()?;
    let raw = String::from_utf8(raw).ok()?;
    let mut parts = raw.split(':');
    if parts.next()? != CURSOR_VERSION {
        return None;
    }
    let nonce = u64::from_str_radix(parts.next()?, 16).ok()?;
    let id = parts.next()?.parse().ok()?;
    let page = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((nonce, id, page))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(len: usize) -> FetchedDocument {
        let line = "0123456789 abcdefghij klmnopqrst uvwxyz\n";
        let markdown = line.repeat(len / line.len() + 1);
        FetchedDocument {
            url: "http://h.test/doc#frag".into(),
            final_url: "http://h.test/doc".into(),
            status: 200,
            content_type: "text/plain".into(),
            title: None,
            markdown,
            warnings: vec![],
            limit_truncated: false,
            content_bytes: len as u64,
            duration: std::time::Duration::ZERO,
        }
    }

    #[test]
    fn pages_chain_through_cursors_and_reassemble() {
        let mut cache = FetchCache::new(1 << 20, 1000);
        let original = doc(10_000).markdown;
        let mut result = cache.first_page(doc(10_000));
        let mut text = result.markdown.clone();
        let mut pages = 1;
        while let Some(cursor) = result.next_cursor.clone() {
            result = cache.page(&cursor).unwrap_or_else(|e| panic!("{e}"));
            text.push_str(&result.markdown);
            pages += 1;
        }
        assert_eq!(text, original);
        assert!(pages >= 10);
        assert!(!result.truncated);
    }

    #[test]
    fn short_documents_are_not_cached() {
        let mut cache = FetchCache::new(1 << 20, 1000);
        let result = cache.first_page(doc(10));
        assert!(result.next_cursor.is_none() && !result.truncated);
        assert_eq!(cache.bytes(), 0);
    }

    #[test]
    fn eviction_expires_old_cursors_and_foreign_cursors_are_invalid() {
        let mut cache = FetchCache::new(15_000, 1000);
        let first = cache.first_page(doc(10_000));
        let cursor = first.next_cursor.unwrap_or_default();
        assert!(cache.page(&cursor).is_ok());
        cache.first_page(doc(10_000));
        assert_eq!(
            cache.page(&cursor).err().map(|e| e.code()),
            Some("cursor_expired")
        );
        assert!(cache.bytes() <= 15_000);

        let other = FetchCache::new(15_000, 1000);
        let err = other.page(&cursor).err().map(|e| e.code());
        assert_eq!(err, Some("invalid_cursor"));
        for bad in ["", "not-a-real-cursor", "d2YxOjA6MDo1"] {
            assert_eq!(
                cache.page(bad).err().map(|e| e.code()),
                Some("invalid_cursor")
            );
        }
    }
}
