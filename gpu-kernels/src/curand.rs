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

use crate::convert::{u32_pair_to_unit_f64, u32_to_unit_open_closed};
use crate::rng::mrg32k3a_curand::Mrg32k3aCurand;
use crate::rng::{Generator, Philox4x32x10, Skip, Xorwow};

/// cuRAND's `MRG32K3A_NORM` of the CUDA 13.0 headers, `fl(1 / m1)`: from the combined value `z`
/// in `[1, m1]` to `(0, 1]` (used for MRG32k3a's floats and doubles).
pub const MRG32K3A_NORM: f64 = 1.0 / 4_294_967_087.0;

/// A generator of cuRAND's host API, with cuRAND's conversions from its outputs to values.
pub trait CurandGenerator: Generator + Skip {
    /// Words one `f64` takes (two for XORWOW and Philox, one step for MRG32k3a).
    const F64_WORDS: u64 = 2;

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

impl CurandGenerator for Xorwow {}
impl CurandGenerator for Philox4x32x10 {}

impl CurandGenerator for Mrg32k3aCurand {
    const F64_WORDS: u64 = 1;

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

/// Lane `lane`'s values for its rounds `from..=to` of `call` (a subset of [`CurandCall::rounds`]),
/// its first round `r0` starting at word `start0` of the lane: `write(m - first, value)` for each
/// value `m` of those rounds inside `first..end`; the values of the rounds' groups outside it
/// are drawn and dropped (they take their words all the same).
#[inline(always)]
pub fn lane_chunk<G: CurandGenerator, V: CurandValue>(
    call: &CurandCall,
    lane: u64,
    r0: u64,
    start0: u64,
    from: u64,
    to: u64,
    mut write: impl FnMut(u64, V),
) {
    let (t, w) = (call.lanes, call.group);
    let k = V::words::<G>();
    let mut g = G::stream(call.seed, lane);
    g.skip(start0 + (from - r0) * w * k);
    let mut r = from;
    while r <= to {
        let base = (r * t + lane) * w;
        let mut j = 0;
        while j < w {
            let m = base + j;
            let v = V::value(&mut g);
            if m >= call.first && m < call.end {
                write(m - call.first, v);
            }
            j += 1;
        }
        r += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
