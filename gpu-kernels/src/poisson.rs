//! Poisson variates of mean `λ` as `u32`, as cuRAND's `curand_poisson` offers them: inversion
//! by sequential search for `λ < 10`, Hörmann's PTRS for `λ >= 10`. All arithmetic is `f64`
//! with [`crate::math64`]'s portable functions and IEEE operations in a written-out order (no
//! fused multiply-add), so exact mode gives the same bits on the CPU and the GPU.
//!
//! # Small means, `0 < λ < 10`: inversion
//! One uniform `u` in `(0, 1]` with 53 bits (2 words, [`u32_pair_to_unit_f64`]), then the
//! smallest `k` with `u <= F(k)`, summing `p_0 = e^-λ`, `p_k = p_{k-1} λ / k` from `k = 0` up.
//! Chosen over the multiplication method (the product of uniforms against `e^-λ`) because it
//! takes a fixed 2 words per variate, whatever the value (a stream's position after `n`
//! variates is known, and every lane of a warp draws alike), and its 53-bit `u` resolves the
//! upper tail to `2^-53`; the loop length is the same, `k + 1` comparisons (mean `λ + 1 <= 11`),
//! each a multiply, a divide and an add. Each comparison adds 1 to `iters`. The partial sums
//! are exact to about `k 2^-53` absolutely; should `F` stop growing in floating point before
//! reaching `u` (`u` within about `1e-15` of 1), the search ends at that `k`.
//!
//! # `λ = 0`
//! Returns 0, draws nothing and adds nothing to `iters`.
//!
//! # Large means, `10 <= λ <= LAMBDA_MAX`: PTRS
//! W. Hörmann, "The transformed rejection method for generating Poisson random variables",
//! Insurance: Mathematics and Economics 12 (1993) 39-45. With `b = 0.931 + 2.53 sqrt(λ)`,
//! `a = -0.059 + 0.02483 b`, `1/α = 1.1239 + 1.1328/(b - 3.4)` and `v_r = 0.9277 -
//! 3.6224/(b - 2)`, each attempt draws `u` uniform in `(-1/2, 1/2)` and `v` uniform in `(0, 1)`,
//! sets `us = 1/2 - |u|`, `k = floor((2a/us + b) u + λ + 0.43)`, and accepts `k` at once when
//! `us >= 0.07` and `v <= v_r`; it rejects when `k < 0` or `us < 0.013` and `v > us`; otherwise
//! it accepts when `ln(v (1/α) / (a/us² + b)) <= k ln λ - λ - ln k!`. Each attempt adds 1 to
//! `iters`; about 1.1 attempts are needed per variate over the whole range.
//!
//! Draw rule per attempt, in this order: `u` from 2 words (`Double`'s signed uniform halved:
//! `(2j + 1) 2^-54` for a signed 53-bit `j`, exact, never 0 or ±1/2), then `v` from 1 word
//! (`(z + 1/2) 2^-32`, exact, never 0 or 1): 3 words. `u` needs 53 bits because it is spread
//! over the `2.8 sqrt(λ)` hat units around the mode, so a 32-bit `u` would give each `k` a
//! relative discretisation error of `2.8 sqrt(λ) 2^-32` (2.9e-5 at `λ = 2^31`); `v` is only
//! compared with probabilities, where `2^-32` is negligible.
//!
//! `ln k!` is a table of exact constants for `k < 10` (computed at compile time) and Stirling's
//! series ([`crate::gamma::stirling_series`], error below 1e-15) above: [`ln_factorial`]. The
//! right-hand side is evaluated as `k ln(λ/n) + (n - λ) - ln(n)/2 - ln(2π)/2 - S(n)` with
//! `n = k + 1` ([`Poisson::ln_pmf`]), which avoids cancelling `k ln λ` against `ln k!`.

use crate::tally::Tally;
use crate::convert::u32_pair_to_unit_f64;
use crate::gamma::{HALF_LN_2PI, stirling_series};
use crate::math64::{exp_f64, ln_f64};
use crate::platform::sqrt_f64;
use crate::real::{Arith, Double, Real};
use crate::rng::Uniform32;

/// The largest mean the host accepts: `2^31`.
///
/// - No overflow: PTRS rejects every candidate with `k >= 2^32` (the hat has an infinite
///   tail), so the result always fits a `u32`; for `λ <= 2^31` the true probability of
///   `X >= 2^32 = 2λ` is below `exp(-λ (2 ln 2 - 1)) = exp(-8.3e8)` (Chernoff), so that
///   rejection changes nothing measurable.
/// - Accuracy: the log-acceptance test is computed to about `k 2^-52` absolutely (`5e-7` at
///   `2^31`: the acceptance probabilities, hence the pmf, relatively to 5e-7); `t` before the
///   floor has a spacing of `2^-22` (a boundary between `k` and `k + 1` moves by at most
///   `2.4e-7` of a unit); the 53-bit `u` gives each `k` a relative discretisation error of
///   `1.3e-11`. At `λ = 2^40` these would be 3e-4, 1.2e-4 and 4e-10: the method in `f64`
///   degrades with `λ`, and a `u32` result ends the useful range well before that.
pub const LAMBDA_MAX: f64 = 2_147_483_648.0;

/// Means below this use inversion, at and above it PTRS.
pub const SMALL_MEAN_LIMIT: f64 = 10.0;

/// `2^-32` in `f64`.
const TWO_POW_M32: f64 = 1.0 / 4_294_967_296.0;

/// `ln x` for `x >= 1`, for constants: `x` halved (exactly) into `(sqrt(1/2), sqrt(2)]`, then
/// `ln x = e ln 2 + 2 atanh((m - 1)/(m + 1))` by its series (`|s| <= 0.172`, summed to 40 terms,
/// far past convergence). About 1 ulp.
const fn const_ln(x: f64) -> f64 {
    let mut m = x;
    let mut e = 0.0;
    while m > core::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1.0;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut sum = 0.0;
    let mut j = 40;
    while j > 0 {
        j -= 1;
        sum = sum * s2 + 1.0 / (2 * j + 1) as f64;
    }
    e * core::f64::consts::LN_2 + 2.0 * s * sum
}

/// `ln k!` for `k < 10`, from the exact integers `k!`.
const LN_FACTORIAL_TABLE: [f64; 10] = {
    let mut t = [0.0; 10];
    let mut fact = 1.0;
    let mut k = 1;
    while k < 10 {
        fact *= k as f64;
        t[k] = const_ln(fact);
        k += 1;
    }
    t
};

/// `ln k!`: the compile-time table for `k < 10`, Stirling's series
/// `(n - 1/2) ln n - n + ln(2π)/2 + S(n)` with `n = k + 1` above (error below 1e-15 relative to
/// `ln n`, plus [`crate::math64::ln_f64`]'s). Portable (`f64`, [`crate::math64`]).
#[inline(always)]
pub fn ln_factorial(k: u32) -> f64 {
    if k < 10 {
        LN_FACTORIAL_TABLE[(k & 15) as usize % 10]
    } else {
        let n = k as f64 + 1.0;
        (n - 0.5) * ln_f64(n) - n + HALF_LN_2PI + stirling_series(n)
    }
}

/// A Poisson sampler of mean `λ`: its precomputed constants. Build it with [`Poisson::new`];
/// the fields are public so that a GPU launch can pass it as plain data.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Poisson {
    /// The mean `λ`.
    pub lambda: f64,
    /// `ln λ` (0 when `λ = 0`).
    pub ln_lambda: f64,
    /// `e^-λ` for inversion (`λ < 10`), else 0.
    pub exp_neg_lambda: f64,
    /// PTRS's `a = -0.059 + 0.02483 b` (`λ >= 10`, else 0).
    pub a: f64,
    /// PTRS's `b = 0.931 + 2.53 sqrt(λ)`.
    pub b: f64,
    /// PTRS's `1/α = 1.1239 + 1.1328/(b - 3.4)`.
    pub inv_alpha: f64,
    /// PTRS's immediate-acceptance bound `v_r = 0.9277 - 3.6224/(b - 2)`.
    pub v_r: f64,
}

impl Poisson {
    /// The sampler of mean `lambda`. The host validates `0 <= lambda <= LAMBDA_MAX` (see
    /// [`LAMBDA_MAX`] for why); this function does not check.
    pub fn new(lambda: f64) -> Poisson {
        let mut p = Poisson { lambda, ln_lambda: 0.0, exp_neg_lambda: 0.0, a: 0.0, b: 0.0, inv_alpha: 0.0, v_r: 0.0 };
        if lambda > 0.0 {
            p.ln_lambda = ln_f64(lambda);
        }
        if lambda < SMALL_MEAN_LIMIT {
            p.exp_neg_lambda = exp_f64(-lambda);
        } else {
            p.b = 0.931 + 2.53 * sqrt_f64(lambda);
            p.a = -0.059 + 0.02483 * p.b;
            p.inv_alpha = 1.1239 + 1.1328 / (p.b - 3.4);
            p.v_r = 0.9277 - 3.6224 / (p.b - 2.0);
        }
        p
    }

    /// A Poisson variate: inversion for `0 < λ < 10` (2 words, `k + 1` iterations), PTRS for
    /// `10 <= λ <= LAMBDA_MAX` (3 words and 1 iteration per attempt), 0 with no draw and no
    /// iteration for `λ = 0` (see the module docs). Outside the host's range (negative, NaN or
    /// above [`LAMBDA_MAX`]) it returns 0 without drawing, so a kernel can never loop forever.
    #[inline(always)]
    pub fn sample<G: Uniform32>(&self, rng: &mut G, iters: &mut impl Tally) -> u32 {
        self.sample_with_ln_pmf(rng, iters, |k| self.ln_pmf(k))
    }

    /// [`Poisson::sample`] with PTRS's final test against `ln_pmf(k)` instead of
    /// [`Poisson::ln_pmf`] (inversion does not use it). `sample` is exactly this with
    /// `|k| self.ln_pmf(k)`; the tests pass a deliberately wrong `ln k!` through it to show
    /// that their checks see the difference.
    #[inline(always)]
    pub fn sample_with_ln_pmf<G: Uniform32>(&self, rng: &mut G, iters: &mut impl Tally, ln_pmf: impl Fn(u32) -> f64) -> u32 {
        if self.lambda >= SMALL_MEAN_LIMIT && self.lambda <= LAMBDA_MAX {
            self.ptrs(rng, iters, ln_pmf)
        } else if self.lambda > 0.0 && self.lambda < SMALL_MEAN_LIMIT {
            self.inversion(rng, iters)
        } else {
            0
        }
    }

    /// `ln P(X = k) = k ln λ - λ - ln k!` for `λ > 0`, in `f64`. For `k >= 10` it is evaluated
    /// as `k ln(λ/n) + (n - λ) - ln(n)/2 - ln(2π)/2 - S(n)` with `n = k + 1` (Stirling's series
    /// `S`, [`crate::gamma::stirling_series`]), so that `k ln λ` and `ln k!`, each about
    /// `λ ln λ`, never cancel: the absolute error is about `k 2^-53` from rounding `λ/n`, not
    /// `λ ln λ 2^-53`. For `k < 10` the table of [`ln_factorial`].
    #[inline(always)]
    pub fn ln_pmf(&self, k: u32) -> f64 {
        if k < 10 {
            k as f64 * self.ln_lambda - self.lambda - ln_factorial(k)
        } else {
            let kf = k as f64;
            let n = kf + 1.0;
            kf * ln_f64(self.lambda / n) + (n - self.lambda) - 0.5 * ln_f64(n) - HALF_LN_2PI - stirling_series(n)
        }
    }

    /// Inversion by sequential search (module docs).
    #[inline(always)]
    fn inversion<G: Uniform32>(&self, rng: &mut G, iters: &mut impl Tally) -> u32 {
        let z0 = rng.next_u32();
        let z1 = rng.next_u32();
        let u = u32_pair_to_unit_f64(z0, z1);
        let mut k: u32 = 0;
        let mut p = self.exp_neg_lambda;
        let mut f = p;
        loop {
            iters.tick();
            if !(u > f) {
                return k;
            }
            // p underflows to 0 by k of a few hundred at the latest, so the search ends.
            k += 1;
            p = p * self.lambda / k as f64;
            let next = f + p;
            if !(next > f) {
                return k;
            }
            f = next;
        }
    }

    /// PTRS (module docs). The order of the tests differs from the paper's in one harmless way:
    /// `k` is range-checked (`0 <= t < 2^32`) before the immediate acceptance; for
    /// `10 <= λ <= LAMBDA_MAX` the immediate-acceptance region (`us >= 0.07`, where
    /// `|2a/us + b| |u| <= 0.86 b`) always has `0 < t < λ + 3 sqrt(λ) + 2`, inside that range
    /// (the lower end is smallest at `λ = 10`: 4.6), so no decision changes.
    #[inline(always)]
    fn ptrs<G: Uniform32>(&self, rng: &mut G, iters: &mut impl Tally, ln_pmf: impl Fn(u32) -> f64) -> u32 {
        loop {
            iters.tick();
            let u = 0.5 * Double::signed_uniform(rng);
            let v = (rng.next_u32() as f64 + 0.5) * TWO_POW_M32;
            let us = 0.5 - Real::abs(u);
            let t = (2.0 * self.a / us + self.b) * u + self.lambda + 0.43;
            if !(0.0..4_294_967_296.0).contains(&t) {
                continue;
            }
            let k = t as u32;
            if us >= 0.07 && v <= self.v_r {
                return k;
            }
            if us < 0.013 && v > us {
                continue;
            }
            if ln_f64(v * self.inv_alpha / (self.a / (us * us) + self.b)) <= ln_pmf(k) {
                return k;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Generator, Philox4x32x10};

    #[test]
    fn ln_factorial_table_and_series() {
        let mut fact: f64 = 1.0;
        for k in 0..10u32 {
            if k > 0 {
                fact *= k as f64;
            }
            let d = (ln_factorial(k) - fact.ln()).abs();
            assert!(d <= 2.0 * f64::EPSILON * fact.ln().max(1.0), "{k}: {} vs {}", ln_factorial(k), fact.ln());
        }
        assert_eq!(ln_factorial(0), 0.0);
        assert_eq!(ln_factorial(1), 0.0);
        // Differences are ln k, across the switch at 10 and far beyond.
        for k in (10..2000u32).chain([10_000, 123_457, 10_000_000, 4_000_000_000]) {
            let d = ln_factorial(k) - ln_factorial(k - 1);
            let tol = 4e-16 * ln_factorial(k) + 1e-15;
            assert!((d - (k as f64).ln()).abs() <= tol, "{k}: {d} vs {}", (k as f64).ln());
        }
        // Direct: ln 20! and ln 170!.
        let ln20: f64 = (1..=20).map(|j| (j as f64).ln()).sum();
        assert!((ln_factorial(20) - ln20).abs() < 1e-13);
        let ln170: f64 = (1..=170).map(|j| (j as f64).ln()).sum();
        assert!((ln_factorial(170) - ln170).abs() < 1e-12);
    }

    #[test]
    fn ln_pmf_matches_the_direct_formula() {
        for lambda in [10.0, 15.5, 100.0, 1e4] {
            let p = Poisson::new(lambda);
            let mut total = 0.0;
            for k in 0..(lambda as u32 * 3 + 60) {
                let direct = k as f64 * lambda.ln() - lambda - ln_factorial(k);
                assert!((p.ln_pmf(k) - direct).abs() < 1e-12 * (1.0 + lambda), "{lambda} {k}");
                total += p.ln_pmf(k).exp();
            }
            assert!((total - 1.0).abs() < 1e-12, "{lambda}: {total}");
        }
    }

    /// Counts the words a generator hands out.
    struct Counting<G>(G, u32);
    impl<G: Uniform32> Uniform32 for Counting<G> {
        fn next_u32(&mut self) -> u32 {
            self.1 += 1;
            self.0.next_u32()
        }
    }

    #[test]
    fn draw_rules() {
        let mut rng = Counting(Philox4x32x10::stream(3, 4), 0);
        let mut iters = 0;
        // λ = 0 and out-of-range means: nothing drawn, no iteration.
        for lambda in [0.0, -1.0, f64::NAN, LAMBDA_MAX * 2.0] {
            assert_eq!(Poisson::new(lambda).sample(&mut rng, &mut iters), 0);
        }
        assert_eq!((rng.1, iters), (0, 0));
        // Inversion: 2 words, k + 1 iterations.
        let p = Poisson::new(4.5);
        for _ in 0..1000 {
            let (w, i) = (rng.1, iters);
            let k = p.sample(&mut rng, &mut iters);
            assert_eq!((rng.1 - w, iters - i), (2, k + 1));
        }
        // PTRS: 3 words per attempt.
        for lambda in [10.0, 1e6] {
            let p = Poisson::new(lambda);
            let (w, i) = (rng.1, iters);
            for _ in 0..1000 {
                p.sample(&mut rng, &mut iters);
            }
            assert_eq!(rng.1 - w, 3 * (iters - i));
            assert!(iters - i < 1500, "{lambda}: {} attempts", iters - i);
        }
    }

    /// Value stability: the first outputs of one stream. A change here changes users' results.
    #[test]
    fn value_stability() {
        let mut rng = Philox4x32x10::stream(42, 7);
        let mut iters = 0;
        let mut out = [0u32; 9];
        for (i, lambda) in [0.3, 3.0, 9.99, 10.0, 55.5, 1e6, 1e9, LAMBDA_MAX, 7.0].into_iter().enumerate() {
            out[i] = Poisson::new(lambda).sample(&mut rng, &mut iters);
        }
        assert_eq!(out, EXPECTED, "{out:?} iters {iters}");
    }

    const EXPECTED: [u32; 9] = [1, 2, 9, 6, 52, 999_981, 1_000_034_343, 2_147_532_844, 6];
}
