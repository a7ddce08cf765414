//! Gamma variates (shape `α > 0`, scale 1) by Marsaglia and Tsang's method: G. Marsaglia and
//! W. W. Tsang, "A simple method for generating gamma variables", ACM Transactions on
//! Mathematical Software 26(3), 2000, 363-372.
//!
//! For `α >= 1`, with `d = α - 1/3` and `c = 1/sqrt(9d)`, one attempt draws a standard normal
//! `x`, forms `v = (1 + c x)^3`, and (only when `v > 0`) a uniform `u`; it accepts `d v` when
//! `u < 1 - 0.0331 x^4` (the squeeze, which saves the logarithms most of the time) or when
//! `ln u < x^2/2 + d (1 - v + ln v)`. The accepted `d v` is exactly `Gamma(α)`: the density of
//! `v` under the hat `φ(x)` times the acceptance probability `exp(x^2/2 + d(1 - v + ln v))`
//! (which never exceeds 1) is proportional to `v^(d - 2/3) e^(-d v)`, the gamma density of
//! `d v` after the change of variables. For `α < 1` the method draws `Y ~ Gamma(α + 1)` and
//! returns `Y U^(1/α)` (Stuart's theorem, the paper's section 6), computed as
//! `Y exp(ln(U) (1/α))`.
//!
//! Each attempt is exposed on its own ([`Gamma::attempt`]) next to the loop ([`Gamma::sample`])
//! so that a warp-level driver (Thomas's pre-caching, ALGORITHMS.md "Rejection on warps") can
//! run attempts on lanes that have already accepted; [`acceptance`] gives the per-attempt
//! acceptance probability its cost model needs.
//!
//! # Draw rule
//! Per attempt: the normal source's draw (whatever it takes; the tests use Box-Muller pairs,
//! keeping the second value for the next call), then one [`Arith::uniform`] (1 word in `f32`,
//! 2 in `f64`) only when `v > 0`. After the accepted attempt, when `α < 1`, one more
//! [`Arith::uniform`] for the boost `U^(1/α)`. Nothing else is drawn.
//!
//! # Range and accuracy
//! Any finite `α > 0` is valid; the host validates it (positive and finite). The method needs
//! no upper limit, but the precision of `R` does: see [`Gamma::new`] for the suggested limits.
//! With the `f32` Box-Muller source (`|x| <= 6.764`), the candidates are truncated where the
//! hat has mass below `2^-33`; the `f32` uniform's `ln u >= -22.9` likewise ignores acceptance
//! probabilities below `2^-33`. Results below the smallest positive `R` (possible for `α < 1`:
//! `P(X < t) ≈ t^α / Γ(α + 1)`) round to zero or to a subnormal, as the true value would.

use crate::tally::Tally;
use crate::math64::{exp_f64, ln_f64};
use crate::platform::sqrt_f64;
use crate::real::{Arith, Real};
use crate::rng::Uniform32;

/// Marsaglia and Tsang's squeeze constant: accept at once when `u < 1 - 0.0331 x^4`.
const SQUEEZE: f64 = 0.0331;

/// Precomputed constants of a `Gamma(α, 1)` sampler in precision `R`. Build it with
/// [`Gamma::new`]; the fields are public so that a GPU launch can pass it as plain data.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Gamma<R> {
    /// `d = α' - 1/3`, where `α' = α` for `α >= 1` and `α + 1` for `α < 1` (so `d >= 2/3`).
    pub d: R,
    /// `c = 1/sqrt(9 d)`.
    pub c: R,
    /// The boost exponent `1/α` when `α < 1` (capped at the largest finite `R`); `0` when
    /// `α >= 1`, which means no boost and no extra uniform.
    pub inv_shape: R,
}

impl<R: Real> Gamma<R> {
    /// The sampler for shape `shape` (`α`), scale 1. Computed in `f64` (`sqrt` correctly
    /// rounded, no transcendental functions), then each constant rounded once to `R`.
    ///
    /// The host validates `shape > 0` and finite; this function does not check. No upper limit
    /// is needed for the method's validity. What limits large shapes is the precision `R` (unit
    /// roundoff `ε`, `2^-24` in `f32`): the output `d v` takes values `3 α ε` to `6 α ε` apart
    /// (`3 d` times the spacing of `t = 1 + c x`), i.e. `3` to `6 sqrt(α) ε` standard
    /// deviations; and the rounding of `t` moves the `x` that the test `x²/2 + d(1 - v + ln v)`
    /// should use by up to `3 sqrt(d) ε`, so the log-acceptance is off by up to about
    /// `3 |x| sqrt(α) ε` (`1 - v + ln v` itself, about `-(3 c x)²/2`, adds a third of that).
    /// For `f32` keep `α <= 1e7`: there the spacing is 6e-4 to 1.1e-3 standard deviations and
    /// the log-acceptance error about `6e-4 |x|`; the measured attempts per variate are
    /// 1.000078 against the exact `1 + 3e-9`, and `tests/tests/gamma_poisson.rs` checks the
    /// law there by chi-square. In `f64` the same errors stay below `1e-8` up to `α = 1e15`.
    /// For tiny `α` the boost `1/α` is capped at the largest finite `R`, so that
    /// `ln(1) * (1/α)` stays 0 and never becomes `0 * inf`.
    pub fn new(shape: f64) -> Gamma<R> {
        let boosted = shape < 1.0;
        let alpha = if boosted { shape + 1.0 } else { shape };
        let d = alpha - 1.0 / 3.0;
        let c = 1.0 / (3.0 * sqrt_f64(d));
        let inv_shape = if boosted {
            let cap = if R::MANTISSA_BITS == 24 { f32::MAX as f64 } else { f64::MAX };
            let b = 1.0 / shape;
            if b < cap { b } else { cap }
        } else {
            0.0
        };
        Gamma { d: R::from_f64(d), c: R::from_f64(c), inv_shape: R::from_f64(inv_shape) }
    }

    /// One attempt of the rejection loop, no loop: `Some(d v)`, a `Gamma(α')` variate
    /// (`α' = α` or `α + 1`, see [`Gamma::d`]), or `None` when the attempt is rejected. The
    /// caller applies [`Gamma::boost`] to an accepted value to get `Gamma(α)`.
    ///
    /// Draws `x = normal(rng)`, then, only when `v = (1 + c x)^3 > 0`, one `u = A::uniform(rng)`
    /// in `(0, 1]` (`u = 1` always rejects, which costs an attempt and biases nothing). The
    /// squeeze `u < 1 - 0.0331 x^4` is tested first, then `ln u < x^2/2 + d((1 - v) + ln v)`,
    /// in that evaluation order.
    #[inline(always)]
    pub fn attempt<A: Arith<R = R>, G: Uniform32>(
        &self,
        rng: &mut G,
        normal: &mut impl FnMut(&mut G) -> R,
    ) -> Option<R> {
        let x = normal(rng);
        let t = R::ONE + self.c * x;
        let v = (t * t) * t;
        // `!(v > 0)` also rejects a NaN from the normal source.
        if !(v > R::ZERO) {
            return None;
        }
        let u = A::uniform(rng);
        let x2 = x * x;
        let y = self.d * v;
        if u < R::ONE - R::from_f64(SQUEEZE) * (x2 * x2) {
            return Some(y);
        }
        if A::ln(u) < R::from_f64(0.5) * x2 + self.d * ((R::ONE - v) + A::ln(v)) {
            return Some(y);
        }
        None
    }

    /// The shape `< 1` boost of an accepted attempt's value `y`: `y exp(ln(U) (1/α))` with one
    /// more `U = A::uniform(rng)` when `α < 1`; `y` itself, drawing nothing, when `α >= 1`.
    #[inline(always)]
    pub fn boost<A: Arith<R = R>, G: Uniform32>(&self, rng: &mut G, y: R) -> R {
        if self.inv_shape > R::ZERO {
            let u = A::uniform(rng);
            y * A::exp(A::ln(u) * self.inv_shape)
        } else {
            y
        }
    }

    /// A `Gamma(α, 1)` variate: [`Gamma::attempt`] until one is accepted, adding 1 to `iters`
    /// per attempt, then [`Gamma::boost`]. Draw rule: the attempts' draws in order, then (for
    /// `α < 1`) the boost's one uniform. The expected number of attempts is
    /// `1 / acceptance(α)`.
    #[inline(always)]
    pub fn sample<A: Arith<R = R>, G: Uniform32>(
        &self,
        rng: &mut G,
        normal: &mut impl FnMut(&mut G) -> R,
        iters: &mut impl Tally,
    ) -> R {
        let y = loop {
            iters.tick();
            if let Some(y) = self.attempt::<A, G>(rng, normal) {
                break y;
            }
        };
        self.boost::<A, G>(rng, y)
    }
}

/// The probability that one attempt of [`Gamma::attempt`] accepts, for shape `shape` (`α`;
/// for `α < 1` it is the acceptance of `α + 1`, which the method runs), with an exact normal
/// source and exact arithmetic.
///
/// Formula: the attempt accepts with probability `∫ φ(x) exp(x²/2 + d(1 - v + ln v)) dx` over
/// `v > 0` (the squeeze only shortcuts this test). Substituting `t = 1 + c x`, `s = d t³`
/// turns it into a gamma integral: `p = Γ(α) e^d d^(1/6 - d) / sqrt(2π)`, and with Stirling's
/// series `ln Γ(α) = (α - 1/2) ln α - α + ln(2π)/2 + S(α)` this is
/// `p = exp((α - 1/2) ln(α/d) - 1/3 + S(α))`, computed in `f64` with [`crate::math64`]
/// (`S` from [`ln_gamma`] below `α = 10`, from [`stirling_series`] above; `ln(α/d)` by its
/// atanh series, so `1 - p` keeps its relative precision for large `α`). Values: 0.951668
/// (α 1), 0.973162 (1.5), 0.981660 (2), 0.993799 (5), 0.997066 (10), as in ALGORITHMS.md;
/// `1 - p ≈ 1/(36 α)` for large `α`. Accurate to about 1e-14 (`1 - p` to about `36 α 1e-16`
/// relatively).
pub fn acceptance(shape: f64) -> f64 {
    let alpha = if shape < 1.0 { shape + 1.0 } else { shape };
    let s = if alpha >= 10.0 {
        stirling_series(alpha)
    } else {
        ln_gamma(alpha) - ((alpha - 0.5) * ln_f64(alpha) - alpha + HALF_LN_2PI)
    };
    // ln(α/d) = 2 atanh(z) with z = (α - d)/(α + d) = 1/(6α - 1) <= 1/5: the series to z^29
    // (omitted terms below 1e-21 relative) keeps full relative precision for large α, where
    // ln_f64(α/d) would lose α 2^-53 absolutely after the multiplication by α - 1/2.
    let z = 1.0 / (6.0 * alpha - 1.0);
    let z2 = z * z;
    let mut series = 0.0;
    let mut j = 15;
    while j > 0 {
        j -= 1;
        series = series * z2 + 1.0 / (2 * j + 1) as f64;
    }
    let ln_ratio = 2.0 * z * series;
    exp_f64((alpha - 0.5) * ln_ratio - 1.0 / 3.0 + s)
}

/// `ln(2π)/2`.
pub const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// Stirling's series for `x >= 10`: `S(x) = ln Γ(x) - ((x - 1/2) ln x - x + ln(2π)/2)
/// = Σ_{j=1..6} B_{2j} / (2j (2j - 1) x^(2j-1))`
/// (`1/(12x) - 1/(360x³) + 1/(1260x⁵) - 1/(1680x⁷) + 1/(1188x⁹) - 691/(360360x¹¹)`).
/// The series alternates with terms decreasing for `x >= 10`, so the error is below the first
/// omitted term `1/(156 x¹³)` (6.4e-16 at `x = 10`). IEEE operations only, in a fixed order.
#[inline(always)]
pub fn stirling_series(x: f64) -> f64 {
    let inv = 1.0 / x;
    let z = inv * inv;
    inv * (1.0 / 12.0
        - z * (1.0 / 360.0 - z * (1.0 / 1260.0 - z * (1.0 / 1680.0 - z * (1.0 / 1188.0 - z * (691.0 / 360360.0))))))
}

/// `ln Γ(x)` for `x > 0`, in `f64` with [`crate::math64`]: `x` is shifted up to `y >= 10`
/// through `Γ(x) = Γ(y) / (x (x + 1) ... (y - 1))`, then Stirling's series
/// ([`stirling_series`]). Absolute error about 1e-14 for `x` up to 1e6; relative error about
/// 1e-15 beyond. For tests, host-side set-up and [`acceptance`]; not a hot-path function.
pub fn ln_gamma(x: f64) -> f64 {
    let mut y = x;
    let mut product = 1.0;
    while y < 10.0 {
        product *= y;
        y += 1.0;
    }
    (y - 0.5) * ln_f64(y) - y + HALF_LN_2PI + stirling_series(y) - ln_f64(product)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Exact;
    use crate::real::{Double, Single};
    use crate::rng::{Generator, Philox4x32x10};

    #[test]
    fn acceptance_matches_the_table() {
        for (alpha, p) in [(1.0, 0.951668), (1.5, 0.973162), (2.0, 0.981660), (5.0, 0.993799), (10.0, 0.997066)] {
            assert!((acceptance(alpha) - p).abs() < 6e-7, "{alpha}: {}", acceptance(alpha));
        }
        // Shapes below 1 run alpha + 1.
        assert_eq!(acceptance(0.5), acceptance(1.5));
        // Continuous across the series switch at 10, and 1 - p ~ 1/(36 alpha).
        assert!((acceptance(10.0 - 1e-9) - acceptance(10.0)).abs() < 1e-12);
        let a = 1e6;
        assert!(((1.0 - acceptance(a)) * 36.0 * a - 1.0).abs() < 1e-3);
    }

    /// The acceptance formula against a direct numerical integration of
    /// `φ(x) exp(x²/2 + d(1 - v + ln v))`, and the two inequalities the method rests on:
    /// `x²/2 + d(1 - v + ln v) <= 0` and the squeeze `1 - 0.0331 x⁴ <= exp(...)`.
    #[test]
    fn acceptance_by_integration_and_the_squeeze_is_below_the_test() {
        for alpha in [1.0, 1.3, 2.0, 4.0, 30.0, 1000.0] {
            let d: f64 = alpha - 1.0 / 3.0;
            let c = 1.0 / (9.0 * d).sqrt();
            let h = |x: f64| {
                let v = (1.0 + c * x).powi(3);
                0.5 * x * x + d * (1.0 - v + v.ln())
            };
            let (lo, hi, n) = (-1.0 / c + 1e-12, 40.0, 400_000);
            let step = (hi - lo) / n as f64;
            let mut sum = 0.0;
            for i in 0..=n {
                let x = lo + i as f64 * step;
                let hx = h(x);
                assert!(hx <= 1e-12, "{alpha} {x} {hx}");
                assert!(1.0 - SQUEEZE * x.powi(4) <= hx.exp() + 1e-12, "{alpha} {x}");
                let w = if i == 0 || i == n { 0.5 } else { 1.0 };
                sum += w * (-0.5 * x * x).exp() * hx.exp();
            }
            let p = sum * step / (2.0 * std::f64::consts::PI).sqrt();
            assert!((p - acceptance(alpha)).abs() < 1e-9, "{alpha}: {p} vs {}", acceptance(alpha));
        }
    }

    #[test]
    fn ln_gamma_known_values() {
        let mut fact: f64 = 1.0;
        for n in 1..=30 {
            // ln Γ(n) = ln (n-1)!
            assert!((ln_gamma(n as f64) - fact.ln()).abs() < 1e-13 * fact.ln().max(1.0), "{n}");
            fact *= n as f64;
        }
        let half = 0.5 * std::f64::consts::PI.ln();
        assert!((ln_gamma(0.5) - half).abs() < 1e-14);
        assert!((ln_gamma(1.5) - (half - std::f64::consts::LN_2)).abs() < 1e-14);
        // ln Γ(x) ~ -ln x for small x.
        assert!((ln_gamma(1e-10) + (1e-10f64).ln()).abs() < 1e-9);
    }

    #[test]
    fn constants_and_boost() {
        let g = Gamma::<f64>::new(2.5);
        assert_eq!(g.d, 2.5 - 1.0 / 3.0);
        assert_eq!(g.inv_shape, 0.0);
        let g = Gamma::<f64>::new(0.25);
        assert_eq!(g.d, 1.25 - 1.0 / 3.0);
        assert_eq!(g.inv_shape, 4.0);
        // Tiny shapes: the boost is capped, never infinite.
        assert_eq!(Gamma::<f32>::new(1e-40).inv_shape, f32::MAX);
        assert_eq!(Gamma::<f64>::new(5e-324).inv_shape, f64::MAX);
    }

    /// Counts the words a generator hands out.
    struct Counting<G>(G, u32);
    impl<G: Uniform32> Uniform32 for Counting<G> {
        fn next_u32(&mut self) -> u32 {
            self.1 += 1;
            self.0.next_u32()
        }
    }

    /// The draw rule in `f32`: with a normal source that takes no words, an attempt takes one
    /// word when `v > 0` and none otherwise, and the boost one more.
    #[test]
    fn draw_rule() {
        type S = Single<Exact>;
        let mut rng = Counting(Philox4x32x10::stream(1, 2), 0);
        let g = Gamma::<f32>::new(0.5);
        let mut iters = 0;
        let mut fixed = |_: &mut Counting<Philox4x32x10>| 0.1f32;
        let y = g.sample::<S, _>(&mut rng, &mut fixed, &mut iters);
        assert!(y > 0.0);
        assert_eq!(rng.1, iters + 1);
        // v <= 0: x = -1/c - 1 takes no uniform.
        let mut neg = |_: &mut Counting<Philox4x32x10>| -1.0 / g.c - 1.0;
        assert_eq!(g.attempt::<S, _>(&mut rng, &mut neg), None);
        assert_eq!(rng.1, iters + 1);
        // f64 uniforms take two words.
        let g = Gamma::<f64>::new(3.0);
        let mut rng = Counting(Philox4x32x10::stream(1, 2), 0);
        let mut iters = 0;
        let mut fixed = |_: &mut Counting<Philox4x32x10>| 0.3f64;
        g.sample::<Double, _>(&mut rng, &mut fixed, &mut iters);
        assert_eq!(rng.1, 2 * iters);
    }

    /// Value stability: the first outputs of one stream in `f32` exact mode (Box-Muller normals,
    /// the second of a pair kept for the next call). A change here changes users' results.
    #[test]
    fn value_stability_f32() {
        type S = Single<Exact>;
        let mut rng = Philox4x32x10::stream(42, 7);
        let mut spare: Option<f32> = None;
        let mut normal = |r: &mut Philox4x32x10| match spare.take() {
            Some(z) => z,
            None => {
                let (a, b) = S::box_muller(r);
                spare = Some(b);
                a
            }
        };
        let mut iters = 0;
        let mut out = [0u32; 6];
        for (i, shape) in [0.3, 1.0, 4.0, 0.3, 1.0, 4.0].into_iter().enumerate() {
            out[i] = Gamma::<f32>::new(shape).sample::<S, _>(&mut rng, &mut normal, &mut iters).to_bits();
        }
        assert_eq!(out, EXPECTED_F32, "{out:#010x?} iters {iters}");
    }

    // 0.0094187, 1.9693578, 2.7431755, 0.13732894, 0.06684922, 5.0822129 (as f32 bits).
    const EXPECTED_F32: [u32; 6] = [0x3c1a_50e6, 0x3ffc_13eb, 0x402f_9030, 0x3e0c_9ff5, 0x3d88_e83e, 0x40a2_a17d];
}
