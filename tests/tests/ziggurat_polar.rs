//! Tests of the ziggurat tables and of three samplers, Marsaglia's polar method and the ziggurat
//! normal and exponential (`warpmc_kernels::{polar, ziggurat}`), in `f32` exact, `f32` fast and
//! `f64`, on Philox streams with fixed seeds.
//!
//! # The tables
//!
//! `r` and `v` against the published values (Marsaglia and Tsang 2000) and against the roots
//! found with 40-digit arithmetic (mpmath, bisection on the same closure condition); the top
//! layer's closure; every layer's area (`x_i (f(x_{i-1}) - f(x_i))`, the base
//! `r f(r) + ∫_r^∞ f` with `erfc`) equal to `v` within 1e-12, with `std`'s `exp`; the fast-path
//! fraction from the thresholds against the geometric ratios `x_{i-1}/x_i` and against a count of
//! 2^22 drawn attempts.
//!
//! # The samplers
//!
//! For each sampler and precision:
//! - Kolmogorov-Smirnov over 2^20 values against Φ or `1 - e^{-x}`: `p > 1e-3`;
//! - mean and variance of those values within 4.5 standard errors (`1/√n`, `√(2/n)` for the
//!   normal, `√(8/n)` for the exponential's variance, whose fourth central moment is 9);
//! - a chi-square over 2^23 further values on fine bins of the tails: the normal's `x` in
//!   `[-5.5, -3]` and `[3, 5.5]` in bins of 0.05, plus the middle and the two ends (103 cells,
//!   about 22 600 values in the binned tails; the ziggurat's tail starts at `r` = 3.44 and its
//!   wedges cover every layer), the exponential's `x` in `[5, 12]` in bins of 0.1, plus `[0, 5)`
//!   and `[12, inf)` (its tail starts at 7.70): `p > 1e-3`;
//! - the attempts counted in `iters` per call over those 2^23 values against the theory, within
//!   4.5 standard errors (the empirical standard deviation of the per-call counts): the polar
//!   method `4/π` per pair; the ziggurat normal `N v / sqrt(π/2) + erfc(r/√2) (1/p - 1)` per
//!   value, `p = r e^{r²/2} ∫_r^∞ e^{-t²/2}` (the tail's acceptance); the exponential
//!   `N v / (1 - e^{-r})`, with `r` and `v` from the tables.
//!
//! # Negative controls
//!
//! The samplers' own code with a flaw switched on (`ziggurat_*_variant`): the normal and the
//! exponential accepting every wedge point (the normal's symmetric surplus is caught by the
//! variance, the tail chi-square and the attempt count, not by Kolmogorov-Smirnov; the
//! exponential's by all four), and the normal accepting every tail point, `r + Exp(r)` (caught by
//! the tail chi-square).

use std::f64::consts::{PI, SQRT_2};

use warpmc::quality::erfc;
use warpmc_kernels::polar::polar;
use warpmc_kernels::real::{Arith, Double, Real, Single};
use warpmc_kernels::rng::{Generator, Philox4x32x10};
use warpmc_kernels::ziggurat::{self, EXPONENTIAL, NORMAL, Zig, ziggurat_exponential_variant, ziggurat_normal_variant};
use warpmc_kernels::{Exact, Fast};
use warpmc_tests::{chi_square_test, ks_test, normal_cdf};

const SEED: u64 = 0x5eed_2172_9a11;
const N_KS: usize = 1 << 20;
const N_TAIL: usize = 1 << 23;
const Z_MAX: f64 = 4.5;
const P_MIN: f64 = 1e-3;

/// `sqrt(π/2) = ∫_0^∞ e^{-x²/2}`.
fn half_normal_area() -> f64 {
    (PI / 2.0).sqrt()
}

/// `P(X > x)` for a standard normal.
fn upper(x: f64) -> f64 {
    0.5 * erfc(x / SQRT_2)
}

#[test]
fn tables() {
    // Published (Marsaglia and Tsang 2000), and the roots of the closure in 40-digit arithmetic.
    let (r_pub, v_pub, r_40) = (3.442619855899, 9.91256303526217e-3, 3.442_619_855_896_652_121_4);
    println!("normal: r = {:.17} v = {:.17e} closure {:e}", NORMAL.r, NORMAL.v, NORMAL.closure);
    assert!((NORMAL.r - r_pub).abs() < 3e-12, "{}", NORMAL.r);
    assert!((NORMAL.r - r_40).abs() < 2e-15, "{}", NORMAL.r);
    // The published v is v at the published r, which is 2.3e-12 below the root: dv/dr = -r² f(r)
    // accounts for the 7.4e-14.
    assert!((NORMAL.v - v_pub).abs() < 1e-13, "{}", NORMAL.v);
    assert!((NORMAL.v - 9.912_563_035_336_461e-3).abs() < 2e-17, "{}", NORMAL.v);
    let (r_pub, v_pub, r_40) = (7.697117470131487, 3.949659822581572e-3, 7.697_117_470_131_049_714);
    println!("exponential: r = {:.17} v = {:.17e} closure {:e}", EXPONENTIAL.r, EXPONENTIAL.v, EXPONENTIAL.closure);
    assert!((EXPONENTIAL.r - r_pub).abs() < 5e-13, "{}", EXPONENTIAL.r);
    assert!((EXPONENTIAL.r - r_40).abs() < 2e-15, "{}", EXPONENTIAL.r);
    assert!((EXPONENTIAL.v - v_pub).abs() < 1e-16, "{}", EXPONENTIAL.v);

    // The top layer closes.
    assert!(NORMAL.closure.abs() < 1e-14 && EXPONENTIAL.closure.abs() < 1e-14);

    // Every area equals v, with std's exp and erfc.
    let normal_f = |x: f64| (-0.5 * x * x).exp();
    let exp_f = |x: f64| (-x).exp();
    let areas = |x: &[f64], f: &dyn Fn(f64) -> f64, base: f64, v: f64| {
        let mut worst = (base - v).abs();
        for i in 1..x.len() {
            worst = worst.max((x[i] * (f(x[i - 1]) - f(x[i])) - v).abs());
        }
        worst
    };
    let r = NORMAL.r;
    let worst = areas(&NORMAL.x, &normal_f, r * normal_f(r) + half_normal_area() * erfc(r / SQRT_2), NORMAL.v);
    println!("normal: largest |area - v| {worst:e}");
    assert!(worst < 1e-12);
    let r = EXPONENTIAL.r;
    let worst = areas(&EXPONENTIAL.x, &exp_f, r * exp_f(r) + exp_f(r), EXPONENTIAL.v);
    println!("exponential: largest |area - v| {worst:e}");
    assert!(worst < 1e-12);
    assert_eq!((NORMAL.x[0], NORMAL.x[127], NORMAL.f[0]), (0.0, NORMAL.r, 1.0));
    assert_eq!((EXPONENTIAL.x[0], EXPONENTIAL.x[255], EXPONENTIAL.f[0]), (0.0, EXPONENTIAL.r, 1.0));

    // The fast-path fractions: from the thresholds, from the ratios, and counted.
    let ratio_fraction = |x: &[f64], v: f64, fr: f64| {
        let n = x.len();
        let q = v / fr;
        (x[n - 1] / q + (1..n).map(|i| x[i - 1] / x[i]).sum::<f64>()) / n as f64
    };
    let nf = ratio_fraction(&NORMAL.x, NORMAL.v, NORMAL.f[127]);
    let ef = ratio_fraction(&EXPONENTIAL.x, EXPONENTIAL.v, EXPONENTIAL.f[255]);
    println!("fast-path fraction: normal {nf:.9}, exponential {ef:.9}");
    for (t, exact) in [
        (Single::<Exact>::NORMAL_FAST_FRACTION, nf),
        (Double::NORMAL_FAST_FRACTION, nf),
        (Single::<Exact>::EXPONENTIAL_FAST_FRACTION, ef),
        (Double::EXPONENTIAL_FAST_FRACTION, ef),
    ] {
        // ceil() on 24 bits adds at most 2^-24 per layer.
        assert!((t - exact).abs() < 1e-7, "{t} {exact}");
    }
    fn counted<A: Zig>(normal: bool) -> (f64, f64) {
        let mut g = Philox4x32x10::stream(SEED, 7);
        let n = 1u32 << 22;
        let fast = (0..n)
            .filter(|_| if normal { A::normal_attempt(&mut g).fast } else { A::exponential_attempt(&mut g).fast })
            .count() as f64;
        let p = if normal { A::NORMAL_FAST_FRACTION } else { A::EXPONENTIAL_FAST_FRACTION };
        let z = (fast / n as f64 - p) / (p * (1.0 - p) / n as f64).sqrt();
        (fast / n as f64, z)
    }
    for (name, (frac, z)) in [
        ("normal f32", counted::<Single<Exact>>(true)),
        ("normal f64", counted::<Double>(true)),
        ("exponential f32", counted::<Single<Exact>>(false)),
        ("exponential f64", counted::<Double>(false)),
    ] {
        println!("{name}: fast path in {frac:.6} of 2^22 attempts (z = {z:+.2})");
        assert!(z.abs() < Z_MAX, "{name}");
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Law {
    Normal,
    Exponential,
}

/// What the checks measured.
#[derive(Debug)]
struct Checks {
    ks_p: f64,
    mean_z: f64,
    var_z: f64,
    tail_p: f64,
    tail_df: f64,
    iters_per_call: f64,
    iters_theory: f64,
    iters_z: f64,
}

impl Checks {
    fn ks_ok(&self) -> bool {
        self.ks_p > P_MIN
    }
    fn moments_ok(&self) -> bool {
        self.mean_z.abs() < Z_MAX && self.var_z.abs() < Z_MAX
    }
    fn tail_ok(&self) -> bool {
        self.tail_p > P_MIN
    }
    fn iters_ok(&self) -> bool {
        self.iters_z.abs() < Z_MAX
    }
    fn all_ok(&self) -> bool {
        self.ks_ok() && self.moments_ok() && self.tail_ok() && self.iters_ok()
    }
}

/// Normal tail cells: `x < -5.5`, 50 bins to -3, `|x| < 3`, 50 bins to 5.5, `x >= 5.5`.
/// Exponential: `x < 5`, 70 bins to 12, `x >= 12`.
struct Bins {
    law: Law,
    neg: [u64; 51],
    pos: [u64; 71],
    middle: u64,
}

impl Bins {
    fn new(law: Law) -> Self {
        Bins { law, neg: [0; 51], pos: [0; 71], middle: 0 }
    }
    fn add(&mut self, x: f64) {
        match self.law {
            Law::Normal => {
                let a = x.abs();
                if a < 3.0 {
                    self.middle += 1;
                } else {
                    let j = (((a - 3.0) / 0.05) as usize).min(50);
                    if x < 0.0 { self.neg[j] += 1 } else { self.pos[j] += 1 }
                }
            }
            Law::Exponential => {
                if x < 5.0 {
                    self.middle += 1;
                } else {
                    self.pos[(((x - 5.0) / 0.1) as usize).min(70)] += 1;
                }
            }
        }
    }
    fn test(&self) -> (f64, f64, f64) {
        let (mut counts, mut probs) = (Vec::new(), Vec::new());
        match self.law {
            Law::Normal => {
                let edge = |j: usize| 3.0 + 0.05 * j as f64;
                let cell = |j: usize| if j == 50 { upper(edge(50)) } else { upper(edge(j)) - upper(edge(j + 1)) };
                for j in (0..=50).rev() {
                    counts.push(self.neg[j]);
                    probs.push(cell(j));
                }
                counts.push(self.middle);
                probs.push(1.0 - 2.0 * upper(3.0));
                for j in 0..=50 {
                    counts.push(self.pos[j]);
                    probs.push(cell(j));
                }
            }
            Law::Exponential => {
                let edge = |j: usize| 5.0 + 0.1 * j as f64;
                counts.push(self.middle);
                probs.push(-(-5.0f64).exp_m1());
                for j in 0..=70 {
                    counts.push(self.pos[j]);
                    probs.push(if j == 70 { (-edge(70)).exp() } else { (-edge(j)).exp() - (-edge(j + 1)).exp() });
                }
            }
        }
        chi_square_test(&counts, &probs)
    }
}

/// Runs every check on `draw`, which pushes one value (or a pair) per call and counts its
/// attempts; `theory` is the expected count per call.
fn check(law: Law, theory: f64, mut draw: impl FnMut(&mut Philox4x32x10, &mut u32, &mut Vec<f64>)) -> Checks {
    // Kolmogorov-Smirnov and moments on stream 0.
    let mut g = Philox4x32x10::stream(SEED, 0);
    let mut xs = Vec::with_capacity(N_KS + 1);
    let mut it = 0;
    while xs.len() < N_KS {
        draw(&mut g, &mut it, &mut xs);
    }
    xs.truncate(N_KS);
    let n = N_KS as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    let (mean_z, var_z) = match law {
        Law::Normal => (mean * n.sqrt(), (var - 1.0) / (2.0 / n).sqrt()),
        Law::Exponential => ((mean - 1.0) * n.sqrt(), (var - 1.0) / (8.0 / n).sqrt()),
    };
    let (_, ks_p) = match law {
        Law::Normal => ks_test(&mut xs, normal_cdf),
        Law::Exponential => ks_test(&mut xs, |x| -(-x).exp_m1()),
    };

    // Tails and attempts on stream 1.
    let mut g = Philox4x32x10::stream(SEED, 1);
    let mut bins = Bins::new(law);
    let (mut values, mut calls, mut s1, mut s2) = (0usize, 0u64, 0f64, 0f64);
    let mut buf = Vec::with_capacity(2);
    while values < N_TAIL {
        buf.clear();
        let mut it = 0;
        draw(&mut g, &mut it, &mut buf);
        for &x in &buf {
            bins.add(x);
        }
        values += buf.len();
        calls += 1;
        s1 += it as f64;
        s2 += (it as f64) * (it as f64);
    }
    let (_, tail_df, tail_p) = bins.test();
    let c = calls as f64;
    let iters_per_call = s1 / c;
    let sd = ((s2 / c - iters_per_call * iters_per_call) * c / (c - 1.0)).sqrt();
    let iters_z = (iters_per_call - theory) / (sd / c.sqrt());
    Checks { ks_p, mean_z, var_z, tail_p, tail_df, iters_per_call, iters_theory: theory, iters_z }
}

fn report(name: &str, c: &Checks) {
    println!(
        "{name}: KS p = {:.3}, mean z = {:+.2}, variance z = {:+.2}, tail chi-square p = {:.3} (df {}), \
         attempts {:.6} per call (theory {:.6}, z = {:+.2})",
        c.ks_p, c.mean_z, c.var_z, c.tail_p, c.tail_df, c.iters_per_call, c.iters_theory, c.iters_z
    );
}

fn polar_theory() -> f64 {
    4.0 / PI
}

fn normal_theory() -> f64 {
    let (r, v) = (NORMAL.r, NORMAL.v);
    let tail = half_normal_area() * erfc(r / SQRT_2);
    let p = r * (0.5 * r * r).exp() * tail;
    128.0 * v / half_normal_area() + erfc(r / SQRT_2) * (1.0 / p - 1.0)
}

fn exponential_theory() -> f64 {
    256.0 * EXPONENTIAL.v / -(-EXPONENTIAL.r).exp_m1()
}

fn polar_checks<A: Arith>() -> Checks {
    check(Law::Normal, polar_theory(), |g, it, out| {
        let (x, y) = polar::<A, _>(g, it);
        out.push(x.to_f64());
        out.push(y.to_f64());
    })
}

fn normal_checks<A: Zig, const SKIP_WEDGE: bool, const SKIP_TAIL_TEST: bool>() -> Checks {
    check(Law::Normal, normal_theory(), |g, it, out| {
        out.push(ziggurat_normal_variant::<A, _, SKIP_WEDGE, SKIP_TAIL_TEST>(g, it).to_f64())
    })
}

fn exponential_checks<A: Zig, const SKIP_WEDGE: bool>() -> Checks {
    check(Law::Exponential, exponential_theory(), |g, it, out| {
        out.push(ziggurat_exponential_variant::<A, _, SKIP_WEDGE>(g, it).to_f64())
    })
}

#[test]
fn polar_f32_exact() {
    let c = polar_checks::<Single<Exact>>();
    report("polar f32 exact", &c);
    assert!(c.all_ok(), "{c:?}");
}

#[test]
fn polar_f32_fast() {
    let c = polar_checks::<Single<Fast>>();
    report("polar f32 fast", &c);
    assert!(c.all_ok(), "{c:?}");
}

#[test]
fn polar_f64() {
    let c = polar_checks::<Double>();
    report("polar f64", &c);
    assert!(c.all_ok(), "{c:?}");
}

#[test]
fn ziggurat_normal_f32_exact() {
    let c = normal_checks::<Single<Exact>, false, false>();
    report("ziggurat normal f32 exact", &c);
    assert!(c.all_ok(), "{c:?}");
}

#[test]
fn ziggurat_normal_f32_fast() {
    let c = normal_checks::<Single<Fast>, false, false>();
    report("ziggurat normal f32 fast", &c);
    assert!(c.all_ok(), "{c:?}");
}

#[test]
fn ziggurat_normal_f64() {
    let c = normal_checks::<Double, false, false>();
    report("ziggurat normal f64", &c);
    assert!(c.all_ok(), "{c:?}");
}

#[test]
fn ziggurat_exponential_f32_exact() {
    let c = exponential_checks::<Single<Exact>, false>();
    report("ziggurat exponential f32 exact", &c);
    assert!(c.all_ok(), "{c:?}");
}

#[test]
fn ziggurat_exponential_f32_fast() {
    let c = exponential_checks::<Single<Fast>, false>();
    report("ziggurat exponential f32 fast", &c);
    assert!(c.all_ok(), "{c:?}");
}

#[test]
fn ziggurat_exponential_f64() {
    let c = exponential_checks::<Double, false>();
    report("ziggurat exponential f64", &c);
    assert!(c.all_ok(), "{c:?}");
}

#[test]
fn the_public_samplers_are_the_checked_variants() {
    let (mut a, mut b) = (Philox4x32x10::stream(SEED, 3), Philox4x32x10::stream(SEED, 3));
    let (mut ia, mut ib) = (0, 0);
    for _ in 0..10_000 {
        let x = ziggurat::ziggurat_normal::<Single<Exact>, _>(&mut a, &mut ia);
        let y = ziggurat_normal_variant::<Single<Exact>, _, false, false>(&mut b, &mut ib);
        assert_eq!(x.to_bits(), y.to_bits());
        let x = ziggurat::ziggurat_exponential::<Double, _>(&mut a, &mut ia);
        let y = ziggurat_exponential_variant::<Double, _, false>(&mut b, &mut ib);
        assert_eq!(x.to_bits(), y.to_bits());
    }
    assert_eq!(ia, ib);
}

#[test]
fn negative_control_normal_without_wedge_test() {
    let c = normal_checks::<Single<Exact>, true, false>();
    report("NEGATIVE normal, wedge test skipped", &c);
    // The surplus is symmetric and spread over every layer: Kolmogorov-Smirnov misses it, the
    // variance, the tails and the attempt count do not.
    assert!(!c.moments_ok() && !c.tail_ok() && !c.iters_ok(), "{c:?}");
}

#[test]
fn negative_control_normal_without_tail_test() {
    let c = normal_checks::<Double, false, true>();
    report("NEGATIVE normal, tail test skipped", &c);
    assert!(!c.tail_ok(), "{c:?}");
}

#[test]
fn negative_control_exponential_without_wedge_test() {
    let c = exponential_checks::<Single<Exact>, true>();
    report("NEGATIVE exponential, wedge test skipped", &c);
    assert!(!c.ks_ok() && !c.iters_ok(), "{c:?}");
}
