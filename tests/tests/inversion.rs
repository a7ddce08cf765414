//! The normal quantile (Wichura's AS 241) and the inversion transforms of
//! `warpmc_kernels::inverse_normal`: accuracy against an independent reference, the defects of
//! naive inversion and their absence after the reflection in integer form, and the
//! distribution of the values.
//!
//! # The reference
//! `y = -Φ^-1(p)` in `f64`, bracketed by bisection to adjacent doubles on
//! `warpmc::quality::normal_upper` (which computes the upper tail directly, but near
//! `p = 0.04` goes through `1 - P` and is off by up to 2.4e-15 in quantile terms), then refined
//! by three Newton steps on:
//! - `y <= 5`: `Φ(y) - 1/2 = -q` in double-double (about 106 bits), `Φ(y) - 1/2` by its Taylor
//!   series `(2π)^-1/2 Σ (-1)^n y^(2n+1) / (2^n n! (2n+1))`, and `-q` exact (`q` given
//!   centrally, `1/2 - p` as a double-double in the tails);
//! - `y > 5`: `P(Z >= y) = p` with `P(Z >= y)` as the density (with `y^2` split exactly) times
//!   Laplace's continued fraction for Mills's ratio; its relative error of a few 1e-16 moves
//!   `y` by that over `y^2 >= 25`.
//!
//! Checked against 40-digit arithmetic (mpmath) at 1200 points from `p = 1e-300` to 1/2: within
//! 1.1e-16 relative, i.e. the rounding to `f64`. PPND16 is measured against it; once within a
//! few 1e-16, PPND16 at the exact `f64` probability of a word is the reference for the `f32`
//! sweeps, where an `f32` ulp is 2^29 times coarser.

// Reference values are written with all the digits they were published or computed with.
#![allow(clippy::excessive_precision)]

use warpmc::quality::normal_upper;
use warpmc_kernels::inverse_normal::{Quantile, Reflected, inversion, inversion_naive, normal_quantile, reflect_u32};
use warpmc_kernels::real::{Double, Single};
use warpmc_kernels::rng::{Generator, Philox4x32x10, Uniform32};
use warpmc_kernels::{Exact, Fast};
use warpmc_tests::{ks_test, normal_cdf};

type S = Single<Exact>;
type F = Single<Fast>;

/// A generator that replays fixed words.
struct Words<'a>(&'a [u32], usize);
impl Uniform32 for Words<'_> {
    fn next_u32(&mut self) -> u32 {
        self.1 += 1;
        self.0[self.1 - 1]
    }
}

/// `f32` inversion of one word.
fn inv32<A: Quantile<R = f32>>(z: u32) -> f32 {
    inversion::<A, _>(&mut Words(&[z], 0))
}

/// `f32` naive inversion of one word.
fn naive32(z: u32) -> f32 {
    inversion_naive::<S, _>(&mut Words(&[z], 0))
}

/// A double-double number `hi + lo` (about 106 bits), for the reference's series.
#[derive(Clone, Copy, Debug)]
struct Dd(f64, f64);

impl Dd {
    /// `a + b` exactly (Knuth's two-sum).
    fn two_sum(a: f64, b: f64) -> Dd {
        let s = a + b;
        let bb = s - a;
        Dd(s, (a - (s - bb)) + (b - bb))
    }
    /// `a + b` exactly, for `|a| >= |b|`.
    fn quick_two_sum(a: f64, b: f64) -> Dd {
        let s = a + b;
        Dd(s, b - (s - a))
    }
    /// `a b` exactly (the error term by a fused multiply-add).
    fn two_prod(a: f64, b: f64) -> Dd {
        let p = a * b;
        Dd(p, a.mul_add(b, -p))
    }
    fn add(self, o: Dd) -> Dd {
        let s = Dd::two_sum(self.0, o.0);
        let t = Dd::two_sum(self.1, o.1);
        let u = Dd::quick_two_sum(s.0, s.1 + t.0);
        Dd::quick_two_sum(u.0, u.1 + t.1)
    }
    fn mul(self, o: Dd) -> Dd {
        let p = Dd::two_prod(self.0, o.0);
        Dd::quick_two_sum(p.0, p.1 + (self.0 * o.1 + self.1 * o.0))
    }
    fn div_f64(self, b: f64) -> Dd {
        let q1 = self.0 / b;
        let p = Dd::two_prod(q1, b);
        let r = self.add(Dd(-p.0, -p.1));
        Dd::quick_two_sum(q1, r.0 / b)
    }
}

/// `(2π)^-1/2` in double-double.
const FRAC_1_SQRT_2PI: Dd = Dd(0.3989422804014327, -2.49232720227773e-17);

/// `Φ(y) - 1/2` for `0 <= y <= 5` in double-double, by its Taylor series
/// `(2π)^-1/2 Σ (-1)^n y^(2n+1) / (2^n n! (2n+1))` (the largest term is below `e^(y^2/2)`,
/// so at most 6 of the 32 digits cancel).
fn phi_centered_dd(y: f64) -> Dd {
    let sq = Dd::two_prod(y, y);
    let h = Dd(-0.5 * sq.0, -0.5 * sq.1);
    let (mut power, mut sum) = (Dd(y, 0.0), Dd(y, 0.0)); // power = (-1)^n y^(2n+1) / (2^n n!)
    for n in 1..400 {
        power = power.mul(h).div_f64(n as f64);
        let term = power.div_f64((2 * n + 1) as f64);
        sum = sum.add(term);
        if term.0.abs() < 1e-34 * sum.0 {
            break;
        }
    }
    sum.mul(FRAC_1_SQRT_2PI)
}

/// The normal density at `y`, in `f64` (for Newton steps and the far tail), with `y^2`
/// split exactly so that its rounding does not reach the exponential.
fn density(y: f64) -> f64 {
    let sq = Dd::two_prod(y, y);
    (-0.5 * sq.0).exp() * (1.0 - 0.5 * sq.1) * FRAC_1_SQRT_2PI.0
}

/// `P(Z >= y)` for `y >= 5`: the density times Laplace's continued fraction for Mills's ratio,
/// `1 / (y + 1 / (y + 2 / (y + 3 / (y + ...))))`, evaluated from 100 terms back (converged to
/// `f64` precision for `y >= 5`). Relative error a few `1e-16`, which moves the quantile by
/// that over `y^2 >= 25`.
fn upper_tail_far(y: f64) -> f64 {
    let mut t = y;
    for k in (1..=100).rev() {
        t = y + k as f64 / t;
    }
    density(y) / t
}

/// The largest `x` in `[lo, hi]` (to adjacent doubles) with `below(x)`, given `below(lo)` and
/// not `below(hi)`.
fn bisect(mut lo: f64, mut hi: f64, below: impl Fn(f64) -> bool) -> f64 {
    loop {
        let mid = lo + 0.5 * (hi - lo);
        if mid <= lo || mid >= hi {
            return 0.5 * (lo + hi);
        }
        if below(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
}

/// The reference `Φ^-1(p)` for `p` in `(0, 1/2]`, `q = p - 1/2` (exact).
///
/// `y = -Φ^-1(p)` is first bracketed by bisection on `warpmc::quality::normal_upper` (about
/// 2e-15 relative: near `p = 0.04` its `erfc` is `1 - P`), then refined by Newton steps on
/// `Φ(y) - 1/2 = -q` in double-double while `y <= 5`, on [`upper_tail_far`] beyond.
fn reference_lower(q: f64, p: f64) -> f64 {
    let mut y = bisect(0.0, 40.0, |y| normal_upper(y) > p);
    for _ in 0..3 {
        let step = if y <= 5.0 {
            // -q exactly as a double-double: q itself centrally, 1/2 - p in the tails.
            let target = if q >= -0.425 { Dd(-q, 0.0) } else { Dd::two_sum(0.5, -p) };
            let r = phi_centered_dd(y).add(Dd(-target.0, -target.1));
            -(r.0 + r.1) / density(y)
        } else {
            (upper_tail_far(y) - p) / density(y)
        };
        y += step;
    }
    -y
}

/// The exact `f64` probability and its `q` for word `z`'s reflection (`z' = z` below 2^31).
fn exact_pq(z: u32) -> (f64, f64, bool) {
    let upper = z >= 1 << 31;
    let zr = if upper { !z } else { z } as f64;
    ((zr + 0.5) * 2f64.powi(-32), -(2f64.powi(31) - zr - 0.5) * 2f64.powi(-32), upper)
}

/// The spacing of `f32` values at `|x|` (normal range).
fn ulp32(x: f64) -> f64 {
    let e = (x.abs() as f32).to_bits() >> 23 & 0xff;
    2f64.powi(e as i32 - 127 - 23)
}

/// The words of the `f32` sweeps: every 2^12-th word, and the first and last 2^16 words of
/// each end and of each side of the middle.
fn sweep_words() -> Vec<u32> {
    let mut w: Vec<u32> = (0..1u32 << 20).map(|i| i << 12).collect();
    for i in 0..1u32 << 16 {
        w.extend([i, u32::MAX - i, (1 << 31) + i, (1 << 31) - 1 - i]);
    }
    w
}

#[test]
fn known_answers() {
    // ALGORITHMS.md's reference quantiles (checked with 40-digit arithmetic).
    let refs = [
        (0.975, 1.9599639845400542),
        (1e-10, -6.3613409024040562),
        (2f64.powi(-32), -6.2302601379890432),
        (2f64.powi(-33), -6.3379577545537893),
    ];
    // The reference at a probability given as a double (reflected for p > 1/2).
    let reference = |p: f64| {
        if p <= 0.5 { reference_lower(p - 0.5, p) } else { -reference_lower(0.5 - p, 1.0 - p) }
    };
    for (p, x) in refs {
        // 0.975 is not a double: the quantile of its nearest one is 1.9e-16 (relative) lower.
        let r = reference(p);
        assert!(((r - x) / x).abs() < 2.5e-16, "reference at {p}: {r} vs {x}");
        let d = normal_quantile::<Double>(p);
        assert!(((d - x) / x).abs() < 4e-16, "PPND16 at {p}: {d} vs {x}");
        // f32: against the quantile of the f32 probability (0.975 as f32 is 2.4e-8 above it,
        // which moves x by 3.5 ulps).
        let p32 = p as f32;
        let r32 = reference(p32 as f64);
        let s = normal_quantile::<S>(p32) as f64;
        assert!((s - r32).abs() <= 4.0 * ulp32(r32), "PPND7 at {p}: {s} vs {r32}");
    }
}

#[test]
fn ppnd16_against_the_reference() {
    // The largest relative error and where, per formula: central, r <= 5, r > 5.
    let mut worst = [(0.0f64, 0.0f64); 3];
    let mut check = |q: f64, p: f64| {
        let x = Double::normal_quantile_centered(q, p);
        let r = reference_lower(q, p);
        let region = if q >= -0.425 {
            0
        } else if p >= (-25.0f64).exp() {
            1
        } else {
            2
        };
        if r == 0.0 {
            assert_eq!(x, 0.0);
            return;
        }
        let e = ((x - r) / r).abs();
        if e > worst[region].0 {
            worst[region] = (e, p);
        }
    };
    // Central: q uniform on [-0.425, 0], exact.
    const N: i32 = 20_000;
    for i in 0..=N {
        let q = -0.425 * f64::from(i) / f64::from(N);
        check(q, 0.5 + q);
    }
    // Tails: p log-uniform from 1e-300 to 0.075.
    let (lo, hi) = (-300.0f64, 0.075f64.log10());
    for i in 0..=N {
        let p = 10f64.powf(lo + (hi - lo) * f64::from(i) / f64::from(N));
        check(p - 0.5, p);
    }
    for (name, (e, p)) in ["central", "tail r <= 5", "tail r > 5"].iter().zip(worst) {
        println!("PPND16 {name}: max relative error {e:.3e} (at p = {p:.3e})");
        assert!(e < 1e-15, "{name}: {e:e} at {p:e}");
    }
}

/// The errors in `f32` ulps of `f32` inversion in mode `A` over the sweep words, against PPND16
/// at the words' exact probabilities: the largest (and its word) in the central region and in
/// the tail, and how many words are within 1, 2, 3, 4 ulps. Also checks that every value is
/// finite and that word `z` and its mirror give opposite values.
fn f32_sweep<A: Quantile<R = f32>>(name: &str) -> [(f64, u32); 2] {
    let mut worst = [(0.0f64, 0u32); 2];
    let mut within = [0usize; 4];
    let words = sweep_words();
    for &z in &words {
        let x = inv32::<A>(z);
        assert!(x.is_finite(), "{z:#x}");
        assert_eq!(x, -inv32::<A>(!z), "antisymmetry at {z:#x}");
        let (p, q, upper) = exact_pq(z);
        let r = Double::normal_quantile_centered(q, p) * if upper { -1.0 } else { 1.0 };
        let e = (x as f64 - r).abs() / ulp32(r);
        let region = usize::from(q < -0.425);
        if e > worst[region].0 {
            worst[region] = (e, z);
        }
        for (k, w) in within.iter_mut().enumerate() {
            *w += usize::from(e <= (k + 1) as f64);
        }
    }
    let n = words.len() as f64;
    println!(
        "PPND7 f32 {name}: max {:.3} ulp central (word {:#010x}), {:.3} ulp tail (word {:#010x}); \
         within 1/2/3/4 ulp: {:.4}/{:.4}/{:.4}/{:.5}",
        worst[0].0,
        worst[0].1,
        worst[1].0,
        worst[1].1,
        within[0] as f64 / n,
        within[1] as f64 / n,
        within[2] as f64 / n,
        within[3] as f64 / n
    );
    worst
}

#[test]
fn ppnd7_f32_ulps() {
    // Measured: PPND7's own error is up to 1.8 ulp (near x = -2); f32 evaluation (ln p, the
    // rounding of r = sqrt(-ln p), which x follows with slope about 2, Horner) adds the rest.
    for (e, z) in f32_sweep::<S>("exact") {
        assert!(e < 4.0, "exact: {e} ulp at {z:#x}");
    }
    // Fast mode here is the CPU build's (std's ln and sqrt); the GPU's approximate
    // instructions are not measured by this file.
    for (e, z) in f32_sweep::<F>("fast (CPU)") {
        assert!(e < 4.0, "fast: {e} ulp at {z:#x}");
    }
}

#[test]
fn naive_defects_and_their_fix() {
    // Naive: +inf for the top 128 words, -inf for word 0.
    for z in u32::MAX - 127..=u32::MAX {
        assert_eq!(naive32(z), f32::INFINITY, "{z:#x}");
    }
    assert_eq!(naive32(0), f32::NEG_INFINITY);
    let naive_max = naive32(u32::MAX - 128);
    assert!(naive_max.is_finite());
    // Corrected: the largest |x| at both end words, Φ^-1(2^-33) within 2 ulps.
    const MAX_ABS: f64 = 6.3379577545537893;
    let top = inv32::<S>(u32::MAX);
    assert_eq!(inv32::<S>(0), -top);
    assert!((top as f64 - MAX_ABS).abs() <= 2.0 * ulp32(MAX_ABS), "{top}");
    println!("largest finite: naive {naive_max} (u = 1 - 2^-24), corrected {top}");
    assert!((naive_max as f64 - 5.2947040848545981).abs() < 4.0 * ulp32(5.3));

    // Distinct values from the 2^22 words of the upper tail (z >= 2^32 - 2^22: exact
    // probability (z + 1/2) 2^-32 > 1 - 2^-10) and of the lower tail (z < 2^22).
    let distinct = |f: &dyn Fn(u32) -> f32, words: std::ops::Range<u64>| {
        let mut v: Vec<u32> = words.map(|z| f(z as u32).to_bits()).collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    let upper = (1u64 << 32) - (1 << 22)..1u64 << 32;
    let lower = 0..1u64 << 22;
    let naive_up = distinct(&naive32, upper.clone());
    let naive_low = distinct(&naive32, lower.clone());
    let fixed_up = distinct(&inv32::<S>, upper);
    let fixed_low = distinct(&inv32::<S>, lower);
    println!("distinct values, upper tail: naive {naive_up}, corrected {fixed_up}");
    println!("distinct values, lower tail: naive {naive_low}, corrected {fixed_low}");
    // Naive: u takes the f32 values 1 - k 2^-24, k = 0..2^14, and k = 0 is +inf.
    assert_eq!(naive_up, (1 << 14) + 1);
    assert_eq!(fixed_up, fixed_low);
    assert!(fixed_up > 100 * naive_up);

    // f64: the naive form has -inf at k = 0 and no +inf; its largest value is Φ^-1(1 - 2^-53),
    // the corrected one's Φ^-1(1 - 2^-54).
    let d = |x: u32, y: u32| inversion_naive::<Double, _>(&mut Words(&[x, y], 0));
    let c = |x: u32, y: u32| inversion::<Double, _>(&mut Words(&[x, y], 0));
    assert_eq!(d(0, 0), f64::NEG_INFINITY);
    let (naive64, fixed64) = (d(0x001f_ffff, u32::MAX), c(0x001f_ffff, u32::MAX));
    println!("f64 largest: naive {naive64}, corrected {fixed64}");
    assert!((naive64 - 8.2095361516013869).abs() < 4e-15);
    assert!((fixed64 - 8.2923610758135955).abs() < 4e-15);
    assert_eq!(c(0, 0), -fixed64);
}

#[test]
fn reflection_is_exact() {
    // p and q of the f32 reflection are the exact values rounded once.
    for z in sweep_words().into_iter().step_by(97) {
        let Reflected { p, q, upper } = reflect_u32(z);
        let (pe, qe, ue) = exact_pq(z);
        assert_eq!((p, q, upper), (pe as f32, qe as f32, ue), "{z:#x}");
    }
}

/// Mean, variance, third moment and the KS test of `n` values; each moment within 5 standard
/// errors of a standard normal's (`SE` = `1/√n`, `√(2/n)`, `√(15/n)`).
fn check_distribution(name: &str, mut x: Vec<f64>) {
    let n = x.len() as f64;
    assert!(x.iter().all(|v| v.is_finite()), "{name}: a non-finite value");
    let m1 = x.iter().sum::<f64>() / n;
    let m2 = x.iter().map(|v| v * v).sum::<f64>() / n;
    let m3 = x.iter().map(|v| v * v * v).sum::<f64>() / n;
    let (d, p) = ks_test(&mut x, normal_cdf);
    println!("{name}: mean {m1:+.2e}, E[x^2] - 1 {:+.2e}, E[x^3] {m3:+.2e}, KS D = {d:.3e} p = {p:.3}", m2 - 1.0);
    assert!(m1.abs() < 5.0 / n.sqrt(), "{name}: mean {m1}");
    assert!((m2 - 1.0).abs() < 5.0 * (2.0 / n).sqrt(), "{name}: E[x^2] {m2}");
    assert!(m3.abs() < 5.0 * (15.0 / n).sqrt(), "{name}: E[x^3] {m3}");
    assert!(p > 1e-3, "{name}: KS p = {p}");
}

#[test]
fn distribution_of_inversion() {
    const N: usize = 1 << 20;
    let mut g = Philox4x32x10::stream(0x5eed_1234, 7);
    let x: Vec<f64> = (0..N).map(|_| inversion::<S, _>(&mut g) as f64).collect();
    check_distribution("f32 exact", x);
    let mut g = Philox4x32x10::stream(0x5eed_1234, 8);
    let x: Vec<f64> = (0..N).map(|_| inversion::<F, _>(&mut g) as f64).collect();
    check_distribution("f32 fast", x);
    let mut g = Philox4x32x10::stream(0x5eed_1234, 9);
    let x: Vec<f64> = (0..N).map(|_| inversion::<Double, _>(&mut g)).collect();
    check_distribution("f64", x);
}

/// The kernel crate's sweep accumulator (what the GPU runs over all 2^32 words) agrees with
/// this file's sweep on the same words: the same largest error, the same antisymmetry.
#[test]
fn the_sweep_accumulator_agrees_with_this_file() {
    use warpmc_kernels::inverse_normal::InversionSweep;
    let words = sweep_words();
    let mut acc = InversionSweep::default();
    for &z in &words {
        acc.add(z);
    }
    let worst = f32_sweep::<S>("exact (again)");
    let largest = worst[0].0.max(worst[1].0);
    assert_eq!(acc.words, words.len() as f64);
    assert!((acc.max_ulps - largest).abs() < 1e-12, "{} against {largest}", acc.max_ulps);
    // The words come in mirror pairs (z, !z) except the every-2^12-th ones: the reflected
    // inversion's sum is that of the unpaired words only; naive inversion's top words are +inf.
    // The largest |x|: words 0 and 2^32 - 1 (p = 2^-33), whose exact quantile is
    // 6.3379577545537893; f32 evaluation gives 6.3379583 (2.7 ulp above its f32 rounding).
    assert_eq!(acc.max_abs, inv32::<S>(0).abs() as f64);
    assert_eq!(inv32::<S>(0), -6.337_958_335_876_465);
    assert!(acc.naive_non_finite >= 129.0, "{}", acc.naive_non_finite);
}

/// Every one of the 2^32 words on the GPU: the largest error of f32 inversion against the f64
/// reference, its symmetry (mean and third moment against their statistical error for 2^32
/// samples), and naive inversion's infinities and bias.
#[test]
fn gpu_inversion_over_every_word() {
    let Some(exec) = warpmc_tests::gpu_or_skip("gpu_inversion_over_every_word") else { return };
    let gpu = exec.as_gpu().expect("a GPU executor");
    // The GPU's arithmetic is the CPU's (exact mode): the same on a sample range.
    use warpmc_kernels::inverse_normal::InversionSweep;
    let (first, count) = ((1u64 << 32) - (1 << 22), 1u64 << 22);
    let part = gpu.inverse_cdf_sweep(first, count).unwrap();
    let mut cpu = InversionSweep::default();
    for z in first..first + count {
        cpu.add(z as u32);
    }
    assert_eq!((part.max_ulps, part.max_ulps_word, part.over_1, part.over_2), (cpu.max_ulps, cpu.max_ulps_word, cpu.over_1, cpu.over_2));
    assert_eq!((part.naive_non_finite, part.max_abs), (cpu.naive_non_finite, cpu.max_abs));

    let all = gpu.inverse_cdf_sweep(0, 1 << 32).unwrap();
    let n = all.words;
    assert_eq!(n, 2f64.powi(32));
    let (mean, m3) = (all.sum / n, all.sum_cubes / n);
    let (naive_n, naive_mean, naive_m3) =
        (n - all.naive_non_finite, all.naive_sum / (n - all.naive_non_finite), all.naive_sum_cubes / (n - all.naive_non_finite));
    // Standard errors of the mean and of E[x^3] for 2^32 standard normal samples: 1/sqrt(n)
    // and sqrt(15/n).
    let (se1, se3) = (1.0 / n.sqrt(), (15.0 / n).sqrt());
    eprintln!(
        "f32 inversion over 2^32 words: max {:.3} ulp (word {:#010x}), over 1/2/4 ulp: {}/{}/{} words; \
         largest |x| {}; mean {mean:.3e} (SE {se1:.1e}), E[x^3] {m3:.3e} (SE {se3:.1e})",
        all.max_ulps, all.max_ulps_word as u64, all.over_1, all.over_2, all.over_4, all.max_abs
    );
    eprintln!(
        "naive: {} non-finite words, finite values in [{}, {}], mean {naive_mean:.3e}, E[x^3] {naive_m3:.3e} \
         over {naive_n} words",
        all.naive_non_finite, all.naive_min, all.naive_max
    );
    assert!(all.max_ulps < 8.0, "{} ulp at {:#x}", all.max_ulps, all.max_ulps_word as u64);
    assert_eq!(all.max_abs, 6.337_958_335_876_465);
    // Exactly antisymmetric: what is left is the rounding of the sums.
    assert!(mean.abs() < 1e-3 * se1 && m3.abs() < 1e-3 * se3, "mean {mean}, E[x^3] {m3}");
    // The naive version: word 0 gives -inf, the top 128 words +inf.
    assert_eq!(all.naive_non_finite, 129.0);
    assert!(all.naive_max < all.max_abs, "naive's upper tail stops short: {}", all.naive_max);
}
