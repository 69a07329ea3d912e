//! The hash that places a token's bytes in its vocabulary's index. Shared, as this one file,
//! by the build script that writes the index and by the lookups that read it, so the two can
//! never disagree.

/// Bits of an index entry that hold the rank + 1 (0 marks an empty slot); the bits above
/// hold a tag from the hash, so that most probes that miss are told apart without reading
/// the token's bytes (another page of the table).
pub(crate) const RANK_BITS: u32 = 18;

/// The mask of the rank + 1 in an index entry.
pub(crate) const RANK_MASK: u32 = (1 << RANK_BITS) - 1;

/// FNV-1a over the bytes, then the 64-bit finaliser of MurmurHash3 so that the high bits
/// (the slot) and the low bits (the tag) are both well mixed even for one- or two-byte
/// pieces.
pub(crate) fn vocab_hash(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    hash ^ (hash >> 33)
}

/// The first slot to probe for `hash` in an index of `1 << slot_bits` slots.
pub(crate) fn first_slot(hash: u64, slot_bits: u32) -> usize {
    (hash >> (64 - slot_bits)) as usize
}

/// The tag kept beside the rank in an entry: bits 18–31 of the hash, in their place (the
/// slot comes from the top bits, so the two are independent).
pub(crate) fn tag(hash: u64) -> u32 {
    (hash as u32) & !RANK_MASK
}
