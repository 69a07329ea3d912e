//! A BPE vocabulary as the build script laid it out (`build.rs`): token bytes by rank and an
//! open-addressing index from bytes to rank, all `&'static` slices of the executable. Nothing
//! is parsed or copied at run time, so a vocabulary costs no heap, and only the pages that
//! lookups touch are ever resident.

use super::vocab_hash::{RANK_MASK, first_slot, tag, vocab_hash};

/// Token bytes and the index over them, as compiled into the executable.
#[derive(Clone, Copy)]
pub(crate) struct Vocabulary {
    /// Every token's bytes, concatenated in rank order.
    bytes: &'static [u8],
    /// Little-endian `u32` per rank: where its bytes end in `bytes`.
    ends: &'static [u8],
    /// Little-endian `u32` per slot: `tag | (rank + 1)`, 0 when the slot is empty.
    index: &'static [u8],
    /// log2 of the number of slots.
    slot_bits: u32,
}

/// The `u32` at position `at` of a little-endian table (0 past its end).
fn entry(table: &[u8], at: usize) -> u32 {
    table
        .get(at * 4..at * 4 + 4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(0, u32::from_le_bytes)
}

impl Vocabulary {
    /// The vocabulary over the build script's three tables; `None` when they are not of the
    /// shape it writes (a power-of-two index, at least one token).
    pub(crate) fn new(
        bytes: &'static [u8],
        ends: &'static [u8],
        index: &'static [u8],
    ) -> Option<Self> {
        let slots = index.len() / 4;
        let well_formed = index.len().is_multiple_of(4)
            && slots.is_power_of_two()
            && slots > 1
            && ends.len().is_multiple_of(4)
            && !ends.is_empty()
            && entry(ends, ends.len() / 4 - 1) as usize == bytes.len();
        well_formed.then(|| Self {
            bytes,
            ends,
            index,
            slot_bits: slots.trailing_zeros(),
        })
    }

    /// How many tokens it has.
    pub(crate) fn len(&self) -> usize {
        self.ends.len() / 4
    }

    /// The bytes of the token of `rank` (empty for a rank it does not have).
    pub(crate) fn token(&self, rank: u32) -> &'static [u8] {
        let rank = rank as usize;
        if rank >= self.len() {
            return &[];
        }
        let start = if rank == 0 {
            0
        } else {
            entry(self.ends, rank - 1)
        };
        let end = entry(self.ends, rank);
        self.bytes
            .get(start as usize..end as usize)
            .unwrap_or_default()
    }

    /// The rank of the token whose bytes are `piece`, if it is one.
    pub(crate) fn rank(&self, piece: &[u8]) -> Option<u32> {
        let hash = vocab_hash(piece);
        let tag = tag(hash);
        let mask = (1usize << self.slot_bits) - 1;
        let mut slot = first_slot(hash, self.slot_bits);
        // The index is at most half full, so a probe always reaches an empty slot.
        loop {
            let found = entry(self.index, slot);
            if found == 0 {
                return None;
            }
            if found & !RANK_MASK == tag {
                let rank = (found & RANK_MASK) - 1;
                if self.token(rank) == piece {
                    return Some(rank);
                }
            }
            slot = (slot + 1) & mask;
        }
    }
}
