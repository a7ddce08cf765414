//! cuRAND's host-API layout (`curandGenerate*` with `CURAND_ORDERING_PSEUDO_LEGACY` or
//! `_DEFAULT`), for the three generators warpmc shares with cuRAND: what a GPU thread computes,
//! and the conversions from a generator's words to cuRAND's values.
//!
//! The host API interleaves `T` device-API subsequences ("lanes", `curand_init(seed, lane, 0)`,
//! which is [`Generator::stream`]`(seed, lane)` for [`Xorwow`], [`Mrg32k3aCurand`] and
//! [`Philox4x32x10`]) in groups of `W` values: value `m` of the host sequence is value
//! `j = m mod W` of group `g = m / W`, which belongs to lane `g mod T`, round `g / T`. A group
//! that starts at word `s` of its lane takes words `s + j k .. s + j k + k` for value `j`, `k`
//! being the words per value. Where a lane's groups start depends on the calls before
//! (`host/src/curand_host.rs` documents the rule, checked against cuRAND); a call passes the start
//! word of each lane's first group, and [`lane_chunk`] produces the lane's values from there.
//! The host crate's module `curand_host` runs the same rule on the CPU.
//!
//! The start words are a step function of the lane with few steps (one step per earlier run of
//! calls, see [`InlineStarts`]), so a call passes them as a handful of `(first lane, start)`
//! pairs rather than one word per lane: no per-lane table is computed or copied for the common
//! histories.

use crate::convert::{u32_pair_to_unit_f64, u32_to_unit_open_closed};
use crate::rng::mrg32k3a_curand::Mrg32k3aCurand;
use crate::rng::{Generator, Philox4x32x10, Skip, Uniform32, Xorwow};

/// cuRAND's `MRG32K3A_NORM` of the CUDA 13.0 headers, `fl(1 / m1)`: from the combined value `z`
/// in `[1, m1]` to `(0, 1]` (used for MRG32k3a's floats and doubles).
pub const MRG32K3A_NORM: f64 = 1.0 / 4_294_967_087.0;

/// A generator of cuRAND's host API, with cuRAND's conversions from its outputs to values.
pub trait CurandGenerator: Generator + Skip {
    /// Words one `f64` takes (two for XORWOW and Philox, one step for MRG32k3a).
    const F64_WORDS: u64 = 2;

    /// `W`, the values of one group of the layout: 1, or 4 (Philox, whose groups are its blocks).
    /// The host's `CurandRng::group` is the same number, and [`lane_chunk`] relies on it.
    const GROUP: u64 = 1;

    /// What `stream(seed, lane)` followed by a `skip` of up to about 2^20 words costs, counted
    /// in words drawn (a rough count, for choosing how many pieces the GPU cuts a lane into:
    /// each piece pays it once). XORWOW: about a dozen polynomial products (six for a lane below
    /// 4096, as many for the skip), each 160 steps with five masked XORs, plus up to 255 plain
    /// steps: about 2000 words by operation count (a CPU measures about 900, its words costing
    /// relatively more in stores and loop work). MRG32k3a: 3x3 matrix products modulo its
    /// primes, about 500 words on a CPU. Philox: a 128-bit counter addition ([`Self::at`] places
    /// a piece at a block boundary without evaluating a block), about two words.
    /// (`curand_host::timing` in the host crate prints the CPU's ratios.)
    const INIT_WORDS: u64;

    /// Lane `lane` of `seed` standing at its word `word`: `stream(seed, lane)` then
    /// `skip(word)`, the same words from there on. A generator may place itself more cheaply.
    #[inline(always)]
    fn at(seed: u64, lane: u64, word: u64) -> Self {
        let mut g = Self::stream(seed, lane);
        g.skip(word);
        g
    }

    /// The next group's `GROUP` values, the first `GROUP` entries of the array (the others are
    /// `V::default()`), for a generator standing at the group's first word: the same values
    /// as `GROUP` calls of [`CurandValue::value`], in order. A generator may draw a whole group
    /// at once where that is cheaper (Philox: a block per group).
    #[inline(always)]
    fn group<V: CurandValue>(&mut self) -> [V; 4] {
        let mut out = [V::default(); 4];
        let mut j = 0;
        while j < Self::GROUP as usize && j < 4 {
            out[j] = V::value(self);
            j += 1;
        }
        out
    }

    /// `curandGenerate`: the device API's `curand()` word.
    #[inline(always)]
    fn value_u32(&mut self) -> u32 {
        self.next_u32()
    }

    /// `curandGenerateUniform`: `x * 2^-32 + 2^-33` in float arithmetic, in `(0, 1]`.
    #[inline(always)]
    fn value_f32(&mut self) -> f32 {
        u32_to_unit_open_closed(self.next_u32())
    }

    /// `curandGenerateUniformDouble`: `(x ^ (y << 21)) 2^-53 + 2^-54` from two consecutive
    /// words, 53 random bits.
    #[inline(always)]
    fn value_f64(&mut self) -> f64 {
        let x = self.next_u32();
        let y = self.next_u32();
        u32_pair_to_unit_f64(x, y)
    }
}

impl CurandGenerator for Xorwow {
    const INIT_WORDS: u64 = 2000;
}

impl CurandGenerator for Philox4x32x10 {
    const GROUP: u64 = 4;
    const INIT_WORDS: u64 = 2;

    /// At a block boundary (every group start of the layout) a fresh state at the block's
    /// counter, with no block evaluated (`skip` evaluates the block it lands in, which a piece
    /// of a lane starting there would never use); elsewhere `stream` then `skip`.
    #[inline(always)]
    fn at(seed: u64, lane: u64, word: u64) -> Self {
        let mut g = Self::stream(seed, lane);
        if word.is_multiple_of(4) {
            return g.blocks_ahead((word / 4) as u128);
        }
        g.skip(word);
        g
    }

    /// A group starts at a block boundary (a start word is a multiple of `W = 4`, and a group
    /// takes 4 or 8 words), so it is one block for `u32` and `f32` and two for `f64`, drawn by
    /// [`Uniform32::next_u32x4`] straight into the values, without the per-word buffer
    /// bookkeeping of `next_u32` (a test of the buffer index per word, and a select of the word).
    #[inline(always)]
    fn group<V: CurandValue>(&mut self) -> [V; 4] {
        let a = self.next_u32x4();
        if V::words::<Self>() == 1 {
            [V::from_pair(a[0], 0), V::from_pair(a[1], 0), V::from_pair(a[2], 0), V::from_pair(a[3], 0)]
        } else {
            let b = self.next_u32x4();
            [V::from_pair(a[0], a[1]), V::from_pair(a[2], a[3]), V::from_pair(b[0], b[1]), V::from_pair(b[2], b[3])]
        }
    }
}

impl CurandGenerator for Mrg32k3aCurand {
    const F64_WORDS: u64 = 1;
    const INIT_WORDS: u64 = 500;

    /// `(float)(z * MRG32K3A_NORM)` from the combined value `z`, not from the 32-bit word.
    #[inline(always)]
    fn value_f32(&mut self) -> f32 {
        (self.step_z() as f64 * MRG32K3A_NORM) as f32
    }

    /// `z * MRG32K3A_NORM`: one step per double, 32 bits' worth, as cuRAND.
    #[inline(always)]
    fn value_f64(&mut self) -> f64 {
        self.step_z() as f64 * MRG32K3A_NORM
    }
}

/// The values cuRAND's host API generates: `u32`, `f32`, `f64`.
pub trait CurandValue: Copy + Default + Send + Sync + 'static {
    /// Words of its lane one value takes for generator `G`.
    fn words<G: CurandGenerator>() -> u64;
    /// The next value of `G`.
    fn value<G: CurandGenerator>(g: &mut G) -> Self;
    /// The value made of words `x` (and `y`, for two-word values) by XORWOW's and Philox's
    /// conversions: what [`Self::value`] gives for those two generators.
    fn from_pair(x: u32, y: u32) -> Self;
}

impl CurandValue for u32 {
    #[inline(always)]
    fn words<G: CurandGenerator>() -> u64 {
        1
    }
    #[inline(always)]
    fn value<G: CurandGenerator>(g: &mut G) -> u32 {
        g.value_u32()
    }
    #[inline(always)]
    fn from_pair(x: u32, _: u32) -> u32 {
        x
    }
}

impl CurandValue for f32 {
    #[inline(always)]
    fn words<G: CurandGenerator>() -> u64 {
        1
    }
    #[inline(always)]
    fn value<G: CurandGenerator>(g: &mut G) -> f32 {
        g.value_f32()
    }
    #[inline(always)]
    fn from_pair(x: u32, _: u32) -> f32 {
        u32_to_unit_open_closed(x)
    }
}

impl CurandValue for f64 {
    #[inline(always)]
    fn words<G: CurandGenerator>() -> u64 {
        G::F64_WORDS
    }
    #[inline(always)]
    fn value<G: CurandGenerator>(g: &mut G) -> f64 {
        g.value_f64()
    }
    #[inline(always)]
    fn from_pair(x: u32, y: u32) -> f64 {
        u32_pair_to_unit_f64(x, y)
    }
}

/// One call of the host API: values `first .. end` of the host sequence of `lanes` lanes in
/// groups of `group`, `seed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct CurandCall {
    pub seed: u64,
    pub first: u64,
    pub end: u64,
    /// `T`.
    pub lanes: u64,
    /// `W`.
    pub group: u64,
}

impl CurandCall {
    /// Lane `lane`'s rounds with a value in `first..end`: `(first round, last round)`, or `None`.
    #[inline(always)]
    pub fn rounds(&self, lane: u64) -> Option<(u64, u64)> {
        // `max(1)`: never 0 by the host's contract, and no division-by-zero panic path on the GPU.
        let (t, w) = (self.lanes.max(1), self.group.max(1));
        if self.end <= self.first {
            return None;
        }
        let (g0, g1) = (self.first / w, (self.end - 1) / w);
        let ga = g0 + (lane + t - g0 % t) % t;
        if ga > g1 {
            return None;
        }
        let gb = g1 - (g1 % t + t - lane) % t;
        Some((ga / t, gb / t))
    }
}

/// How many `(first lane, start)` steps of the lane-start function a call passes by value
/// ([`InlineStarts`]). A history of `R` runs of calls gives at most `R + 2` steps, so six runs of
/// alternating value types fit; longer histories pass one start per lane instead.
pub const INLINE_STARTS: usize = 8;

/// The start words of a call's lanes as a step function: entries `0..INLINE_STARTS` are the
/// first lanes of the steps, increasing, the first one 0 (unused steps: `u64::MAX`); entries
/// `INLINE_STARTS..` their start words. Lane `l` starts at the start of the last step whose first
/// lane is at most `l`.
///
/// Why a step function: lane `l`'s start is a sum over the boundaries `b` of the history (the
/// offset and the end of each run of equal words per value) of a coefficient times the number of
/// its groups before `b`, `q_b + [l < r_b]` (`q_b`, `r_b` the quotient and remainder of `b`'s
/// group by `T`): a constant plus one step down at each `r_b`.
pub type InlineStarts = [u64; 2 * INLINE_STARTS];

/// Lane `lane`'s start word in `starts` (see [`InlineStarts`]): a scan of constant length with
/// constant indices, so the table stays in registers (or the parameter space) on the GPU.
#[inline(always)]
pub fn inline_start(starts: &InlineStarts, lane: u64) -> u64 {
    let mut start = starts[INLINE_STARTS];
    let mut i = 1;
    while i < INLINE_STARTS {
        if lane >= starts[i] {
            start = starts[INLINE_STARTS + i];
        }
        i += 1;
    }
    start
}

/// Lane `lane`'s values for its rounds `from..=to` of `call` (a subset of [`CurandCall::rounds`],
/// whose first round is `r0`), its round `r0` starting at word `start0` of the lane. Each value
/// `m` of those rounds inside `first..end` is written at `m - first`: a group wholly inside the
/// call by `whole(m - first, values)` (its first value's index, and the `G::GROUP` values in the
/// array's first entries), a value of a group cut by the call's start or end by
/// `one(m - first, value)`. The values of cut groups outside `first..end` are drawn and dropped
/// (they take their words all the same). Nothing is written if `call.group` is not `G::GROUP`
/// (the host never does that).
///
/// Only the lane's first and last rounds can be cut (every round between them lies inside the
/// call), so only a chunk's first and last rounds are checked; the rounds between are drawn and
/// written a group at a time, with no test per value.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn lane_chunk<G: CurandGenerator, V: CurandValue>(
    call: &CurandCall,
    lane: u64,
    r0: u64,
    start0: u64,
    from: u64,
    to: u64,
    mut whole: impl FnMut(u64, [V; 4]),
    mut one: impl FnMut(u64, V),
) {
    let (t, w, k) = (call.lanes, G::GROUP, V::words::<G>());
    if call.group != w || from < r0 || to < from {
        return;
    }
    let mut g = G::at(call.seed, lane, start0 + (from - r0) * w * k);
    let first = call.first;
    // `at`: the host-sequence index of round `r`'s group's first value.
    let stride = t * w;
    let mut at = (from * t + lane) * w;
    checked_group(&mut g, call, at, &mut whole, &mut one);
    if to > from {
        let mut r = from + 1;
        at += stride;
        while r < to {
            whole(at - first, g.group::<V>());
            r += 1;
            at += stride;
        }
        checked_group(&mut g, call, at, &mut whole, &mut one);
    }
}

/// A group of [`lane_chunk`] that may be cut by the call's start or end: its first value is
/// value `at` of the host sequence, each value is checked against `first..end`.
#[inline(always)]
fn checked_group<G: CurandGenerator, V: CurandValue>(
    g: &mut G,
    call: &CurandCall,
    at: u64,
    whole: &mut impl FnMut(u64, [V; 4]),
    one: &mut impl FnMut(u64, V),
) {
    let (first, end, w) = (call.first, call.end, G::GROUP);
    let values = g.group::<V>();
    if at >= first && end.saturating_sub(at) >= w {
        whole(at - first, values);
    } else {
        let mut j = 0;
        while j < w as usize && j < 4 {
            let m = at + j as u64;
            if m >= first && m < end {
                one(m - first, values[j]);
            }
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Uniform32;

    #[test]
    fn rounds_cover_the_call() {
        for (t, w) in [(5u64, 1u64), (4, 4), (7, 3)] {
            for first in 0..40u64 {
                for n in [1u64, 2, 9, 33] {
                    let call = CurandCall { seed: 0, first, end: first + n, lanes: t, group: w };
                    // Every value of the call is in exactly one lane's round range.
                    for m in first..first + n {
                        let (g, lane) = (m / w, (m / w) % t);
                        let (a, b) = call.rounds(lane).unwrap();
                        assert!((a..=b).contains(&(g / t)), "t {t} w {w} first {first} n {n} m {m}");
                    }
                    // And the ranges hold no round without one.
                    for lane in 0..t {
                        if let Some((a, b)) = call.rounds(lane) {
                            for r in [a, b] {
                                let g = r * t + lane;
                                assert!(g * w + w > first && g * w < first + n);
                            }
                        }
                    }
                }
            }
        }
    }
    /// `group` draws the same values, and leaves the same position, as `GROUP` calls of
    /// `value`: from group starts (Philox: block boundaries, its fast path) and, for Philox, from
    /// inside a block (the word-by-word path).
    fn group_is_values<G: CurandGenerator, V: CurandValue + PartialEq + core::fmt::Debug>() {
        for (lane, skip) in [(0u64, 0u64), (3, 4), (77, 8 * 1001), (65_535, 1), (9, 6)] {
            let mut a = G::stream(42, lane);
            a.skip(skip);
            let mut b = a;
            for _ in 0..3 {
                let got = a.group::<V>();
                for (j, x) in got.iter().enumerate() {
                    if (j as u64) < G::GROUP {
                        assert_eq!(*x, V::value(&mut b), "lane {lane} skip {skip} value {j}");
                    } else {
                        assert_eq!(*x, V::default());
                    }
                }
            }
            assert_eq!(a.next_u32(), b.next_u32(), "the same position after");
        }
    }

    #[test]
    fn groups_equal_values() {
        group_is_values::<Xorwow, u32>();
        group_is_values::<Xorwow, f32>();
        group_is_values::<Xorwow, f64>();
        group_is_values::<Mrg32k3aCurand, u32>();
        group_is_values::<Mrg32k3aCurand, f32>();
        group_is_values::<Mrg32k3aCurand, f64>();
        group_is_values::<Philox4x32x10, u32>();
        group_is_values::<Philox4x32x10, f32>();
        group_is_values::<Philox4x32x10, f64>();
        // The counter carries across its words.
        let mut a = Philox4x32x10::new([u32::MAX, u32::MAX, 7, 0], [1, 2]);
        let mut b = a;
        let _ = a.group::<u32>();
        for _ in 0..4 {
            b.next_u32();
        }
        assert_eq!(a.counter, [0, 0, 8, 0]);
        assert_eq!(a.group::<u32>(), [b.next_u32(), b.next_u32(), b.next_u32(), b.next_u32()]);
    }

    /// `at` gives the words of `stream` then `skip`, at block boundaries (Philox's own path) and
    /// inside blocks, for lanes whose counters carry.
    fn at_is_stream_and_skip<G: CurandGenerator>() {
        for seed in [0, 42, u64::MAX] {
            for lane in [0, 1, 65_535, u32::MAX as u64, u64::MAX] {
                for word in [0, 1, 3, 4, 8, 4 * 1001, 4 * 1001 + 2, 1 << 40, (1 << 40) + 5] {
                    let mut a = G::at(seed, lane, word);
                    let mut b = G::stream(seed, lane);
                    b.skip(word);
                    for i in 0..9 {
                        assert_eq!(a.next_u32(), b.next_u32(), "seed {seed} lane {lane} word {word} + {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn at_equals_stream_then_skip() {
        at_is_stream_and_skip::<Xorwow>();
        at_is_stream_and_skip::<Mrg32k3aCurand>();
        at_is_stream_and_skip::<Philox4x32x10>();
    }

    #[test]
    fn inline_starts_are_a_step_function() {
        let mut s = [u64::MAX; 2 * INLINE_STARTS];
        s[0] = 0;
        s[INLINE_STARTS] = 10;
        assert_eq!((inline_start(&s, 0), inline_start(&s, u64::MAX - 1)), (10, 10));
        (s[1], s[INLINE_STARTS + 1]) = (5, 7);
        (s[2], s[INLINE_STARTS + 2]) = (9, 3);
        let got: [u64; 11] = core::array::from_fn(|l| inline_start(&s, l as u64));
        assert_eq!(got, [10, 10, 10, 10, 10, 7, 7, 7, 7, 3, 3]);
    }
}
