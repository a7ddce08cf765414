//! The Asian basket on the CPU backend: reproducibility, validation against closed forms, and
//! clear errors.

use warpmc::Error;
use warpmc::pricing::{AsianBasket, Mode, PricingJob, price_asian_basket, unfloored_expectation};
use warpmc_kernels::Exact;
use warpmc_kernels::asian::{path, simulate_path};
use warpmc_kernels::normal::{BoxMuller, box_muller};
use warpmc_kernels::rng::Uniform32;
use warpmc_kernels::rng::streams::hybrid_taus_stream;
use warpmc_tests::cpu;

fn job(option: AsianBasket, paths: u64, steps: u32, seed: u64, mode: Mode) -> PricingJob {
    PricingJob { option, steps, paths, seed, mode }
}

#[test]
fn thread_count_does_not_change_the_price() {
    let j = job(AsianBasket::default(), 20_011, 64, 5, Mode::Exact);
    let p = j.option.kernel_steps(j.steps);
    let one = cpu(1).asian_basket(&p, j.seed, 0..j.paths, Mode::Exact).unwrap();
    for threads in [2, 7] {
        let m = cpu(threads).asian_basket(&p, j.seed, 0..j.paths, Mode::Exact).unwrap();
        assert_eq!(m, one, "{threads} threads");
    }
    let a = price_asian_basket(&*cpu(1), &j).unwrap();
    let b = price_asian_basket(&*cpu(7), &j).unwrap();
    assert_eq!(a.price.to_bits(), b.price.to_bits());
    assert_eq!(a.std_error.to_bits(), b.std_error.to_bits());
}

#[test]
fn fast_mode_is_also_independent_of_thread_count_on_the_cpu() {
    let j = job(AsianBasket::default(), 5_003, 32, 6, Mode::Fast);
    let p = j.option.kernel_steps(j.steps);
    let a = cpu(1).asian_basket(&p, j.seed, 0..j.paths, Mode::Fast).unwrap();
    let b = cpu(7).asian_basket(&p, j.seed, 0..j.paths, Mode::Fast).unwrap();
    assert_eq!(a, b);
}

#[test]
fn splitting_the_path_range_does_not_change_the_sums() {
    let p = AsianBasket::default().kernel_steps(16);
    let exec = cpu(2);
    let whole = exec.asian_basket(&p, 9, 0..10_000, Mode::Exact).unwrap();
    let mut parts = exec.asian_basket(&p, 9, 0..3_333, Mode::Exact).unwrap();
    parts.merge(&exec.asian_basket(&p, 9, 3_333..10_000, Mode::Exact).unwrap());
    assert_eq!(parts, whole);
}

/// Value stability: the exact-mode price of a small job, pinned. A change here changes every
/// price warpmc reports for the same inputs (call it out as value-breaking).
#[test]
fn exact_price_value_stability() {
    let r = price_asian_basket(&*cpu(2), &job(AsianBasket::default(), 4096, 16, 1, Mode::Exact)).unwrap();
    assert_eq!(r.price.to_bits(), 0x4008_5919_9742_9ea7, "price {} ({:#x})", r.price, r.price.to_bits());
}

/// An independent `f64` re-implementation of one path from the chapter's equations, fed the
/// same normals, agrees with the kernel's `f32` path.
#[test]
fn path_matches_an_f64_reimplementation() {
    let o =
        AsianBasket { spot_a: 90.0, spot_b: 110.0, vol_a: 0.35, vol_b: 0.15, corr: -0.4, rate: 0.03, maturity: 2.0 };
    let n = 50u32;
    let p = o.kernel_steps(n);
    let dt = o.maturity / n as f64;
    for k in 0..200u64 {
        let (payoff, unfloored) = simulate_path::<Exact>(&p, 77, k);
        let mut rng = hybrid_taus_stream(77, k);
        let (mut a, mut b, mut sum, mut s) = (o.spot_a, o.spot_b, 0.0, 0.0);
        for _ in 0..n {
            let (z0, z1) = (rng.next_u32(), rng.next_u32());
            let (ra, rb) = box_muller::<Exact>(z0, z1);
            let (ra, rb) = (ra as f64, rb as f64);
            a *= ((o.rate - 0.5 * o.vol_a * o.vol_a) * dt + o.vol_a * dt.sqrt() * ra).exp();
            let eps_b = o.corr * ra + (1.0 - o.corr * o.corr).sqrt() * rb;
            b *= ((o.rate - 0.5 * o.vol_b * o.vol_b) * dt + o.vol_b * dt.sqrt() * eps_b).exp();
            s = f64::max(a, b);
            sum += s;
        }
        let x = sum / n as f64 - s;
        let scale = o.spot_b; // the larger spot
        assert!((unfloored * scale - x).abs() < 2e-4 * s, "path {k}: kernel {} vs f64 {x}", unfloored * scale);
        assert!((payoff * scale - x.max(0.0)).abs() < 2e-4 * s, "path {k}");
    }
    // The path function over a generic source is what `simulate_path` runs.
    let mut src = BoxMuller::<_, Exact>::new(hybrid_taus_stream(77, 3));
    assert_eq!(path::<_, Exact>(&p, &mut src), simulate_path::<Exact>(&p, 77, 3));
}

/// The unfloored value `mean - final` has a closed form (Margrabe at each date); the Monte Carlo
/// mean must agree within a few standard errors for varied parameters, in both modes.
#[test]
fn monte_carlo_agrees_with_the_closed_form() {
    let cases = [
        AsianBasket::default(),
        AsianBasket { corr: -0.9, ..Default::default() },
        AsianBasket { corr: 1.0, vol_a: 0.3, vol_b: 0.3, spot_b: 80.0, ..Default::default() },
        AsianBasket { spot_a: 50.0, spot_b: 5_000.0, vol_a: 1.2, vol_b: 0.05, rate: -0.02, maturity: 3.0, corr: 0.2 },
        AsianBasket { spot_a: 1e-3, spot_b: 2e-3, vol_a: 0.6, vol_b: 0.9, rate: 0.2, maturity: 0.25, corr: 0.0 },
    ];
    let exec = cpu(2);
    for (i, o) in cases.into_iter().enumerate() {
        for mode in [Mode::Exact, Mode::Fast] {
            let r = price_asian_basket(&*exec, &job(o, 1 << 15, 32, 100 + i as u64, mode)).unwrap();
            eprintln!("case {i} {mode:?}: price {} ± {}, check z {:.2}", r.price, r.std_error, r.check.z_score);
            assert!(r.check.z_score.abs() < 4.5, "case {i} {mode:?}: {:?}", r.check);
            assert!(r.price.is_finite() && r.price >= 0.0);
            // The control-variate price estimates the same quantity.
            let gap = (r.price_control_variate - r.price).abs();
            assert!(gap < 5.0 * r.std_error + 1e-12, "case {i}: {} vs {}", r.price_control_variate, r.price);
        }
    }
}

#[test]
fn closed_form_limits() {
    // One date: the average is the final value.
    assert_eq!(unfloored_expectation(&AsianBasket::default().kernel_steps(1)), 0.0);
    // Perfectly correlated identical assets: max(a, b) is the larger one, a plain GBM, so
    // E[mean - final] = (1/n) Σ e^{r t_i} - e^{r T} in units of the larger spot.
    let o = AsianBasket { vol_a: 0.25, vol_b: 0.25, corr: 1.0, spot_b: 90.0, ..Default::default() };
    let n = 12;
    let p = o.kernel_steps(n);
    let growth = (p.mu_a as f64 + 0.5 * (p.sig_aa as f64).powi(2)).exp();
    let want = (1..=n).map(|i| growth.powi(i as i32)).sum::<f64>() / n as f64 - growth.powi(n as i32);
    assert!((unfloored_expectation(&p) - want).abs() < 1e-12);
}

#[test]
fn one_step_prices_to_zero() {
    let r = price_asian_basket(&*cpu(2), &job(AsianBasket::default(), 1000, 1, 3, Mode::Exact)).unwrap();
    assert_eq!((r.price, r.std_error), (0.0, 0.0));
}

#[test]
fn invalid_input_is_an_error_naming_the_field() {
    let exec = cpu(1);
    let base = AsianBasket::default();
    let cases: [(AsianBasket, &str); 8] = [
        (AsianBasket { vol_a: 0.0, ..base }, "vol_a"),
        (AsianBasket { vol_b: -0.1, ..base }, "vol_b"),
        (AsianBasket { corr: 1.0001, ..base }, "corr"),
        (AsianBasket { maturity: 0.0, ..base }, "maturity"),
        (AsianBasket { spot_a: f64::NAN, ..base }, "spot_a"),
        (AsianBasket { spot_b: f64::INFINITY, ..base }, "spot_b"),
        (AsianBasket { rate: 2.0, ..base }, "rate"),
        (AsianBasket { vol_a: f64::NAN, ..base }, "vol_a"),
    ];
    for (o, field) in cases {
        match price_asian_basket(&*exec, &job(o, 100, 4, 1, Mode::Exact)) {
            Err(Error::InvalidParameter { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{field}: expected an InvalidParameter error, got {other:?}"),
        }
    }
    for (paths, steps, field) in [(0, 4, "paths"), (1, 4, "paths"), (100, 0, "steps"), (100, 2_000_000, "steps")] {
        let e = price_asian_basket(&*exec, &job(base, paths, steps, 1, Mode::Exact)).unwrap_err();
        assert!(matches!(e, Error::InvalidParameter { field: f, .. } if f == field), "{e}");
    }
}

/// Extreme but valid parameters must give a finite price or a clear error, never NaN.
#[test]
fn extreme_parameters_never_give_nan() {
    let exec = cpu(2);
    let wild = AsianBasket { vol_a: 5.0, vol_b: 5.0, maturity: 100.0, rate: 1.0, ..Default::default() };
    for steps in [1u32, 2, 64] {
        for mode in [Mode::Exact, Mode::Fast] {
            match price_asian_basket(&*exec, &job(wild, 2000, steps, 1, mode)) {
                Ok(r) => assert!(r.price.is_finite() && r.std_error.is_finite(), "{steps} steps: {r:?}"),
                Err(Error::OutOfRange(msg)) => assert!(msg.contains("--vol-a"), "{msg}"),
                Err(e) => panic!("unexpected error {e}"),
            }
        }
    }
}
