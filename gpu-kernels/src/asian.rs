//! The Asian basket option of GPU Gems 3, ch. 37, Listing 37-8.
//!
//! Two assets `a` and `b` follow correlated geometric Brownian motions, simulated exactly at
//! `n` equally spaced dates `t_i = i T / n` (log-Euler steps are exact for GBM):
//!
//! ```text
//! ln a_i = ln a_{i-1} + mu_a + sig_aa ra_i
//! ln b_i = ln b_{i-1} + mu_b + sig_ab ra_i + sig_bb rb_i      (ra, rb independent N(0,1))
//! s_i = max(a_i, b_i) = exp(max(ln a_i, ln b_i))
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
//! fixed range does not depend on the currency; the host scales back and discounts.
//!
//! **Precision.** The path keeps each asset's *log*-price, `ln a_i = ln a0 + i mu_a + sum sig z`,
//! in single precision with Kahan's compensated summation ([`LogPrice`]), and exponentiates it
//! at every date. The chapter's form, `a *= exp(mu + sig z)` in `f32`, compounds one rounding per
//! step, and at small volatilities `exp(x)` of an `x` of a few ulps of 1 is quantised on the
//! uneven `f32` grid around 1.0 (steps of 2^-23 above, 2^-24 below): a bias, not noise. With
//! vols 1e-4 it made prices 9% too high at 1000 steps and 59 times too high at 10^6 steps.
//! In the compensated sum the rounding error of the log-price stays within about one `f32` ulp
//! at any number of steps (the drift, often far below an ulp of the diffusion, is added as its
//! own term so the compensation keeps it), and each date's price is one `exp` of it: an error
//! that does not accumulate and averages out over paths. `tests/tests/pricing.rs` checks prices
//! against an `f64` re-implementation of the same paths at vols 1e-4 with 1000 steps and vols
//! 0.01 with 10^5 steps. The running sum over the dates and the payoff are `f64`.

use core::marker::PhantomData;

use crate::MathMode;
use crate::accum::PairMoments;
use crate::dist::{Inversion, InversionNaive, NormalTransform, Polar, Ziggurat, transform};
use crate::inverse_normal::Quantile;
use crate::normal::{BoxMuller, ConstantNormals, NormalPairs};
use crate::real::Single;
use crate::rng::{Generator, Uniform32};
use crate::ziggurat::Zig;

/// Per-step coefficients of one Asian basket job, as the kernels take them.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct AsianBasketSteps {
    /// `ln a0` and `ln b0` (initial prices in units of the larger spot, so `<= 0`), each as an
    /// unevaluated sum of two `f32` (`hi + lo`, about 48 significant bits): see [`LogPrice::new`].
    pub ln_a0: [f32; 2],
    pub ln_b0: [f32; 2],
    pub mu_a: f32,
    pub sig_aa: f32,
    pub mu_b: f32,
    pub sig_ab: f32,
    pub sig_bb: f32,
    /// Number of dates `n >= 1`.
    pub steps: u32,
    /// The normal transform feeding the paths, a code of [`crate::dist::transform`]:
    /// Box-Muller (the chapter's), inversion, naive inversion, polar or Ziggurat (see
    /// [`path_with`]). The `asian_basket_*` kernels are Box-Muller's; `asian_basket_any_*`
    /// take every code.
    pub normals: u32,
}

/// Split an `f64` into `hi + lo`, both `f32`: the form of [`AsianBasketSteps::ln_a0`].
#[inline(always)]
pub fn split_f64(x: f64) -> [f32; 2] {
    let hi = x as f32;
    [hi, (x - hi as f64) as f32]
}

/// A log-price kept as a Kahan compensated sum in `f32`: `value - comp` is the exact sum of
/// everything added, to within a few units of 2^-48 of its magnitude, however many terms.
///
/// The compensation relies on every operation being rounded as written: rustc does not
/// reassociate floating-point arithmetic, and its PTX uses `add.rn`/`sub.rn`, which ptxas never
/// fuses or reorders; the CPU and GPU builds give the same bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogPrice {
    /// The sum rounded to `f32`: what the path exponentiates.
    pub value: f32,
    /// Minus the low-order part that `value` lost.
    comp: f32,
}

impl LogPrice {
    /// Start at `hi + lo` (see [`split_f64`]).
    #[inline(always)]
    pub fn new(start: [f32; 2]) -> Self {
        Self { value: start[0], comp: -start[1] }
    }

    /// Add `x` (Kahan's step: four additions).
    #[inline(always)]
    pub fn add(&mut self, x: f32) {
        let y = x - self.comp;
        let t = self.value + y;
        self.comp = (t - self.value) - y;
        self.value = t;
    }
}

/// One path: returns `(payoff, unfloored)` in units of the larger spot, undiscounted.
#[inline(always)]
pub fn path<S: NormalPairs, M: MathMode>(p: &AsianBasketSteps, normals: &mut S) -> (f64, f64) {
    let mut la = LogPrice::new(p.ln_a0);
    let mut lb = LogPrice::new(p.ln_b0);
    let mut s = 0.0f32;
    let mut sum = 0.0f64;
    let mut t = 0;
    while t < p.steps {
        let (ra, rb) = normals.next_pair();
        // The drift separately: at small volatilities it is below an ulp of the diffusion
        // term and `mu + sig z` would drop it.
        la.add(p.mu_a);
        la.add(ra * p.sig_aa);
        lb.add(p.mu_b);
        lb.add(ra * p.sig_ab + rb * p.sig_bb);
        // One exponential per date: the maximum of the prices is the price of the larger log.
        s = M::exp(la.value.max(lb.value));
        sum += s as f64;
        t += 1;
    }
    let unfloored = sum / p.steps as f64 - s as f64;
    (unfloored.max(0.0), unfloored)
}

/// Path `k` of the job with seed `seed`: stream `k` of generator `G` through Box-Muller.
#[inline(always)]
pub fn simulate_path<G: Generator, M: MathMode>(p: &AsianBasketSteps, seed: u64, k: u64) -> (f64, f64) {
    let mut normals = BoxMuller::<_, M>::new(G::stream(seed, k));
    path::<_, M>(p, &mut normals)
}

/// Pairs of `f32` normals from the distributions' transform `T` (`crate::dist`) over `rng`: the
/// same values, in the same order, as a normal fill of that transform from the same stream.
#[derive(Clone, Copy, Debug)]
pub struct TransformPairs<G, T, M> {
    pub rng: G,
    transform: PhantomData<(T, M)>,
}

impl<G, T, M> TransformPairs<G, T, M> {
    #[inline(always)]
    pub fn new(rng: G) -> Self {
        Self { rng, transform: PhantomData }
    }
}

impl<G: Uniform32, M: MathMode + Send + Sync, T: NormalTransform<Single<M>>> NormalPairs for TransformPairs<G, T, M> {
    #[inline(always)]
    fn next_pair(&mut self) -> (f32, f32) {
        T::pair(&mut self.rng, &mut 0u32)
    }
}

/// Whether transform code `normals` draws the same number of words for every pair (what a
/// collective generator's lanes need; the rejection methods do not).
#[inline(always)]
pub fn fixed_words(normals: u32) -> bool {
    !matches!(normals, transform::POLAR | transform::ZIGGURAT)
}

/// One path from stream `rng` through the transform `p.normals` names (an unknown code is
/// Box-Muller's; the host sends only the five of [`AsianBasketSteps::normals`]). The branch is
/// the same for every path of a job, so a warp never diverges on it.
#[inline(always)]
pub fn path_with<G: Uniform32, M: MathMode + Send + Sync>(p: &AsianBasketSteps, rng: G) -> (f64, f64)
where
    Single<M>: Quantile + Zig,
{
    match p.normals {
        transform::INVERSION => path::<_, M>(p, &mut TransformPairs::<_, Inversion, M>::new(rng)),
        transform::INVERSION_NAIVE => path::<_, M>(p, &mut TransformPairs::<_, InversionNaive, M>::new(rng)),
        transform::POLAR => path::<_, M>(p, &mut TransformPairs::<_, Polar, M>::new(rng)),
        transform::ZIGGURAT => path::<_, M>(p, &mut TransformPairs::<_, Ziggurat, M>::new(rng)),
        _ => path::<_, M>(p, &mut BoxMuller::<_, M>::new(rng)),
    }
}

/// [`accumulate_paths`] with the transform `p.normals` names ([`path_with`]).
#[inline(always)]
pub fn accumulate_paths_with<G: Generator, M: MathMode + Send + Sync>(
    p: &AsianBasketSteps,
    seed: u64,
    first: u64,
    end: u64,
    stride: u64,
    acc: &mut PairMoments,
) where
    Single<M>: Quantile + Zig,
{
    let mut k = first;
    while k < end {
        let (payoff, unfloored) = path_with::<_, M>(p, G::stream(seed, k));
        acc.push(payoff, unfloored);
        k += stride;
    }
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

/// [`accumulate`] with each path's own stream of generator `G` (see [`simulate_path`]).
#[inline(always)]
pub fn accumulate_paths<G: Generator, M: MathMode>(
    p: &AsianBasketSteps,
    seed: u64,
    first: u64,
    end: u64,
    stride: u64,
    acc: &mut PairMoments,
) {
    let normals = |k| BoxMuller::<_, M>::new(G::stream(seed, k));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Terms far below an ulp of the running sum are kept, and the sum starts from `hi + lo`.
    #[test]
    fn compensated_log_price_keeps_tiny_terms() {
        let start = -core::f64::consts::LN_2; // ln 0.5
        let mut l = LogPrice::new(split_f64(start));
        let mut exact = start;
        for i in 0..1_000_000u32 {
            // Alternating diffusion-sized and drift-sized terms, as the path adds them.
            let x = if i % 2 == 0 { 1e-9f32 } else { (((i >> 1) % 7) as f32 - 3.0) * 1e-7 };
            l.add(x);
            exact += x as f64;
        }
        let naive = (0..1_000_000u32)
            .fold(start as f32, |s, i| s + if i % 2 == 0 { 1e-9f32 } else { (((i >> 1) % 7) as f32 - 3.0) * 1e-7 });
        let ulp = f32::EPSILON as f64 * 0.5; // of values in [0.5, 1)
        assert!((l.value as f64 - exact).abs() <= ulp, "compensated {} vs {exact}", l.value);
        // Without compensation the 5e5 drift terms of 1e-9 (each below half an ulp) are lost.
        assert!((naive as f64 - exact).abs() > 1000.0 * ulp, "naive {naive} vs {exact}");
    }

    #[test]
    fn split_is_exact_to_48_bits() {
        for x in [-core::f64::consts::LN_2, -27.631_021_115_928_547, 0.0, -1e-10] {
            let [hi, lo] = split_f64(x);
            assert!((hi as f64 + lo as f64 - x).abs() <= x.abs() * 2f64.powi(-47), "{x}");
        }
    }
}
