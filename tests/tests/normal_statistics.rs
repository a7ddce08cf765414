//! Statistical tests of the Box-Muller normals exactly as users get them: through
//! `warpmc::generate::generate_words` with `FillKind::Normals(mode)` on the CPU backend
//! (2 workers), for `Mode::Exact` and `Mode::Fast`, from one stream and from 1024 interleaved
//! streams (so that problems between streams would show), with fixed seeds. Each data set holds
//! `n = 2^22` values.
//!
//! # The checks and their thresholds
//!
//! Every threshold is derived from the distribution of its statistic under the null hypothesis
//! "the values are independent standard normals", at about 5 standard errors (two-sided
//! probability of a false alarm about 6e-7 per check), except the Kolmogorov-Smirnov test:
//!
//! | check | statistic | threshold |
//! |---|---|---|
//! | finite | values that are NaN or infinite | 0 |
//! | mean | `m = Σx/n`; `SE = 1/√n` | `|m| <= 5/√n` = 2.44e-3 |
//! | variance | `v = Σ(x-m)²/n`; `SE = √(2/n)` (`(μ4 - σ⁴)/n`) | `|v - 1| <= 5√(2/n)` = 3.45e-3 |
//! | skewness | `g1 = m3/v^1.5`; `SE = √(6/n)` | `|g1| <= 5√(6/n)` = 5.98e-3 |
//! | excess kurtosis | `g2 = m4/v² - 3`; `SE = √(24/n)` | `|g2| <= 5√(24/n)` = 1.20e-2 |
//! | Kolmogorov-Smirnov | `D √n` against Φ | `< 1.95` (Kolmogorov distribution: p ≈ 0.001) |
//! | tail \|x\| > 3 | count `c`, `p = 2(1 - Φ(3))` = 2.70e-3 | `|c - np| <= 5√(np(1-p))` (11324 ± 532) |
//! | tail \|x\| > 4 | count `c`, `p = 2(1 - Φ(4))` = 6.33e-5 | `|c - np| <= 5√(np(1-p))` (265.7 ± 81.5) |
//! | max \|x\| | largest `|x|` | `<= sqrt(-2 ln 2^-33)` = 6.7637 (by construction, `u0 >= 2^-33`) |
//! | max pair radius | `R = max √(x₀² + x₁²)` over the `n/2` pairs | `R_lo <= R <= 6.7637`, `P(R < R_lo) = 2.9e-7` |
//! | pair correlation | `ρ(x₀, x₁)` within pairs; `SE = 1/√(n/2)` | `|ρ| <= 5/√(n/2)` = 3.45e-3 |
//! | lag-k correlation | `ρ(x_i, x_{i+k})`, k = 2, 4, 4096; `SE = 1/√(n-k)` | `|ρ| <= 5/√(n-k)` |
//!
//! The max pair radius uses the exact extreme-value law: under the null hypothesis
//! `x₀² + x₁² ~ χ²₂`, so `P(R < t) = (1 - e^{-t²/2})^{n/2}`; `R_lo` = 4.867 for `n = 2^22` makes
//! that probability 2.9e-7, the one-sided 5-sigma level. With 1024 streams, lag 4 compares
//! adjacent streams (groups of four values of one stream are interleaved) and lag 4096 compares
//! a stream with its own next group.
//!
//! # Negative controls
//!
//! The same check functions are applied to deliberately broken transforms of the same uniform
//! words (fetched with `FillKind::Words` from the same streams, so the library's normals are
//! reproduced bit for bit by [`box_muller`] first). Each must be caught:
//!
//! - (a) the naive uniform `u0 = z * 2^-32`, which maps `z = 0` to `u0 = 0` and `ln 0 = -inf`:
//!   one pair in 2^32, far too rare for a sample of 2^21 pairs (the sample checks pass, as they
//!   should: the distribution is otherwise the same to 2^-33), so it is caught by
//!   [`edge_check`], which evaluates the transform at the extreme words (and, when the word 0 is
//!   planted in the sample, by the `finite` check);
//! - (b) outputs scaled by 1.01 (variance off by 2%): caught by the variance (and by KS);
//! - (c) `u0` from the top 16 bits of the word only, `(z >> 16 + 1/2) 2^-16`: the radius is
//!   truncated at `sqrt(-2 ln 2^-17)` = 4.855. The tail fractions cannot see this at `n = 2^22`
//!   (beyond |x| > 4 the count drops by about 10%, under 2 standard errors) and neither can max
//!   |x| (a single |x| beyond 4.855 is expected only about 5 times in 2^22), but the pair radius
//!   can: about 16 of the 2^21 pairs are expected beyond 4.855, so `R < R_lo` = 4.867 has
//!   probability 2.9e-7 for correct normals and is certain for the truncated transform;
//! - (d) `sin` used for both outputs of a pair: the marginals are exactly normal (every check
//!   on single values passes), only the pair correlation catches it (ρ = 1);
//! - (e) all 1024 interleaved streams started from the same state: caught by the lag-4
//!   (adjacent streams) correlation.

use rayon::prelude::*;
use warpmc::backend::{FillKind, StreamInit};
use warpmc::generate::generate_words;
use warpmc::generators::GeneratorKind;
use warpmc::pricing::Mode;
use warpmc_kernels::math::{ln_f32, sincos_turn};
use warpmc_kernels::normal::box_muller;
use warpmc_kernels::{Exact, Fast};
use warpmc_tests::{cpu, normal_cdf};

/// Values per data set.
const N: usize = 1 << 22;
/// Standard errors at which a moment, tail or correlation check fails.
const Z: f64 = 5.0;
/// `D √n` limit of the Kolmogorov-Smirnov test (p ≈ 0.001).
const KS_LIMIT: f64 = 1.95;
/// One-sided probability of the standard normal beyond 5: the false-alarm rate of the lower
/// bound on the max pair radius.
const P_5_SIGMA: f64 = 2.866_515_718_791_939e-7;

/// The largest radius (and so the largest |x|) Box-Muller can produce: `u0 >= 2^-33`.
fn r_max() -> f64 {
    (-2.0 * (2.0f64).powi(-33).ln()).sqrt()
}

/// `r_max` with room for the `f32` roundings of ln, sqrt and the product (a few ulps).
fn r_max_f32() -> f64 {
    r_max() * (1.0 + 4.0 * f32::EPSILON as f64)
}

// ---------------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------------

fn seeded(seed: u64, streams: u64) -> StreamInit {
    StreamInit::Seeded { generator: GeneratorKind::HybridTaus, seed, first: 0, count: streams }
}

/// The library's normals, as `f32`.
fn library_normals(mode: Mode, init: &StreamInit, n: usize) -> Vec<f32> {
    let words = generate_words(&*cpu(2), FillKind::Normals(mode), init, n).expect("normals");
    assert_eq!(words.len(), n);
    words.into_iter().map(f32::from_bits).collect()
}

/// The uniform words the same streams produce, in the same layout.
fn library_words(init: &StreamInit, n: usize) -> Vec<u32> {
    let words = generate_words(&*cpu(2), FillKind::Words, init, n).expect("words");
    assert_eq!(words.len(), n);
    words
}

/// A pair transform applied to consecutive word pairs: in the fill layout every group of four
/// words of one stream becomes two pairs in place, so this reproduces the library's normals
/// when `f` is the library's transform.
fn transform(words: &[u32], f: impl Fn(u32, u32) -> (f32, f32) + Sync) -> Vec<f32> {
    words
        .par_chunks(2)
        .flat_map_iter(|w| {
            let (a, b) = f(w[0], w[1]);
            [a, b]
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

/// One check's outcome.
#[derive(Debug)]
struct Check {
    name: &'static str,
    value: f64,
    limit: String,
    pass: bool,
}

/// All checks of one data set.
struct Report {
    label: String,
    checks: Vec<Check>,
}

impl Report {
    fn print(&self) {
        eprintln!("== {} ==", self.label);
        for c in &self.checks {
            eprintln!("  {:<4} {:<34} {:>14.6e}   {}", if c.pass { "ok" } else { "FAIL" }, c.name, c.value, c.limit);
        }
    }

    fn failed(&self) -> Vec<&'static str> {
        self.checks.iter().filter(|c| !c.pass).map(|c| c.name).collect()
    }

    fn assert_all_pass(&self) {
        self.print();
        assert!(self.failed().is_empty(), "{}: failed {:?}", self.label, self.failed());
    }

    /// Assert that `name` is among the failed checks (the control is detected by it).
    fn assert_detected_by(&self, name: &str) {
        assert!(self.checks.iter().any(|c| c.name == name), "no check named {name}");
        assert!(self.failed().contains(&name), "{}: not detected by `{name}`; failed: {:?}", self.label, self.failed());
    }
}

/// `|value| <= limit` (false for NaN).
fn within(name: &'static str, value: f64, limit: f64, what: &str) -> Check {
    Check { name, value, limit: format!("|.| <= {limit:.4e} ({what})"), pass: value.abs() <= limit }
}

/// Kolmogorov-Smirnov statistic `D` of `x` against the standard normal CDF (NaN if any value
/// is not finite).
fn ks_statistic(x: &[f32]) -> f64 {
    if x.par_iter().any(|v| !v.is_finite()) {
        return f64::NAN;
    }
    let mut v: Vec<f64> = x.par_iter().map(|&a| a as f64).collect();
    v.par_sort_unstable_by(f64::total_cmp);
    let n = v.len() as f64;
    // With ties the larger of the two one-sided gaps is still exact: at the last of a run of
    // equal values (i + 1)/n is the empirical CDF, at the first i/n is its left limit.
    v.par_iter()
        .enumerate()
        .map(|(i, &a)| {
            let f = normal_cdf(a);
            (f - i as f64 / n).max((i + 1) as f64 / n - f)
        })
        .reduce(|| 0.0, f64::max)
}

/// Correlation of `x[i]` and `x[i + lag]` over the whole sequence, with the sample mean and
/// variance of the whole sequence.
fn lag_correlation(x: &[f32], mean: f64, var: f64, lag: usize) -> f64 {
    let m = x.len() - lag;
    let s: f64 = (0..m).into_par_iter().map(|i| (x[i] as f64 - mean) * (x[i + lag] as f64 - mean)).sum();
    s / (m as f64 * var)
}

/// Run every check on `x` (pairs are `(x[2i], x[2i + 1])`).
fn check_normals(label: impl Into<String>, x: &[f32]) -> Report {
    let n = x.len();
    assert!(n.is_multiple_of(2) && n > 8192);
    let nf = n as f64;
    let mut checks = Vec::new();

    let bad = x.par_iter().filter(|v| !v.is_finite()).count();
    checks.push(Check { name: "finite", value: bad as f64, limit: "== 0 non-finite".into(), pass: bad == 0 });

    // Moments in f64 (two passes: the mean, then central moments).
    let mean = x.par_iter().map(|&v| v as f64).sum::<f64>() / nf;
    let (m2, m3, m4) = x
        .par_iter()
        .map(|&v| {
            let d = v as f64 - mean;
            let d2 = d * d;
            (d2, d2 * d, d2 * d2)
        })
        .reduce(|| (0.0, 0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
    let (var, m3, m4) = (m2 / nf, m3 / nf, m4 / nf);
    let skew = m3 / var.powf(1.5);
    let kurt = m4 / (var * var) - 3.0;
    checks.push(within("mean", mean, Z / nf.sqrt(), "5/sqrt(n)"));
    checks.push(within("variance - 1", var - 1.0, Z * (2.0 / nf).sqrt(), "5 sqrt(2/n)"));
    checks.push(within("skewness", skew, Z * (6.0 / nf).sqrt(), "5 sqrt(6/n)"));
    checks.push(within("excess kurtosis", kurt, Z * (24.0 / nf).sqrt(), "5 sqrt(24/n)"));

    let ks = ks_statistic(x) * nf.sqrt();
    checks.push(Check {
        name: "KS D sqrt(n)",
        value: ks,
        limit: format!("< {KS_LIMIT} (p = 0.001)"),
        pass: ks < KS_LIMIT,
    });

    for (name, t) in [("tail |x| > 3 (count - np)", 3.0), ("tail |x| > 4 (count - np)", 4.0)] {
        let count = x.par_iter().filter(|&&v| (v as f64).abs() > t).count() as f64;
        let p = 2.0 * normal_cdf(-t);
        let se = (nf * p * (1.0 - p)).sqrt();
        let mut c = within(name, count - nf * p, Z * se, "5 binomial SE");
        c.limit = format!("{} around np = {:.1}", c.limit, nf * p);
        checks.push(c);
    }

    let max_abs = x.par_iter().map(|&v| (v as f64).abs()).reduce(|| 0.0, |a, b| if a >= b { a } else { b });
    checks.push(Check {
        name: "max |x|",
        value: max_abs,
        limit: format!("<= {:.6} (sqrt(-2 ln 2^-33))", r_max()),
        pass: max_abs <= r_max_f32(),
    });

    // Largest pair radius: under the null hypothesis P(R < t) = (1 - e^(-t^2/2))^(n/2).
    let pairs = (n / 2) as f64;
    let r_lo = (-2.0 * (-(P_5_SIGMA.ln() / pairs).exp_m1()).ln()).sqrt();
    let r = x.par_chunks(2).map(|p| (p[0] as f64).hypot(p[1] as f64)).reduce(|| 0.0, |a, b| if a >= b { a } else { b });
    checks.push(Check {
        name: "max pair radius",
        value: r,
        limit: format!("in [{r_lo:.4}, {:.4}] (P(R < lo) = {P_5_SIGMA:.2e})", r_max()),
        pass: r >= r_lo && r <= r_max_f32(),
    });

    let cov: f64 = x.par_chunks(2).map(|p| (p[0] as f64 - mean) * (p[1] as f64 - mean)).sum();
    checks.push(within("pair correlation rho(x0, x1)", cov / (pairs * var), Z / pairs.sqrt(), "5/sqrt(n/2)"));
    for (name, lag) in [("lag-2 correlation", 2usize), ("lag-4 correlation", 4), ("lag-4096 correlation", 4096)] {
        let rho = lag_correlation(x, mean, var, lag);
        checks.push(within(name, rho, Z / ((n - lag) as f64).sqrt(), "5/sqrt(n-k)"));
    }

    Report { label: label.into(), checks }
}

/// Evaluate a pair transform at the extreme words (the smallest and largest `z0`, the quadrant
/// and octant angles): every output must be finite and within the construction bound.
fn edge_check(f: impl Fn(u32, u32) -> (f32, f32)) -> Result<(), String> {
    let z0s = [
        0u32,
        1,
        2,
        127,
        128,
        255,
        256,
        1 << 16,
        1 << 24,
        1 << 31,
        u32::MAX - 128,
        u32::MAX - 127,
        u32::MAX - 1,
        u32::MAX,
    ];
    let z1s = [0u32, 1, 1 << 29, 1 << 30, 3 << 29, 1 << 31, 3 << 30, 7 << 29, u32::MAX];
    for z0 in z0s {
        for z1 in z1s {
            let (a, b) = f(z0, z1);
            if !(a.is_finite() && b.is_finite()) {
                return Err(format!("transform({z0:#x}, {z1:#x}) = ({a}, {b}): not finite"));
            }
            if (a as f64).abs().max((b as f64).abs()) > r_max_f32() {
                return Err(format!("transform({z0:#x}, {z1:#x}) = ({a}, {b}): beyond {}", r_max()));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The library's normals
// ---------------------------------------------------------------------------------------------

const SEED_EXACT_1: u64 = 0x5745_4d43_0001;
const SEED_FAST_1: u64 = 0x5745_4d43_0002;
const SEED_EXACT_1024: u64 = 0x5745_4d43_0003;
const SEED_FAST_1024: u64 = 0x5745_4d43_0004;

/// The library's normals for `(mode, seed, streams)`, after checking that they are exactly
/// `box_muller` of the same streams' words (so the controls below transform the same input).
fn checked_library_normals(mode: Mode, seed: u64, streams: u64) -> Vec<f32> {
    let init = seeded(seed, streams);
    let x = library_normals(mode, &init, N);
    let words = library_words(&init, N);
    let again = match mode {
        Mode::Exact => transform(&words, box_muller::<Exact>),
        Mode::Fast => transform(&words, box_muller::<Fast>),
    };
    let mismatch = x.iter().zip(&again).position(|(a, b)| a.to_bits() != b.to_bits());
    assert_eq!(mismatch, None, "{mode:?} normals differ from box_muller of the words");
    x
}

#[test]
fn exact_one_stream_passes_all_checks() {
    let x = checked_library_normals(Mode::Exact, SEED_EXACT_1, 1);
    check_normals(format!("exact, 1 stream, seed {SEED_EXACT_1:#x}"), &x).assert_all_pass();
}

#[test]
fn fast_one_stream_passes_all_checks() {
    let x = checked_library_normals(Mode::Fast, SEED_FAST_1, 1);
    check_normals(format!("fast, 1 stream, seed {SEED_FAST_1:#x}"), &x).assert_all_pass();
}

#[test]
fn exact_1024_interleaved_streams_pass_all_checks() {
    let x = checked_library_normals(Mode::Exact, SEED_EXACT_1024, 1024);
    check_normals(format!("exact, 1024 streams, seed {SEED_EXACT_1024:#x}"), &x).assert_all_pass();
}

#[test]
fn fast_1024_interleaved_streams_pass_all_checks() {
    let x = checked_library_normals(Mode::Fast, SEED_FAST_1024, 1024);
    check_normals(format!("fast, 1024 streams, seed {SEED_FAST_1024:#x}"), &x).assert_all_pass();
}

#[test]
fn library_transforms_pass_the_edge_check() {
    edge_check(box_muller::<Exact>).expect("exact");
    edge_check(box_muller::<Fast>).expect("fast");
}

// ---------------------------------------------------------------------------------------------
// Negative controls: the same checks must catch deliberately broken transforms
// ---------------------------------------------------------------------------------------------

/// The uniform words of the exact one-stream data set.
fn control_words() -> Vec<u32> {
    library_words(&seeded(SEED_EXACT_1, 1), N)
}

/// Box-Muller with a caller-supplied `u0`, otherwise the library's exact math.
fn bm_with_u0(u0: f32, z1: u32) -> (f32, f32) {
    let r = (-2.0 * ln_f32(u0)).sqrt();
    let (s, c) = sincos_turn(z1);
    (r * s, r * c)
}

/// (a) The naive uniform `z * 2^-32` (can be exactly 0).
fn naive_uniform(z0: u32, z1: u32) -> (f32, f32) {
    bm_with_u0(z0 as f32 * (1.0 / 4_294_967_296.0), z1)
}

#[test]
fn control_a_naive_uniform_is_caught_by_the_edge_check() {
    let err = edge_check(naive_uniform).expect_err("the naive uniform must fail the edge check");
    eprintln!("control (a) naive uniform: edge check: {err}");
    assert!(err.starts_with("transform(0x0,"), "{err}");
    // Its samples pass the statistical checks: the defect is one word in 2^32.
    let words = control_words();
    assert!(!words.chunks(2).any(|p| p[0] == 0), "this sample happens to contain z0 = 0");
    let report = check_normals(
        "control (a): naive uniform z * 2^-32 (expected to pass: one word in 2^32)",
        &transform(&words, naive_uniform),
    );
    report.print();
    // Were the word 0 drawn, the sample checks would see the non-finite output.
    let mut words = words;
    words[0] = 0;
    let report =
        check_normals("control (a'): naive uniform with z0 = 0 in the sample", &transform(&words, naive_uniform));
    report.print();
    report.assert_detected_by("finite");
}

#[test]
fn control_b_variance_one_percent_high_is_caught() {
    let x = transform(&control_words(), |a, b| {
        let (n0, n1) = box_muller::<Exact>(a, b);
        (n0 * 1.01, n1 * 1.01)
    });
    let report = check_normals("control (b): outputs scaled by 1.01", &x);
    report.print();
    report.assert_detected_by("variance - 1");
    report.assert_detected_by("KS D sqrt(n)");
}

/// (c) `u0` from the top 16 bits only: `(z0 >> 16) 2^-16 + 2^-17`, so `r <= sqrt(-2 ln 2^-17)`.
fn u0_16_bits(z0: u32, z1: u32) -> (f32, f32) {
    bm_with_u0((z0 >> 16) as f32 * (1.0 / 65_536.0) + (1.0 / 131_072.0), z1)
}

#[test]
fn control_c_16_bit_uniform_is_caught_by_the_max_pair_radius() {
    let x = transform(&control_words(), u0_16_bits);
    let report = check_normals("control (c): u0 from 16 bits (radius truncated at 4.855)", &x);
    report.print();
    report.assert_detected_by("max pair radius");
    // The radius bound itself, for the record: no pair of the truncated transform gets past it.
    let rmax16 = (-2.0 * (2.0f64).powi(-17).ln()).sqrt();
    let r = report.checks.iter().find(|c| c.name == "max pair radius").unwrap().value;
    assert!(r <= rmax16 * (1.0 + 1e-6), "{r} > {rmax16}");
}

#[test]
fn control_d_correlated_pairs_are_caught_by_the_pair_correlation() {
    let x = transform(&control_words(), |a, b| {
        let (n0, _) = box_muller::<Exact>(a, b);
        (n0, n0) // sin for both outputs
    });
    let report = check_normals("control (d): r sin for both outputs of a pair", &x);
    report.print();
    report.assert_detected_by("pair correlation rho(x0, x1)");
}

#[test]
fn control_e_identical_streams_are_caught_by_the_lag_4_correlation() {
    // 1024 interleaved streams that all start from stream 0's state: the layout puts the same
    // group of four values in 1024 adjacent slots.
    const STREAMS: usize = 1024;
    let own = library_words(&seeded(SEED_EXACT_1024, 1), N / STREAMS);
    let words: Vec<u32> = (0..N)
        .map(|i| {
            let row = i / 4 / STREAMS;
            own[4 * row + i % 4]
        })
        .collect();
    let x = transform(&words, box_muller::<Exact>);
    let report = check_normals("control (e): 1024 interleaved streams with the same state", &x);
    report.print();
    report.assert_detected_by("lag-4 correlation");
}
