//! Quasi-Monte Carlo normals for the path functions: one randomised Sobol' point per path,
//! each coordinate inverted to a standard normal, arranged in time by a Brownian bridge.
//!
//! **Why a bridge.** A Sobol' point's leading coordinates are far more evenly spread than its
//! late ones, and a path's price depends mostly on the few coarse features of its Brownian
//! motion (its end point, then its midpoint, ...). The Brownian bridge construction (Moskowitz
//! and Caflisch 1996; Glasserman, *Monte Carlo Methods in Financial Engineering*, 3.1 and 5.5)
//! spends coordinate 0 on `W(T)`, coordinate 1 on the midpoint given both ends, and so on down
//! to the finest level, so the effective dimension of the integrand is small and the
//! low-discrepancy structure is used where it matters. The plain construction (coordinate `i`
//! for the increment of step `i`, [`construction::INCREMENTS`]) is kept for comparison.
//!
//! **The bridge in time order, with constant memory.** Time is counted in steps (`W(i)` has
//! variance `i`), so the increments `W(i) - W(i-1)` the paths consume are standard normals. The
//! dates `1..n` form a binary tree of intervals: the root interval `(0, n)`, whose end `W(n) =
//! √n z_0` comes first; an interval `(l, r)` with `r - l >= 2` is split at `m = l + ⌊(r - l)/2⌋`,
//! with `W(m) = W(l) + (m - l)/(r - l) (W(r) - W(l)) + √((m - l)(r - m)/(r - l)) z_h`, the
//! conditional law of a Brownian motion pinned at both ends. Interval `(0, n)` has heap index
//! `h = 1`, the children of `h` are `2h` (left) and `2h + 1` (right), and node `h` takes the
//! point's coordinate `h`: the levels of the tree take coordinates in breadth-first order
//! (`n` a power of two uses coordinates `0..n` exactly; otherwise some below
//! `n.next_power_of_two()` go unused). [`BridgeNormals`] walks the tree in order with a stack
//! of at most `⌈log2 n⌉ + 1` pending right intervals, so it emits `W(1) - W(0), W(2) - W(1),
//! ...` one at a time, with no array of the path: the same one-step-at-a-time interface as a
//! generator's normals, so every instrument (and its Greeks' legs, which restart it) takes QMC
//! normals without change. The bridge's arithmetic is `f64` with correctly rounded division
//! and square root, so the CPU and the GPU agree bit for bit.
//!
//! **Points.** Path `k` of a replicate is Sobol' point `k` in Gray-code order
//! ([`crate::sobol`]), coordinate `d` from the direction numbers of dimension `d + 1`,
//! randomised by Owen's scrambling (hashed) or a digital shift with the replicate's key for that
//! dimension ([`crate::sobol::randomisation`]), then inverted by the reflected inversion of
//! [`crate::inverse_normal`] (a word `x` is the probability `(x + 1/2) 2^-32`, never 0 or 1).
//! Independent replicates give an unbiased estimate with an honest standard error (the host's
//! `warpmc::qmc`).

use core::marker::PhantomData;

use crate::MathMode;
use crate::accum::PairMoments;
use crate::instrument::{Legs, sample_legs};
use crate::inverse_normal::{Quantile, reflect_u32};
use crate::normal::NormalPairs;
use crate::platform::sqrt_f64;
use crate::real::Single;
use crate::sobol::{BITS, digital_shift, owen_scramble};

/// Randomisations ([`QmcParams::scramble`]).
pub mod scramble {
    /// Owen's nested scrambling, hashed ([`crate::sobol::owen_scramble`]).
    pub const OWEN: u32 = 0;
    /// A random digital shift ([`crate::sobol::digital_shift`]).
    pub const SHIFT: u32 = 1;
}

/// Path constructions ([`QmcParams::construction`]).
pub mod construction {
    /// The Brownian bridge (see the module docs).
    pub const BRIDGE: u32 = 0;
    /// Coordinate `i` is the increment of step `i + 1`.
    pub const INCREMENTS: u32 = 1;
}

/// The deepest stack [`BridgeNormals`] keeps: enough for `n <= 2^30` dates (the host allows at
/// most as many dates as the table has dimensions, 21201). A power of two, so that indices
/// masked by `STACK - 1` are in range by construction (no bounds checks in the GPU build).
pub const STACK: usize = 32;

const _: () = assert!(STACK.is_power_of_two());

/// The largest number of dates the bridge can walk.
pub const MAX_STEPS: u32 = 1 << (STACK - 2);

/// How a replicate's points are built, as the kernels take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct QmcParams {
    /// Dimensions held by the direction and key tables.
    pub dims: u32,
    /// A code of [`scramble`].
    pub scramble: u32,
    /// A code of [`construction`].
    pub construction: u32,
    /// Padding (zero).
    pub pad: u32,
}

/// Coordinates a path of `steps` dates needs under `construction`: `steps` for the
/// increments, the next power of two for the bridge (see the module docs).
pub const fn dimensions_needed(steps: u32, construction: u32) -> u32 {
    if construction == construction::INCREMENTS { steps } else { steps.next_power_of_two() }
}

/// One replicate's randomised Sobol' points: `directions` holds [`BITS`] words per dimension,
/// `keys` one word per dimension (the Owen seed or the shift).
#[derive(Clone, Copy, Debug)]
pub struct SobolSet<'a> {
    pub directions: &'a [u32],
    pub keys: &'a [u32],
    pub params: QmcParams,
}

impl SobolSet<'_> {
    /// Coordinate `dim` of the point whose Gray code is `gray`, randomised. A dimension beyond
    /// the tables (which the host never asks for) gives word 0.
    #[inline(always)]
    pub fn word(&self, gray: u32, dim: u32) -> u32 {
        let base = dim as usize * BITS;
        let v: &[u32; BITS] = match self.directions.get(base..base + BITS).and_then(|s| s.try_into().ok()) {
            Some(v) => v,
            None => return 0,
        };
        let key = self.keys.get(dim as usize).copied().unwrap_or(0);
        let mut g = gray;
        let mut x = 0;
        while g != 0 {
            // `& 31`: `g != 0`, so this is the index itself, and no bounds check is emitted.
            x ^= v[(g.trailing_zeros() & 31) as usize];
            g &= g - 1;
        }
        if self.params.scramble == scramble::SHIFT { digital_shift(x, key) } else { owen_scramble(x, key) }
    }
}

/// The Gray code of point `index`: the set of direction numbers XORed into it.
#[inline(always)]
pub fn gray(index: u32) -> u32 {
    index ^ (index >> 1)
}

/// The standardised increments `W(1) - W(0), W(2) - W(1), ...` of one path from one point, by
/// the bridge or in time order (see the module docs); after the last date, zeros.
#[derive(Clone, Copy, Debug)]
pub struct BridgeNormals<'a, M> {
    set: SobolSet<'a>,
    gray: u32,
    steps: u32,
    /// Dates emitted so far, and `W` at the last of them.
    at: u32,
    w_at: f64,
    /// Pending intervals `(at, r)`: their right ends, `W` there and heap indices.
    depth: usize,
    right: [u32; STACK],
    w_right: [f64; STACK],
    heap: [u32; STACK],
    mode: PhantomData<M>,
}

impl<'a, M: MathMode + Send + Sync> BridgeNormals<'a, M>
where
    Single<M>: Quantile<R = f32>,
{
    /// The path of point `index` (Gray code `gray(index)`), `steps` dates.
    #[inline(always)]
    pub fn new(set: SobolSet<'a>, gray: u32, steps: u32) -> Self {
        let mut s = Self {
            set,
            gray,
            steps,
            at: 0,
            w_at: 0.0,
            depth: 0,
            right: [0; STACK],
            w_right: [0.0; STACK],
            heap: [0; STACK],
            mode: PhantomData,
        };
        if set.params.construction != construction::INCREMENTS && steps > 0 && steps <= MAX_STEPS {
            s.right[0] = steps;
            s.w_right[0] = sqrt_f64(steps as f64) * s.normal(0);
            s.heap[0] = 1;
            s.depth = 1;
        }
        s
    }

    /// Coordinate `dim` of the point as a standard normal.
    #[inline(always)]
    fn normal(&self, dim: u32) -> f64 {
        reflect_u32(self.set.word(self.gray, dim)).normal::<Single<M>>() as f64
    }

    /// The next increment (zero after the last date).
    #[inline(always)]
    pub fn next_increment(&mut self) -> f32 {
        if self.at >= self.steps {
            return 0.0;
        }
        if self.set.params.construction == construction::INCREMENTS {
            let z = self.normal(self.at);
            self.at += 1;
            return z as f32;
        }
        loop {
            if self.depth == 0 {
                return 0.0; // only for steps beyond MAX_STEPS, which the host refuses
            }
            let top = (self.depth - 1) & (STACK - 1);
            let (l, r, w_l, w_r, h) = (self.at, self.right[top], self.w_at, self.w_right[top], self.heap[top]);
            if r - l == 1 {
                self.depth = top;
                self.at = r;
                self.w_at = w_r;
                return (w_r - w_l) as f32;
            }
            let m = l + (r - l) / 2;
            let (a, b, span) = ((m - l) as f64, (r - m) as f64, (r - l) as f64);
            let w_m = w_l + a / span * (w_r - w_l) + sqrt_f64(a * b / span) * self.normal(h);
            // The right half waits on the stack; the left half is walked first.
            self.heap[top] = 2 * h + 1;
            if self.depth < STACK {
                let d = self.depth & (STACK - 1);
                self.right[d] = m;
                self.w_right[d] = w_m;
                self.heap[d] = 2 * h;
                self.depth += 1;
            }
        }
    }
}

impl<M: MathMode + Send + Sync> NormalPairs for BridgeNormals<'_, M>
where
    Single<M>: Quantile<R = f32>,
{
    #[inline(always)]
    fn next_pair(&mut self) -> (f32, f32) {
        let a = self.next_increment();
        (a, self.next_increment())
    }
}

/// Accumulate samples `first, first + stride, ... < end` of one replicate, sample `k` from
/// point `k` of `set` (`k < 2^32`, which the host guarantees). Every leg has the dates of leg 0.
#[inline(always)]
pub fn accumulate<M: MathMode + Send + Sync>(
    legs: &Legs,
    set: SobolSet,
    first: u64,
    end: u64,
    stride: u64,
    acc: &mut PairMoments,
) where
    Single<M>: Quantile<R = f32>,
{
    let steps = legs.legs[0].steps;
    let mut k = first;
    while k < end {
        let g = gray(k as u32);
        let (x, control) = sample_legs::<_, M>(legs, || BridgeNormals::<M>::new(set, g, steps));
        acc.push(x, control);
        k += stride;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Exact;
    use crate::sobol::{VAN_DER_CORPUT, directions};

    /// Direction numbers of the first dimensions (1: van der Corput; then Joe and Kuo's
    /// first rows).
    fn table(dims: usize) -> Vec<u32> {
        const ROWS: [(u32, u32, &[u32]); 7] = [
            (1, 0, &[1]),
            (2, 1, &[1, 3]),
            (3, 1, &[1, 3, 1]),
            (3, 2, &[1, 1, 1]),
            (4, 1, &[1, 1, 3, 3]),
            (4, 4, &[1, 3, 5, 13]),
            (5, 2, &[1, 1, 5, 5, 17]),
        ];
        let mut out = VAN_DER_CORPUT.to_vec();
        for &(s, a, m) in ROWS.iter().take(dims - 1) {
            let mut v = [0; BITS];
            directions(s, a, m, &mut v).unwrap();
            out.extend_from_slice(&v);
        }
        out
    }

    fn set<'a>(dirs: &'a [u32], keys: &'a [u32], construction: u32) -> SobolSet<'a> {
        SobolSet {
            directions: dirs,
            keys,
            params: QmcParams { dims: keys.len() as u32, scramble: scramble::SHIFT, construction, pad: 0 },
        }
    }

    fn normal(word: u32) -> f64 {
        reflect_u32(word).normal::<Single<Exact>>() as f64
    }

    #[test]
    fn bridge_reproduces_the_midpoint_construction() {
        // n = 8: W(8) from coordinate 0, W(4) from 1, W(2) and W(6) from 2 and 3, the odd
        // dates from 4..8 (breadth-first), each by the pinned-Brownian-motion formula.
        let dirs = table(8);
        let keys =
            [0x1234_5678, 0x9abc_def0, 0x0f0f_0f0f, 0x3333_cccc, 0x5555_aaaa, 0x7777_1111, 0x2468_ace0, 0x1357_9bdf];
        let s = set(&dirs, &keys, construction::BRIDGE);
        let g = gray(37);
        let z: Vec<f64> = (0..8).map(|d| normal(s.word(g, d))).collect();
        let mut w = [0.0f64; 9];
        w[8] = sqrt_f64(8.0) * z[0];
        let mid = |w: &[f64; 9], l: usize, r: usize, zh: f64| {
            let m = l + (r - l) / 2;
            let (a, b, span) = ((m - l) as f64, (r - m) as f64, (r - l) as f64);
            w[l] + a / span * (w[r] - w[l]) + sqrt_f64(a * b / span) * zh
        };
        w[4] = mid(&w, 0, 8, z[1]);
        w[2] = mid(&w, 0, 4, z[2]);
        w[6] = mid(&w, 4, 8, z[3]);
        w[1] = mid(&w, 0, 2, z[4]);
        w[3] = mid(&w, 2, 4, z[5]);
        w[5] = mid(&w, 4, 6, z[6]);
        w[7] = mid(&w, 6, 8, z[7]);
        let mut b = BridgeNormals::<Exact>::new(s, g, 8);
        for i in 1..=8 {
            assert_eq!(b.next_increment(), (w[i] - w[i - 1]) as f32, "date {i}");
        }
        assert_eq!(b.next_increment(), 0.0);
    }

    #[test]
    fn bridge_increments_sum_to_the_end_point_for_any_length() {
        // The increments telescope to W(n) = √n z_0, for lengths that are not powers of two
        // too, and each uses only coordinates below n.next_power_of_two().
        let dirs = table(8);
        let keys = [7, 11, 13, 17, 19, 23, 29, 31];
        let s = set(&dirs, &keys, construction::BRIDGE);
        for n in 1..=8u32 {
            let g = gray(5);
            let mut b = BridgeNormals::<Exact>::new(s, g, n);
            let total: f64 = (0..n).map(|_| b.next_increment() as f64).sum();
            let want = sqrt_f64(n as f64) * normal(s.word(g, 0));
            assert!((total - want).abs() < 1e-5, "n = {n}: {total} vs {want}");
            assert!(dimensions_needed(n, construction::BRIDGE) as usize <= keys.len());
        }
    }

    #[test]
    fn increments_construction_reads_coordinates_in_order() {
        let dirs = table(4);
        let keys = [1, 2, 3, 4];
        let s = set(&dirs, &keys, construction::INCREMENTS);
        let g = gray(1000);
        let mut b = BridgeNormals::<Exact>::new(s, g, 4);
        for d in 0..4 {
            assert_eq!(b.next_increment() as f64, normal(s.word(g, d)));
        }
        assert_eq!(b.next_increment(), 0.0);
    }

    #[test]
    fn bridge_paths_have_brownian_covariances() {
        // Over the 2^12 points of a scrambled net, W(i) from the bridge has the covariance
        // min(i, j) (a check of the weights; QMC makes the sample moments very accurate).
        let dirs = table(8);
        let n = 8usize;
        let points = 1u32 << 12;
        let mut cov = [[0.0f64; 8]; 8];
        for rep in 0..4u32 {
            let keys: Vec<u32> = (0..8).map(|d| crate::sobol::randomisation(3, rep, d).shift).collect();
            let s = set(&dirs, &keys, construction::BRIDGE);
            for k in 0..points {
                let mut b = BridgeNormals::<Exact>::new(s, gray(k), n as u32);
                let mut w = [0.0f64; 8];
                let mut acc = 0.0;
                for x in w.iter_mut() {
                    acc += b.next_increment() as f64;
                    *x = acc;
                }
                for i in 0..n {
                    for j in 0..n {
                        cov[i][j] += w[i] * w[j];
                    }
                }
            }
        }
        let total = 4.0 * points as f64;
        for i in 0..n {
            for j in 0..n {
                let want = (i.min(j) + 1) as f64;
                assert!((cov[i][j] / total - want).abs() < 0.03 * want, "cov({i},{j}) = {}", cov[i][j] / total);
            }
        }
    }

    #[test]
    fn words_are_the_points_randomised() {
        let dirs = table(2);
        let keys = [0xdead_beef, 0x0bad_f00d];
        let mut s = set(&dirs, &keys, construction::BRIDGE);
        let v: &[u32; BITS] = dirs[32..64].try_into().unwrap();
        assert_eq!(s.word(gray(9), 1), crate::sobol::point(9, v) ^ 0x0bad_f00d);
        s.params.scramble = scramble::OWEN;
        assert_eq!(s.word(gray(9), 1), owen_scramble(crate::sobol::point(9, v), 0x0bad_f00d));
        // Beyond the tables: word 0, never a panic.
        assert_eq!(s.word(gray(9), 2), 0);
    }
}
