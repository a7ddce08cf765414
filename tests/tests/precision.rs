//! Single precision must not bias prices: the kernels' `f32` paths against an `f64`
//! re-implementation of the same paths (the same generator words and the same normals, every
//! other operation in `f64`), at the small volatilities and long step counts where the chapter's
//! `a *= exp(mu + sig z)` in `f32` was biased by 9% (vols 1e-4, 1000 steps) and 40% (vols 0.01,
//! 10^6 steps).
//!
//! The difference between the two means is a deterministic property of the paths, not a
//! fluctuation: the same paths are compared. It is asserted to be a small fraction of the
//! price's standard error, and each path's difference to be within a few `f32` ulps of the spot.

use rayon::prelude::*;
use warpmc::pricing::{AsianBasket, Mode, ROUNDING_BOUND};
use warpmc_kernels::asian::simulate_path;
use warpmc_kernels::normal::{BoxMuller, NormalPairs};
use warpmc_kernels::rng::HybridTaus;
use warpmc_kernels::rng::streams::hybrid_taus_stream;
use warpmc_kernels::{Exact, Fast, MathMode};

/// Path `k` of `seed` in `f64`, from the option's parameters (not the kernel's coefficients):
/// `(payoff, unfloored)` in currency units, undiscounted.
fn reference_path<M: MathMode>(o: &AsianBasket, steps: u32, seed: u64, k: u64) -> (f64, f64) {
    let dt = o.maturity / steps as f64;
    let sq = dt.sqrt();
    let (mu_a, mu_b) = ((o.rate - 0.5 * o.vol_a * o.vol_a) * dt, (o.rate - 0.5 * o.vol_b * o.vol_b) * dt);
    let (s_aa, s_ab, s_bb) = (o.vol_a * sq, o.corr * o.vol_b * sq, o.vol_b * (1.0 - o.corr * o.corr).sqrt() * sq);
    let mut normals = BoxMuller::<_, M>::new(hybrid_taus_stream(seed, k));
    let (mut la, mut lb) = (o.spot_a.ln(), o.spot_b.ln());
    let (mut sum, mut s) = (0.0, 0.0);
    for _ in 0..steps {
        let (ra, rb) = normals.next_pair();
        let (ra, rb) = (ra as f64, rb as f64);
        la += mu_a + s_aa * ra;
        lb += mu_b + s_ab * ra + s_bb * rb;
        s = la.exp().max(lb.exp());
        sum += s;
    }
    let unfloored = sum / steps as f64 - s;
    (unfloored.max(0.0), unfloored)
}

struct Comparison {
    /// Mean payoff of the kernel's paths and of the reference's.
    kernel: f64,
    reference: f64,
    /// Standard error of the price (reference sample).
    std_error: f64,
    /// Mean of the unfloored value, kernel and reference.
    kernel_check: f64,
    reference_check: f64,
    /// Largest per-path difference of the unfloored value.
    max_path_diff: f64,
    /// The kernels' unit: `max_i E[s_i]` in currency.
    unit: f64,
}

fn compare<M: MathMode>(o: &AsianBasket, steps: u32, paths: u64, seed: u64) -> Comparison {
    let kernel = o.kernel_job(steps);
    let (p, scale) = (kernel.steps, kernel.unit);
    let rows: Vec<[f64; 4]> = (0..paths)
        .into_par_iter()
        .map(|k| {
            let (payoff, unfloored) = simulate_path::<HybridTaus, M>(&p, seed, k);
            let (ref_payoff, ref_unfloored) = reference_path::<M>(o, steps, seed, k);
            [payoff * scale, ref_payoff, unfloored * scale, ref_unfloored]
        })
        .collect();
    let n = paths as f64;
    let mean = |i: usize| rows.iter().map(|r| r[i]).sum::<f64>() / n;
    let reference = mean(1);
    let var = rows.iter().map(|r| (r[1] - reference).powi(2)).sum::<f64>() / (n - 1.0);
    Comparison {
        kernel: mean(0),
        reference,
        std_error: (var / n).sqrt(),
        kernel_check: mean(2),
        reference_check: mean(3),
        max_path_diff: rows.iter().map(|r| (r[2] - r[3]).abs()).fold(0.0, f64::max),
        unit: scale,
    }
}

/// Largest bias of the mean payoff, in standard errors of the price.
const MAX_BIAS_IN_STD_ERRORS: f64 = 0.05;

fn check_case(label: &str, o: AsianBasket, steps: u32, paths: u64, mode: Mode) {
    let c = match mode {
        Mode::Exact => compare::<Exact>(&o, steps, paths, 11),
        Mode::Fast => compare::<Fast>(&o, steps, paths, 11),
    };
    let bias = c.kernel - c.reference;
    let check_bias = (c.kernel_check - c.reference_check) / c.unit;
    eprintln!(
        "{label} {mode:?}: kernel {:.9e} vs f64 {:.9e}: bias {bias:+.3e} = {:+.4} std errors ({:.3e} of the price); \
         check quantity bias {check_bias:+.3e} of the unit; largest path difference 2^{:.1} of the unit",
        c.kernel,
        c.reference,
        bias / c.std_error,
        bias / c.reference,
        (c.max_path_diff / c.unit).log2()
    );
    assert!(c.std_error > 0.0 && c.reference > 0.0, "{label}: a degenerate test case");
    assert!(
        bias.abs() < MAX_BIAS_IN_STD_ERRORS * c.std_error,
        "{label} {mode:?}: the f32 paths are biased by {:.3} standard errors",
        bias / c.std_error
    );
    // Per path: within the rounding bound the reports state (a few f32 ulps of the basket's
    // level, not growing with the steps).
    assert!(
        c.max_path_diff < ROUNDING_BOUND * c.unit,
        "{label} {mode:?}: a path differs by {:e} of the unit",
        c.max_path_diff / c.unit
    );
}

fn small_vol(vol: f64) -> AsianBasket {
    AsianBasket { vol_a: vol, vol_b: vol, rate: 0.0, ..Default::default() }
}

#[test]
fn vols_1e_4_with_1000_steps_agree_with_f64() {
    for mode in [Mode::Exact, Mode::Fast] {
        check_case("vols 1e-4, 1000 steps", small_vol(1e-4), 1000, 4096, mode);
    }
}

#[test]
fn vols_0_01_with_100000_steps_agree_with_f64() {
    for mode in [Mode::Exact, Mode::Fast] {
        check_case("vols 0.01, 10^5 steps", small_vol(0.01), 100_000, 384, mode);
    }
}

/// Unequal spots and a rate: the smaller asset starts at a log-price far from 0 (its `f32`
/// grid is coarser) and the drift is not negligible.
#[test]
fn unequal_spots_with_a_rate_agree_with_f64() {
    let o = AsianBasket { spot_a: 37.0, spot_b: 41.0, vol_a: 1e-3, vol_b: 2e-3, rate: -0.03, ..Default::default() };
    for mode in [Mode::Exact, Mode::Fast] {
        check_case("spots 37/41, vols 1e-3/2e-3, rate -0.03, 5000 steps", o, 5000, 2048, mode);
    }
}

/// Negative control: the chapter's form of the path, `a *= exp(mu + sig z)` in `f32` (what
/// warpmc did before), fails the same comparison at vols 1e-4 and 1000 steps.
#[test]
fn the_compounding_f32_path_fails_the_comparison() {
    let o = small_vol(1e-4);
    let (steps, paths, seed) = (1000u32, 4096u64, 11u64);
    let p = o.kernel_job(steps).steps;
    let compounding = |k: u64| {
        let mut normals = BoxMuller::<_, Exact>::new(hybrid_taus_stream(seed, k));
        let (mut a, mut b, mut s, mut sum) = (1.0f32, 1.0f32, 0.0f32, 0.0f64);
        for _ in 0..steps {
            let (ra, rb) = normals.next_pair();
            a *= Exact::exp(p.mu_a + ra * p.sig_aa);
            b *= Exact::exp(p.mu_b + ra * p.sig_ab + rb * p.sig_bb);
            s = a.max(b);
            sum += s as f64;
        }
        (sum / steps as f64 - s as f64).max(0.0) * o.scale()
    };
    let rows: Vec<(f64, f64)> =
        (0..paths).into_par_iter().map(|k| (compounding(k), reference_path::<Exact>(&o, steps, seed, k).0)).collect();
    let n = paths as f64;
    let (old, reference) = (rows.iter().map(|r| r.0).sum::<f64>() / n, rows.iter().map(|r| r.1).sum::<f64>() / n);
    let se = (rows.iter().map(|r| (r.1 - reference).powi(2)).sum::<f64>() / (n - 1.0) / n).sqrt();
    eprintln!("compounding f32 path: {old:.6e} vs f64 {reference:.6e}: {:+.2} std errors", (old - reference) / se);
    assert!((old - reference).abs() > 20.0 * MAX_BIAS_IN_STD_ERRORS * se);
}
