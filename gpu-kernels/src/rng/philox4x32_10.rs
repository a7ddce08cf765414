//! Philox4x32-10 as a stream generator: the counter-based generator of Salmon, Moraes, Dror and
//! Shaw, "Parallel random numbers: as easy as 1, 2, 3" (SC11), on top of the block function
//! [`super::philox::philox4x32_10`] (`block = f(counter, key)`, a bijection of the 128-bit counter
//! for each 64-bit key).
//!
//! **Output order.** For each counter value the four words of its block in order; then the
//! counter is incremented as a 128-bit little-endian integer (word 0 lowest, carrying into
//! words 1, 2, 3, wrapping at 2^128). For a fixed key the sequence is periodic with period
//! 2^128 blocks = 2^130 words.
//!
//! **Raw state** `c0,c1,c2,c3,k0,k1`: four counter words, then two key words. Every value is
//! valid; the generator starts at the first word of block `(c0, c1, c2, c3)`.
//!
//! **Stream rule** (the mapping cuRAND's device API documents for
//! `curand_init(seed, subsequence, 0)`): stream `k` of seed `s` has key `(s mod 2^32, s >> 32)`
//! and starts at counter `(0, 0, k mod 2^32, k >> 32)`, i.e. at block `k * 2^64`. Each of the
//! 2^64 streams of a seed owns 2^64 blocks (2^66 words) of the key's sequence before it would
//! reach the next stream's first counter, so streams of one seed never overlap unless a stream
//! draws more than 2^66 words (stream 2^64 - 1 would then wrap into stream 0). Streams of
//! different seeds use different keys: they are not disjoint by construction but are unrelated
//! pseudo-random functions of the counter. cuRAND's `offset` corresponds to [`Skip::skip`].
//! Bit-compatibility with cuRAND itself is not yet verified on a GPU (a later step compares
//! against cuRAND).
//!
//! **Skip** is `O(1)`: a 128-bit addition of `n / 4` to the counter and at most one block
//! evaluation (ten rounds).
//!
//! **Quality.** The paper reports that Philox4x32 passes TestU01's BigCrush with fewer than ten
//! rounds; ten is its recommended default, kept as a safety margin. It is not a cryptographic
//! generator (no security claim is made for Philox).
//!
//! **Representation.** `buffer` holds the block of counter `counter - 1` and `index` words of it
//! are used; `index == 4` means the next call evaluates block `counter`. A fresh state (from
//! [`Generator::stream`] or [`Generator::from_raw_state`]) has `index == 4`, so seeding costs
//! no block evaluation.

use super::philox::philox4x32_10;
use super::{Generator, InvalidState, Skip, Uniform32};

/// Philox4x32-10 stream state (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct Philox4x32x10 {
    /// The next block's counter, little-endian 128-bit (word 0 lowest).
    pub counter: [u32; 4],
    /// The key `(k0, k1)`.
    pub key: [u32; 2],
    /// The block of counter `counter - 1` (meaningless in a fresh state, where `index == 4`).
    pub buffer: [u32; 4],
    /// How many words of `buffer` are used, in `0..=4`; 4: the next call evaluates a new block.
    pub index: u32,
}

#[inline(always)]
fn to_u128(c: [u32; 4]) -> u128 {
    (c[0] as u128) | ((c[1] as u128) << 32) | ((c[2] as u128) << 64) | ((c[3] as u128) << 96)
}

#[inline(always)]
fn from_u128(x: u128) -> [u32; 4] {
    [x as u32, (x >> 32) as u32, (x >> 64) as u32, (x >> 96) as u32]
}

impl Philox4x32x10 {
    /// A generator at the first word of block `counter` under `key`.
    #[inline(always)]
    pub const fn new(counter: [u32; 4], key: [u32; 2]) -> Self {
        Self { counter, key, buffer: [0; 4], index: 4 }
    }

    /// A fresh state at the first word of block `counter + blocks` (mod 2^128), the same key.
    #[inline(always)]
    pub fn blocks_ahead(&self, blocks: u128) -> Self {
        Self::new(from_u128(to_u128(self.counter).wrapping_add(blocks)), self.key)
    }

    /// Evaluate block `counter` into `buffer` and advance the counter.
    #[inline(always)]
    fn refill(&mut self) {
        self.buffer = philox4x32_10(self.counter, self.key);
        self.counter = from_u128(to_u128(self.counter).wrapping_add(1));
        self.index = 0;
    }
}

impl Uniform32 for Philox4x32x10 {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        if self.index >= 4 {
            self.refill();
        }
        let i = self.index;
        self.index = i + 1;
        // Selects on the bits of `i` rather than `buffer[i]` (a dynamically indexed array goes
        // to local memory on the GPU) or a `match` (which becomes an indirect branch there).
        let b = self.buffer;
        let (lo, hi) = if i & 1 == 0 { (b[0], b[2]) } else { (b[1], b[3]) };
        if i & 2 == 0 { lo } else { hi }
    }

    /// At a block boundary (`index == 4`, where a fresh stream and every fill group start) the
    /// next block itself, the state left at the next boundary; elsewhere four single words.
    #[inline(always)]
    fn next_u32x4(&mut self) -> [u32; 4] {
        if self.index < 4 {
            return [self.next_u32(), self.next_u32(), self.next_u32(), self.next_u32()];
        }
        self.refill();
        self.index = 4;
        self.buffer
    }
}

// SAFETY: #[repr(C)] with fields [u32; 4], [u32; 2], [u32; 4], u32 only: 11 words, no padding.
unsafe impl Generator for Philox4x32x10 {
    const NAME: &'static str = "philox4x32-10";
    const RAW_STATE: &'static str = "c0,c1,c2,c3,k0,k1";
    const RAW_STATE_WORDS: usize = 6;
    const PERIOD: &'static str = "2^130 per key";

    /// Key `(s mod 2^32, s >> 32)`, counter `(0, 0, k mod 2^32, k >> 32)` (see the module docs).
    #[inline(always)]
    fn stream(seed: u64, stream: u64) -> Self {
        Self::new([0, 0, stream as u32, (stream >> 32) as u32], [seed as u32, (seed >> 32) as u32])
    }

    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState> {
        let w: [u32; 6] = words.try_into().map_err(|_| {
            InvalidState::word_count(
                Self::NAME,
                "it has exactly six words, four counter words then two key words: c0,c1,c2,c3,k0,k1",
            )
        })?;
        Ok(Self::new([w[0], w[1], w[2], w[3]], [w[4], w[5]]))
    }
}

impl Skip for Philox4x32x10 {
    /// `O(1)`; the result is the same state (buffer included) as `n` calls of `next_u32`.
    #[inline(always)]
    fn skip(&mut self, n: u64) {
        let used = if self.index > 4 { 4 } else { self.index };
        if n <= (4 - used) as u64 {
            self.index = used + n as u32;
            return;
        }
        // Counted from the start of the buffer's block (counter - 1): `t` words consumed in all,
        // so the last one is word (t - 1) % 4 of block (counter - 1) + (t - 1) / 4.
        let t = used as u128 + n as u128;
        let block = to_u128(self.counter).wrapping_sub(1).wrapping_add((t - 1) >> 2);
        self.counter = from_u128(block);
        self.refill();
        self.index = ((t - 1) & 3) as u32 + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{first as take, *};
    use super::*;

    fn raw(c: [u32; 4], k: [u32; 2]) -> Philox4x32x10 {
        Philox4x32x10::from_raw_state(&[c[0], c[1], c[2], c[3], k[0], k[1]]).unwrap()
    }

    /// The definition: the blocks of counters c, c + 1, c + 2, ... (mod 2^128), concatenated.
    fn definition(c: [u32; 4], k: [u32; 2], blocks: u128) -> Vec<u32> {
        (0..blocks).flat_map(|b| philox4x32_10(from_u128(to_u128(c).wrapping_add(b)), k)).collect()
    }

    /// Random123's kat_vectors for philox4x32 with 10 rounds (/work/shared/ALGORITHMS.md).
    #[test]
    fn reference() {
        for (c, k, out) in [
            ([0; 4], [0; 2], [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]),
            ([u32::MAX; 4], [u32::MAX; 2], [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]),
            (
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0],
                [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
            ),
        ] {
            assert_eq!(take(&mut raw(c, k), 4), out);
        }
        // The 5th to 8th outputs are the block of counter (1, 0, 0, 0).
        let mut g = raw([0; 4], [0; 2]);
        take(&mut g, 4);
        assert_eq!(take(&mut g, 4), philox4x32_10([1, 0, 0, 0], [0, 0]));
        // The all-ones counter wraps to zero.
        let mut g = raw([u32::MAX; 4], [u32::MAX; 2]);
        take(&mut g, 4);
        assert_eq!(take(&mut g, 4), philox4x32_10([0; 4], [u32::MAX; 2]));
    }

    /// `next_u32x4` gives the words and the state of four `next_u32` calls, whether it starts at
    /// a block boundary (a whole block) or inside a block (word by word), across counter carries.
    #[test]
    fn four_words_are_four_calls() {
        for c in [[0; 4], [u32::MAX, 0, 7, 0], [u32::MAX - 1, u32::MAX, u32::MAX, u32::MAX]] {
            for lead in 0..9 {
                let mut a = raw(c, [0x1234_5678, 0x9abc_def0]);
                take(&mut a, lead);
                let mut b = a;
                for _ in 0..3 {
                    let words = a.next_u32x4();
                    assert_eq!(words.to_vec(), take(&mut b, 4), "counter {c:?}, {lead} words in");
                    assert_eq!(a, b, "counter {c:?}, {lead} words in");
                }
            }
        }
    }

    #[test]
    fn counter_carries() {
        let k = [7, 9];
        for (c, next) in [
            ([u32::MAX, 0, 0, 0], [0, 1, 0, 0]),
            ([u32::MAX, u32::MAX, 0, 0], [0, 0, 1, 0]),
            ([u32::MAX, u32::MAX, u32::MAX, 0], [0, 0, 0, 1]),
            ([u32::MAX, 5, u32::MAX, 3], [0, 6, u32::MAX, 3]),
            ([u32::MAX; 4], [0; 4]),
        ] {
            let mut g = raw(c, k);
            assert_eq!(take(&mut g, 4), philox4x32_10(c, k));
            assert_eq!(take(&mut g, 4), philox4x32_10(next, k));
        }
    }

    /// from_raw_state then next_u32 is the definition's sequence, from several counters and keys.
    #[test]
    fn raw_state_follows_definition() {
        for (c, k) in [
            ([0; 4], [0; 2]),
            ([u32::MAX - 3, u32::MAX, u32::MAX, u32::MAX], [1, 2]),
            ([0x1234_5678, u32::MAX, 0x9abc, 0xdef0], [0xdead_beef, 0xcafe_f00d]),
        ] {
            assert_eq!(take(&mut raw(c, k), 400), definition(c, k, 100));
        }
    }

    #[test]
    fn value_stability() {
        // Pinned (checked against an independent implementation of the definition): a change
        // here changes every result produced with this generator.
        // Stream 0 of seed 0 is the all-zero known answer.
        assert_eq!(take(&mut Philox4x32x10::stream(0, 0), 4), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
        assert_eq!(
            take(&mut Philox4x32x10::stream(0x0123_4567_89ab_cdef, 42), 6),
            [3149452107, 1024282909, 966303983, 646843780, 1766435099, 4251342614]
        );
        assert_eq!(
            take(&mut Philox4x32x10::stream(2024, (1 << 40) + 3), 6),
            [3202889187, 2910613815, 2601199980, 983240709, 348635062, 1236203286]
        );
    }

    #[test]
    fn stream_rule() {
        for (s, k) in [(0u64, 0u64), (1, 1), (0x0123_4567_89ab_cdef, 42), (u64::MAX, (1 << 32) + 5), (3, u64::MAX)] {
            let key = [s as u32, (s >> 32) as u32];
            let c = [0, 0, k as u32, (k >> 32) as u32];
            let mut g = Philox4x32x10::stream(s, k);
            assert_eq!(g, Philox4x32x10::new(c, key));
            assert_eq!(take(&mut g, 8), definition(c, key, 2));
        }
        // The key takes both halves of the seed, the counter both halves of the stream.
        seed_and_stream_halves_matter::<Philox4x32x10>();
    }

    #[test]
    fn streams_distinct_and_disjoint() {
        streams_start_distinct::<Philox4x32x10>(42, 1000);
        // Agreement in a position happens with probability 2^-32 each.
        neighbours_rarely_agree::<Philox4x32x10>(42, [0, 1, 999, (1 << 32) - 1], 1000);
        // Stream k + 1 starts exactly 2^66 words after stream k (four skips of 2^64 - 1, plus 4);
        // the last stream wraps into stream 0.
        for (k, next) in [(0u64, 1u64), (7, 8), ((1 << 32) - 1, 1 << 32), (u64::MAX, 0)] {
            let mut g = Philox4x32x10::stream(5, k);
            for _ in 0..4 {
                g.skip(u64::MAX);
            }
            g.skip(4);
            assert_eq!(take(&mut g, 12), take(&mut Philox4x32x10::stream(5, next), 12), "stream {k}");
        }
    }

    /// skip(n) is the same state as n calls of next_u32, from fresh and mid-block positions.
    #[test]
    fn skip_equals_steps() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let ns = skip_lengths([4, 5, 7, 8].into_iter().chain((0..4).map(|_| xorshift64(&mut x) % 1_000_000)));
        for (c, k) in [([0; 4], [0; 2]), ([u32::MAX - 10, u32::MAX, 0, 0], [3, 4])] {
            for pre in 0..6 {
                // The helper also compares the next 9 outputs.
                skip_matches_stepping(stepped(raw(c, k), pre), &ns);
            }
        }
    }

    #[test]
    fn skips_compose() {
        let g0 = Philox4x32x10::stream(99, 3);
        skips_compose_for(g0, &[(0, 5), (1, 3), (3, 1), (2, 2), (6, 1 << 40), (1 << 62, (1 << 62) + 3)]);
        // A total of 2^64 does not fit one skip: compare it with the same total split the other way.
        assert_eq!(skipped(skipped(g0, u64::MAX), 1), skipped(skipped(g0, 1), u64::MAX));
    }

    /// Large skips land where the counter arithmetic says, across word carries and 2^128.
    #[test]
    fn large_skips() {
        let k = [11, 13];
        for (c, pre, n) in [
            ([0; 4], 0usize, 1u64 << 62),
            ([0; 4], 3, (1 << 62) + 1),
            ([5, 6, 7, 8], 1, 1 << 40),
            ([u32::MAX - 1, u32::MAX, 0, 0], 2, 4 * 3 + 2),
            ([0, 0, u32::MAX, u32::MAX], 0, u64::MAX),
            ([u32::MAX, u32::MAX, u32::MAX, u32::MAX], 4, (1 << 63) + 6),
        ] {
            let mut g = stepped(raw(c, k), pre as u64);
            g.skip(n);
            let word = pre as u128 + n as u128;
            let block = from_u128(to_u128(c).wrapping_add(word >> 2));
            let expect: Vec<u32> = definition(block, k, 3).into_iter().skip((word & 3) as usize).take(8).collect();
            assert_eq!(take(&mut g, 8), expect, "counter {c:?}, {pre} outputs, skip({n})");
        }
        // From counter (MAX, MAX, 0, 0), 8 words on is block (1, 0, 1, 0).
        let mut g = raw([u32::MAX, u32::MAX, 0, 0], k);
        g.skip(8);
        assert_eq!(take(&mut g, 4), philox4x32_10([1, 0, 1, 0], k));
    }

    #[test]
    fn raw_state_word_count() {
        rejects_word_counts::<Philox4x32x10>(&[&[1; 0], &[1; 5], &[1; 7]], "it has exactly six words");
        assert_eq!(Philox4x32x10::NAME, "philox4x32-10");
        // Every value is valid.
        assert!(Philox4x32x10::from_raw_state(&[0; 6]).is_ok());
        assert!(Philox4x32x10::from_raw_state(&[u32::MAX; 6]).is_ok());
        assert_eq!(core::mem::size_of::<Philox4x32x10>(), 11 * 4);
    }
}
