//! The Asian basket option of GPU Gems 3, ch. 37, Listing 37-8.
//!
//! Two assets `a` and `b` follow correlated geometric Brownian motions, simulated exactly at
//! `n` equally spaced dates `t_i = i T / n` (log-Euler steps are exact for GBM):
//!
//! ```text
//! a_i = a_{i-1} exp(mu_a + sig_aa ra_i)
//! b_i = b_{i-1} exp(mu_b + sig_ab ra_i + sig_bb rb_i)      (ra, rb independent N(0,1))
//! s_i = max(a_i, b_i)
//! payoff = max(mean_i s_i - s_n, 0)
//! ```
//!
//! With risk-neutral drift `r`, volatilities `σa, σb` and correlation `ρ`, and `dt = T/n`:
//! `mu_a = (r - σa²/2) dt`, `sig_aa = σa √dt`, `mu_b = (r - σb²/2) dt`, `sig_ab = ρ σb √dt`,
//! `sig_bb = σb √(1-ρ²) √dt` (the host computes these in `f64`; see `warpmc::pricing`).
//!
//! The payoff is the chapter's: the average of the basket maximum minus its final value, floored
//! at zero (an arithmetic-average, floating-strike put on the maximum of two assets).
//!
//! Besides the payoff, each path also returns the *unfloored* value `mean_i s_i - s_n`. Its
//! expectation has a closed form (Margrabe's exchange-option formula at each date), which the
//! host uses to validate the whole chain (generator, transform, correlation, drift) on every
//! run, and as a control variate.
//!
//! Prices are simulated in units of the larger spot (`a0`, `b0 <= 1`), so the accumulators'
//! fixed range does not depend on the currency; the host scales back and discounts. The path is
//! `f32` (as in the chapter); the running sum over the dates and the payoff are `f64`.

use crate::MathMode;
use crate::accum::PairMoments;
use crate::normal::{BoxMuller, ConstantNormals, NormalPairs};
use crate::rng::streams::hybrid_taus_stream;

/// Per-step coefficients of one Asian basket job, as the kernels take them.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct AsianBasketSteps {
    /// Initial prices in units of the larger spot.
    pub a0: f32,
    pub b0: f32,
    pub mu_a: f32,
    pub sig_aa: f32,
    pub mu_b: f32,
    pub sig_ab: f32,
    pub sig_bb: f32,
    /// Number of dates `n >= 1`.
    pub steps: u32,
}

/// One path: returns `(payoff, unfloored)` in units of the larger spot, undiscounted.
#[inline(always)]
pub fn path<S: NormalPairs, M: MathMode>(p: &AsianBasketSteps, normals: &mut S) -> (f64, f64) {
    let mut a = p.a0;
    let mut b = p.b0;
    let mut s = 0.0f32;
    let mut sum = 0.0f64;
    let mut t = 0;
    while t < p.steps {
        let (ra, rb) = normals.next_pair();
        a *= M::exp(p.mu_a + ra * p.sig_aa);
        b *= M::exp(p.mu_b + ra * p.sig_ab + rb * p.sig_bb);
        s = a.max(b);
        sum += s as f64;
        t += 1;
    }
    let unfloored = sum / p.steps as f64 - s as f64;
    (unfloored.max(0.0), unfloored)
}

/// Path `k` of the job with seed `seed`: hybrid Tausworthe stream `k` (see
/// [`crate::rng::streams`]) through Box-Muller.
#[inline(always)]
pub fn simulate_path<M: MathMode>(p: &AsianBasketSteps, seed: u64, k: u64) -> (f64, f64) {
    let mut normals = BoxMuller::<_, M>::new(hybrid_taus_stream(seed, k));
    path::<_, M>(p, &mut normals)
}

/// Accumulate paths `first, first + stride, ... < end` into `acc`, path `k` drawing its normals
/// from `normals(k)`.
///
/// The CPU executor calls this on contiguous chunks (`stride = 1`), a GPU thread on a
/// grid-stride sequence; the exact accumulator makes the totals identical.
#[inline(always)]
pub fn accumulate<S: NormalPairs, M: MathMode>(
    p: &AsianBasketSteps,
    first: u64,
    end: u64,
    stride: u64,
    normals: impl Fn(u64) -> S,
    acc: &mut PairMoments,
) {
    let mut k = first;
    while k < end {
        let (payoff, unfloored) = path::<_, M>(p, &mut normals(k));
        acc.push(payoff, unfloored);
        k += stride;
    }
}

/// [`accumulate`] with each path's own generator stream (see [`simulate_path`]).
#[inline(always)]
pub fn accumulate_paths<M: MathMode>(
    p: &AsianBasketSteps,
    seed: u64,
    first: u64,
    end: u64,
    stride: u64,
    acc: &mut PairMoments,
) {
    let normals = |k| BoxMuller::<_, M>::new(hybrid_taus_stream(seed, k));
    accumulate::<_, M>(p, first, end, stride, normals, acc);
}

/// [`accumulate`] with [`ConstantNormals`] instead of a generator: the "constant RNG" baseline.
#[inline(always)]
pub fn accumulate_constant_paths<M: MathMode>(
    p: &AsianBasketSteps,
    x0: f32,
    dx: f32,
    first: u64,
    end: u64,
    stride: u64,
    acc: &mut PairMoments,
) {
    accumulate::<_, M>(p, first, end, stride, |_| ConstantNormals { x: x0, dx }, acc);
}
