//! Byte-pair merging of one pre-tokenized piece, counting the tokens it ends as. The same two
//! procedures as tiktoken's (`_byte_pair_merge` for short pieces, the heap-based
//! `_byte_pair_merge_large` from 100 bytes on): repeatedly merge the adjacent pair whose merged
//! bytes have the lowest rank, the leftmost one among equals, until no adjacent pair is a
//! token. Both give the same tokens; the short one is faster where pieces are short (almost
//! always), the long one keeps a long piece (a run of symbols, a base64 blob) from costing
//! quadratic time.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::vocabulary::Vocabulary;

/// A rank no token has: "these two parts do not merge".
const NONE: u32 = u32::MAX;

/// From this many bytes on a piece is merged with the heap (tiktoken's threshold).
pub(crate) const LARGE_PIECE: usize = 100;

/// The number of tokens `piece` encodes to. `scratch` is reused between pieces.
pub(crate) fn count_piece(
    vocabulary: &Vocabulary,
    piece: &[u8],
    scratch: &mut Vec<(usize, u32)>,
) -> usize {
    match piece.len() {
        0 => 0,
        1 => 1,
        _ if vocabulary.rank(piece).is_some() => 1,
        n if n < LARGE_PIECE => count_short(vocabulary, piece, scratch),
        _ => count_long(vocabulary, piece),
    }
}

/// The rank of `piece[start..end]`, or [`NONE`].
fn rank_of(vocabulary: &Vocabulary, piece: &[u8], start: usize, end: usize) -> u32 {
    piece
        .get(start..end)
        .and_then(|bytes| vocabulary.rank(bytes))
        .unwrap_or(NONE)
}

/// tiktoken's `_byte_pair_merge`: `parts` holds each part's start and the rank of the merge
/// of it with the next part; each round merges the lowest and rescans.
pub(crate) fn count_short(
    vocabulary: &Vocabulary,
    piece: &[u8],
    parts: &mut Vec<(usize, u32)>,
) -> usize {
    parts.clear();
    let mut lowest = (NONE, usize::MAX);
    for start in 0..piece.len() - 1 {
        let rank = rank_of(vocabulary, piece, start, start + 2);
        if rank < lowest.0 {
            lowest = (rank, start);
        }
        parts.push((start, rank));
    }
    parts.push((piece.len() - 1, NONE));
    parts.push((piece.len(), NONE));
    // The rank of merging part `i` with part `i + 1`, before part `i + 1` is removed (so
    // part `i + 2` of now is the end of the merged pair's right half).
    let merged_rank = |parts: &[(usize, u32)], i: usize| {
        if i + 3 < parts.len() {
            rank_of(vocabulary, piece, parts[i].0, parts[i + 3].0)
        } else {
            NONE
        }
    };
    while lowest.0 != NONE {
        let i = lowest.1;
        if i > 0 {
            parts[i - 1].1 = merged_rank(parts, i - 1);
        }
        parts[i].1 = merged_rank(parts, i);
        parts.remove(i + 1);
        lowest = (NONE, usize::MAX);
        for (at, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
            if rank < lowest.0 {
                lowest = (rank, at);
            }
        }
    }
    parts.len() - 1
}

/// A candidate merge on the heap: the lowest rank first, then the leftmost.
#[derive(PartialEq, Eq)]
struct Merge {
    start: usize,
    rank: u32,
}

impl Ord for Merge {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .rank
            .cmp(&self.rank)
            .then_with(|| other.start.cmp(&self.start))
    }
}

impl PartialOrd for Merge {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One part of a long piece: a doubly linked list over byte positions.
struct Part {
    prev: usize,
    end: usize,
    next_end: usize,
    next_rank: u32,
}

/// tiktoken's `_byte_pair_merge_large`: candidate merges on a heap, stale ones skipped when
/// they come off it.
pub(crate) fn count_long(vocabulary: &Vocabulary, piece: &[u8]) -> usize {
    let len = piece.len();
    let mut parts: Vec<Part> = Vec::with_capacity(len);
    let mut heap = BinaryHeap::with_capacity(len);
    parts.push(Part {
        prev: usize::MAX,
        end: 1,
        next_end: 2,
        next_rank: NONE,
    });
    for start in 0..len - 1 {
        let rank = rank_of(vocabulary, piece, start, start + 2);
        if rank != NONE {
            heap.push(Merge { start, rank });
            parts[start].next_rank = rank;
        }
        parts.push(Part {
            prev: start,
            end: start + 2,
            next_end: start + 3,
            next_rank: NONE,
        });
    }
    let mut tokens = len;
    while let Some(left) = heap.pop() {
        if left.rank != parts[left.start].next_rank {
            continue; // stale: that pair was merged or changed since
        }
        tokens -= 1;
        let left_start = left.start;
        let right_start = parts[left_start].end;
        let right_end = parts[left_start].next_end;
        let right_next_end = parts[right_start].next_end;
        parts[left_start].end = right_end;
        candidate(
            vocabulary,
            piece,
            &mut parts,
            &mut heap,
            left_start,
            right_next_end,
        );
        if right_end < parts.len() {
            parts[right_end].prev = left_start;
        }
        if left_start > 0 {
            let prev_start = parts[left_start].prev;
            candidate(
                vocabulary, piece, &mut parts, &mut heap, prev_start, right_end,
            );
        }
        parts[right_start].next_rank = NONE;
    }
    tokens
}

/// Records the merge of the part at `start` with the part ending at `next_end`, replacing
/// the one it had, and queues it when it is a token.
fn candidate(
    vocabulary: &Vocabulary,
    piece: &[u8],
    parts: &mut [Part],
    heap: &mut BinaryHeap<Merge>,
    start: usize,
    next_end: usize,
) {
    parts[start].next_end = next_end;
    parts[start].next_rank = NONE;
    if next_end <= piece.len() {
        let rank = rank_of(vocabulary, piece, start, next_end);
        if rank != NONE {
            heap.push(Merge { start, rank });
            parts[start].next_rank = rank;
        }
    }
}
