//! The one-asset instruments: prices against closed forms, limiting cases, variance reduction
//! agreeing with the plain estimator, independence of the thread count, Greeks against closed
//! forms, and the GPU against the CPU (bit for bit in exact mode).

use std::collections::BTreeMap;

use warpmc::backend::BackendOptions;
use warpmc::distributions::Transform;
use warpmc::generators::GeneratorKind;
use warpmc::greeks::greeks;
use warpmc::instruments::{Instrument, InstrumentName, InstrumentReport, RunSettings, price};
use warpmc::pricing::Mode;
use warpmc_tests::{cpu, gpu_or_skip, gpu_with};

fn contract(name: InstrumentName, kv: &[(&str, &str)]) -> Instrument {
    let params: BTreeMap<String, String> = kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Instrument::new(name, &params).unwrap()
}

fn run(i: &Instrument, paths: u64, seed: u64) -> InstrumentReport {
    run_with(i, RunSettings { paths, seed, ..Default::default() })
}

fn run_with(i: &Instrument, s: RunSettings) -> InstrumentReport {
    price(&*cpu(2), i, &s).unwrap()
}

/// The price is within 4 standard errors of its reference, with a reference tolerance `tol`
/// added for approximate references (BGK).
fn assert_near_reference(r: &InstrumentReport, tol: f64) {
    let reference = r.reference.expect("a reference price").price;
    let err = (r.price - reference).abs();
    assert!(
        err <= 4.0 * r.std_error + tol,
        "{}: {} ± {} against {reference} ({}), z = {:?}",
        r.instrument,
        r.price,
        r.std_error,
        r.reference.unwrap().kind,
        r.z
    );
    // The control's own check: its mean against its expectation.
    if let Some(cv) = r.control_variate {
        assert!(cv.check_z.abs() < 4.0, "{}: control check z = {}", r.instrument, cv.check_z);
    }
}

#[test]
fn europeans_match_black_scholes() {
    for (name, kv) in [
        (InstrumentName::EuropeanCall, vec![]),
        (InstrumentName::EuropeanPut, vec![]),
        (InstrumentName::EuropeanCall, vec![("strike", "130"), ("dividend", "0.03"), ("vol", "0.35")]),
        (InstrumentName::EuropeanPut, vec![("strike", "80"), ("rate", "-0.01"), ("maturity", "3")]),
        (InstrumentName::EuropeanCall, vec![("steps", "16")]),
    ] {
        let r = run(&contract(name, &kv), 1 << 18, 11);
        assert_near_reference(&r, 0.0);
    }
}

#[test]
fn every_transform_and_some_generators_price_the_european() {
    let i = contract(InstrumentName::EuropeanCall, &[]);
    for transform in [Transform::BoxMuller, Transform::Inversion, Transform::Polar, Transform::Ziggurat] {
        for generator in [GeneratorKind::default(), GeneratorKind::HybridTaus, GeneratorKind::Mrg32k3a] {
            let r = run_with(&i, RunSettings { paths: 1 << 16, seed: 3, transform, generator, ..Default::default() });
            assert_near_reference(&r, 0.0);
        }
    }
}

#[test]
fn geometric_asian_matches_its_closed_form() {
    for kv in [vec![("steps", "64")], vec![("steps", "12"), ("option", "put"), ("strike", "95"), ("dividend", "0.02")]]
    {
        let r = run(&contract(InstrumentName::AsianGeometric, &kv), 1 << 17, 12);
        assert_near_reference(&r, 0.0);
    }
}

#[test]
fn floating_and_fixed_lookbacks_match_bgk() {
    // BGK's correction leaves an error of about 0.06% of the price at 250 dates (host/src/
    // closed_form.rs); 0.1% is allowed on top of 4 standard errors.
    for (name, kv) in [
        (InstrumentName::LookbackFloating, vec![("steps", "250")]),
        (InstrumentName::LookbackFloating, vec![("steps", "250"), ("option", "put"), ("vol", "0.3")]),
        (InstrumentName::LookbackFixed, vec![("steps", "250"), ("strike", "110")]),
        (InstrumentName::LookbackFixed, vec![("steps", "250"), ("strike", "95"), ("option", "put")]),
    ] {
        let r = run(&contract(name, &kv), 1 << 16, 13);
        let tol = 1e-3 * r.reference.unwrap().price;
        assert_near_reference(&r, tol);
    }
}

#[test]
fn garch_lookback_with_constant_variance_is_the_gbm_closed_form() {
    // A_1 = A_2 = 0: per-step variance A_0 = σ² dt with σ = 0.25 and 64 steps a year.
    let a0 = (0.25f64 * 0.25 / 64.0).to_string();
    let i = contract(
        InstrumentName::LookbackGarch,
        &[("steps", "64"), ("a0", &a0), ("a1", "0"), ("a2", "0"), ("vol0", "0.05"), ("eps0", "0.3")],
    );
    let r = run(&i, 1 << 16, 14);
    assert_near_reference(&r, 0.0);
}

#[test]
fn garch_lookback_is_a_martingale_at_any_length() {
    // No closed form: the control s_n must still have its risk-neutral mean S_0 e^{rT}, and
    // 10,000 steps run in constant memory (the path is replayed, not stored).
    for steps in ["8", "256", "10000"] {
        let i = contract(InstrumentName::LookbackGarch, &[("steps", steps)]);
        let paths = if steps == "10000" { 1 << 11 } else { 1 << 15 };
        let r = run(&i, paths, 15);
        let cv = r.control_variate.expect("s_n is a control");
        assert!(cv.check_z.abs() < 4.0, "{steps} steps: z = {}", cv.check_z);
        assert!(r.price > 0.0 && r.std_error > 0.0 && r.std_error < 0.05 * r.price, "{r:?}");
    }
}

#[test]
fn zero_volatility_gives_the_deterministic_payoff() {
    // S_i = S_0 e^{(r - q) t_i}: every path is the same, so the price has no error.
    let (s0, r, t, n) = (100.0f64, 0.05f64, 1.0f64, 8u32);
    let s = |i: u32| s0 * (r * t * i as f64 / n as f64).exp();
    let mean = (1..=n).map(s).sum::<f64>() / n as f64;
    let d = (-r * t).exp();
    for (name, want) in [
        (InstrumentName::EuropeanCall, d * (s(n) - 100.0)),
        (InstrumentName::AsianArithmetic, d * (mean - 100.0)),
        (InstrumentName::LookbackFloating, d * (s(n) - s0)),
    ] {
        let i = contract(name, &[("vol", "0"), ("steps", "8")]);
        let rep = run(&i, 1000, 16);
        assert_eq!(rep.std_error, 0.0, "{}", rep.instrument);
        assert!((rep.price - want).abs() < 1e-4 * want, "{}: {} vs {want}", rep.instrument, rep.price);
    }
}

#[test]
fn a_far_barrier_is_the_plain_asian() {
    let plain = contract(InstrumentName::AsianArithmetic, &[("steps", "32")]);
    let far = contract(InstrumentName::AsianBarrier, &[("steps", "32"), ("barrier", "1e9"), ("direction", "up")]);
    let a = run(&plain, 1 << 14, 17);
    let b = run(&far, 1 << 14, 17);
    assert_eq!(a.price.to_bits(), b.price.to_bits());
    assert_eq!(a.std_error.to_bits(), b.std_error.to_bits());
    // A near barrier knocks out and lowers the price; a down barrier far below changes nothing.
    let near = contract(InstrumentName::AsianBarrier, &[("steps", "32"), ("barrier", "115")]);
    assert!(run(&near, 1 << 14, 17).price < a.price - 4.0 * a.std_error);
    let below = contract(InstrumentName::AsianBarrier, &[("steps", "32"), ("barrier", "1e-6"), ("direction", "down")]);
    assert_eq!(run(&below, 1 << 14, 17).price.to_bits(), a.price.to_bits());
}

#[test]
fn antithetic_and_control_variates_agree_with_the_plain_estimator() {
    for name in [InstrumentName::EuropeanCall, InstrumentName::AsianArithmetic, InstrumentName::LookbackFloating] {
        let i = contract(name, &[("steps", if name == InstrumentName::EuropeanCall { "1" } else { "64" })]);
        let plain = run(&i, 1 << 16, 18);
        let anti = run_with(&i, RunSettings { paths: 1 << 16, seed: 19, antithetic: true, ..Default::default() });
        let bound = 4.0 * (plain.std_error.powi(2) + anti.std_error.powi(2)).sqrt();
        assert!((plain.price - anti.price).abs() < bound, "{}: {} vs {}", plain.instrument, plain.price, anti.price);
        // Antithetic pairs of a monotone payoff are negatively correlated: less variance per
        // sample than half of two independent paths would give.
        assert!(
            anti.std_error < plain.std_error / 2f64.sqrt(),
            "{}: {} vs {}",
            anti.instrument,
            anti.std_error,
            plain.std_error
        );
        let cv = plain.control_variate.unwrap();
        assert!(
            (cv.price - plain.price).abs() < 4.0 * plain.std_error,
            "{}: cv {} vs {}",
            plain.instrument,
            cv.price,
            plain.price
        );
        assert!(cv.std_error < plain.std_error, "{}", plain.instrument);
    }
}

#[test]
fn the_geometric_control_removes_most_of_the_arithmetic_asians_variance() {
    let i = contract(InstrumentName::AsianArithmetic, &[("steps", "64")]);
    let r = run(&i, 1 << 16, 20);
    let cv = r.control_variate.unwrap();
    assert!(cv.variance_reduction > 100.0, "variance reduction {}", cv.variance_reduction);
    assert!(cv.beta > 0.9 && cv.beta < 1.1, "beta {}", cv.beta);
}

#[test]
fn the_thread_count_does_not_change_any_price() {
    for name in InstrumentName::ALL {
        let i = contract(name, &[("steps", "24")]);
        for mode in [Mode::Exact, Mode::Fast] {
            let s = RunSettings { paths: 3001, seed: 21, mode, antithetic: true, ..Default::default() };
            let p = i.kernel_steps(s.transform, s.antithetic);
            let one = cpu(1).instrument(&p, s.generator, s.seed, 0..s.paths, mode).unwrap();
            for threads in [2, 7] {
                let m = cpu(threads).instrument(&p, s.generator, s.seed, 0..s.paths, mode).unwrap();
                assert_eq!(m, one, "{} {mode:?} {threads} threads", name.name());
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Greeks (CPU).
// ------------------------------------------------------------------------------------------------

/// Each Greek within 4 standard errors of its closed form, plus `rel` of the reference for a
/// difference's `h²` bias.
fn assert_greeks_near_closed_form(i: &Instrument, paths: u64, rel: f64) {
    let s = RunSettings { paths, seed: 29, ..Default::default() };
    let g = greeks(&*cpu(2), i, &s).unwrap();
    assert_eq!(g.greeks.len(), 3);
    for e in &g.greeks {
        let r = e.reference.expect("a closed form");
        assert!(
            (e.value - r).abs() <= 4.0 * e.std_error + rel * r.abs(),
            "{} {}: {} ± {} ({:?}) against {r}",
            g.instrument,
            e.greek,
            e.value,
            e.std_error,
            e.method
        );
        assert!(e.std_error > 0.0 && e.std_error < 0.05 * r.abs(), "{} {}: se {}", g.instrument, e.greek, e.std_error);
    }
}

#[test]
fn european_and_geometric_asian_greeks_match_their_closed_forms() {
    assert_greeks_near_closed_form(&contract(InstrumentName::EuropeanCall, &[]), 1 << 17, 1e-3);
    assert_greeks_near_closed_form(
        &contract(InstrumentName::EuropeanPut, &[("strike", "90"), ("dividend", "0.02"), ("vol", "0.3")]),
        1 << 17,
        1e-3,
    );
    assert_greeks_near_closed_form(&contract(InstrumentName::AsianGeometric, &[("steps", "12")]), 1 << 17, 1e-3);
    assert_greeks_near_closed_form(
        &contract(InstrumentName::AsianGeometric, &[("steps", "6"), ("option", "put"), ("strike", "105")]),
        1 << 17,
        1e-3,
    );
}

/// A barrier far away is the plain arithmetic Asian, so its finite-difference Greeks estimate the
/// same numbers as the Asian's pathwise ones (on the same paths: both errors bound the gap).
#[test]
fn finite_difference_greeks_agree_with_pathwise_ones() {
    let s = RunSettings { paths: 1 << 16, seed: 31, ..Default::default() };
    let plain = greeks(&*cpu(2), &contract(InstrumentName::AsianArithmetic, &[("steps", "12")]), &s).unwrap();
    let far = contract(InstrumentName::AsianBarrier, &[("steps", "12"), ("barrier", "10000")]);
    let fd = greeks(&*cpu(2), &far, &s).unwrap();
    for (a, b) in plain.greeks.iter().zip(&fd.greeks) {
        assert_eq!(a.greek, b.greek);
        assert_eq!(b.method, warpmc::greeks::Method::FiniteDifference);
        assert!(
            (a.value - b.value).abs() <= 4.0 * (a.std_error + b.std_error) + 1e-3 * a.value.abs(),
            "{}: pathwise {} ± {}, difference {} ± {}",
            a.greek,
            a.value,
            a.std_error,
            b.value,
            b.std_error
        );
    }
}

// ------------------------------------------------------------------------------------------------
// The GPU against the CPU (skipped without a GPU unless WARPMC_REQUIRE_GPU=1).
// ------------------------------------------------------------------------------------------------

/// Exact mode: every instrument with every generator gives the CPU's sums bit for bit (samples
/// from 7, not a multiple of 32, so a collective generator's first warp is partly outside).
#[test]
fn gpu_instruments_match_cpu_bit_for_bit() {
    let Some(gpu) = gpu_or_skip("gpu_instruments_match_cpu_bit_for_bit") else { return };
    let host = cpu(4);
    for &generator in GeneratorKind::ALL {
        let paths = if generator == GeneratorKind::Mt19937 { 200 } else { 2001 };
        for (n, &name) in InstrumentName::ALL.iter().enumerate() {
            let i = contract(name, &[("steps", "24")]);
            let p = i.kernel_steps(Transform::BoxMuller, n % 2 == 1);
            let c = host.instrument(&p, generator, 5, 7..7 + paths, Mode::Exact).unwrap();
            let g = gpu.instrument(&p, generator, 5, 7..7 + paths, Mode::Exact).unwrap();
            assert_eq!(g, c, "{generator}, {}", name.name());
        }
    }
}

/// Exact mode: every transform a generator can feed, ordinary and collective generators.
#[test]
fn gpu_instruments_match_cpu_for_every_transform() {
    let Some(gpu) = gpu_or_skip("gpu_instruments_match_cpu_for_every_transform") else { return };
    let host = cpu(4);
    for generator in [
        GeneratorKind::Philox4x32x10,
        GeneratorKind::Xorwow,
        GeneratorKind::Mrg32k3a,
        GeneratorKind::Warp,
        GeneratorKind::WarpShfl,
    ] {
        for transform in [
            Transform::BoxMuller,
            Transform::Inversion,
            Transform::InversionNaive,
            Transform::Polar,
            Transform::Ziggurat,
        ] {
            if warpmc::backend::basket_transform_refusal(transform.code(), generator).is_some() {
                continue;
            }
            for name in [InstrumentName::AsianArithmetic, InstrumentName::LookbackGarch] {
                let p = contract(name, &[("steps", "17")]).kernel_steps(transform, true);
                let c = host.instrument(&p, generator, 8, 0..1500, Mode::Exact).unwrap();
                let g = gpu.instrument(&p, generator, 8, 0..1500, Mode::Exact).unwrap();
                assert_eq!(g, c, "{generator}, {}, {}", transform.name(), name.name());
            }
        }
    }
}

/// Exact mode, any launch shape: Greeks (three legs on common random numbers) and a GARCH
/// lookback of 10,000 steps (replayed) are the CPU's bit for bit; so are the Greek reports.
#[test]
fn gpu_greeks_and_long_garch_match_cpu_for_any_launch_shape() {
    let host = cpu(4);
    let barrier = contract(InstrumentName::AsianBarrier, &[("steps", "20"), ("barrier", "130")]);
    let european = contract(InstrumentName::EuropeanCall, &[]);
    let garch = contract(InstrumentName::LookbackGarch, &[("steps", "10000")]);
    let s = RunSettings { paths: 4099, seed: 2, antithetic: true, ..Default::default() };
    for (block, grid) in
        [(None, None), (Some(32), Some(1)), (Some(64), Some(7)), (Some(512), Some(3)), (Some(96), Some(20_000))]
    {
        let opts = BackendOptions { gpu_block: block, gpu_grid: grid, ..Default::default() };
        let Some(gpu) = gpu_with("gpu_greeks_and_long_garch_match_cpu_for_any_launch_shape", opts) else { return };
        for generator in [GeneratorKind::Philox4x32x10, GeneratorKind::Warp] {
            let s = RunSettings { generator, ..s.clone() };
            for i in [&barrier, &european] {
                let c = greeks(&*host, i, &s).unwrap().greeks;
                let g = greeks(&*gpu, i, &s).unwrap().greeks;
                assert_eq!(g, c, "{generator}, {}, block {block:?} grid {grid:?}", i.name.name());
            }
            let p = garch.kernel_steps(Transform::BoxMuller, false);
            let c = host.instrument(&p, generator, 3, 30..95, Mode::Exact).unwrap();
            let g = gpu.instrument(&p, generator, 3, 30..95, Mode::Exact).unwrap();
            assert_eq!(g, c, "{generator}, GARCH 10,000 steps, block {block:?} grid {grid:?}");
        }
    }
}

/// Fast mode (hardware approximations of exp and sqrt): each instrument's mean payoff within
/// 1e-4 of the exact mode's, relative. The knock-out barrier is left out: a path at the barrier
/// can knock out in one mode and not the other, a jump no relative tolerance bounds.
#[test]
fn gpu_fast_instruments_within_tolerance_of_exact() {
    let Some(gpu) = gpu_or_skip("gpu_fast_instruments_within_tolerance_of_exact") else { return };
    for name in InstrumentName::ALL.into_iter().filter(|n| *n != InstrumentName::AsianBarrier) {
        let p = contract(name, &[("steps", "64")]).kernel_steps(Transform::BoxMuller, false);
        let exact = gpu.instrument(&p, GeneratorKind::Philox4x32x10, 4, 0..100_000, Mode::Exact).unwrap();
        let fast = gpu.instrument(&p, GeneratorKind::Philox4x32x10, 4, 0..100_000, Mode::Fast).unwrap();
        let (e, f) = (exact.sum_a.to_f64(), fast.sum_a.to_f64());
        assert!((f - e).abs() <= 1e-4 * e.abs(), "{}: fast {f} exact {e}", name.name());
    }
}
