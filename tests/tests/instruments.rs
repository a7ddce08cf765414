//! The one-asset instruments on the CPU backend: prices against closed forms, limiting cases,
//! variance reduction agreeing with the plain estimator, and independence of the thread count.

use std::collections::BTreeMap;

use warpmc::distributions::Transform;
use warpmc::generators::GeneratorKind;
use warpmc::instruments::{Instrument, InstrumentName, InstrumentReport, RunSettings, price};
use warpmc::pricing::Mode;
use warpmc_tests::cpu;

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
