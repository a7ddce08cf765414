//! The instruments: prices against closed forms, limiting cases, variance reduction and
//! randomised QMC agreeing with the plain estimator, independence of the thread count, Greeks
//! against closed forms, the `N`-asset basket against its limits, and the GPU against the CPU
//! (bit for bit in exact mode).

use std::collections::BTreeMap;

use warpmc::backend::{BackendOptions, Executor};
use warpmc::distributions::Transform;
use warpmc::generators::GeneratorKind;
use warpmc::greeks::greeks;
use warpmc::instruments::{Instrument, InstrumentName, InstrumentReport, RunSettings, price, run_range};
use warpmc::kernels::accum::PairMoments;
use warpmc::pricing::Mode;
use warpmc::qmc::{Construction, QmcSettings, Scramble};
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

/// The exact sums of samples `range` of `i` on `exec` (Monte Carlo, the settings of `s`).
fn sums(exec: &dyn Executor, i: &Instrument, s: &RunSettings, range: std::ops::Range<u64>) -> PairMoments {
    run_range(exec, &i.kernel_legs(s.transform, s.antithetic), s, range).unwrap()
}

fn qmc(paths: u64) -> RunSettings {
    RunSettings { paths, seed: 41, qmc: Some(QmcSettings::default()), ..Default::default() }
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
            let one = sums(&*cpu(1), &i, &s, 0..s.paths);
            for threads in [2, 7] {
                let m = sums(&*cpu(threads), &i, &s, 0..s.paths);
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
// The N-asset basket (CPU).
// ------------------------------------------------------------------------------------------------

/// One asset with weight 1 and the average payoff is the arithmetic Asian: the same normals, the
/// same coefficients and the same control, so the same sums bit for bit.
#[test]
fn a_basket_of_one_asset_is_the_arithmetic_asian_bit_for_bit() {
    let kv = [("strike", "103"), ("steps", "20"), ("option", "put")];
    let asian = contract(InstrumentName::AsianArithmetic, &kv);
    let mut b = kv.to_vec();
    b.extend([("payoff", "average"), ("assets", "1"), ("vols", "0.2"), ("weights", "1")]);
    let basket = contract(InstrumentName::AsianBasket, &b);
    for antithetic in [false, true] {
        let s = RunSettings { paths: 5000, seed: 6, antithetic, ..Default::default() };
        assert_eq!(sums(&*cpu(2), &basket, &s, 0..s.paths), sums(&*cpu(2), &asian, &s, 0..s.paths));
    }
    let (a, b) = (run(&asian, 1 << 14, 8), run(&basket, 1 << 14, 8));
    assert_eq!((a.price, a.std_error), (b.price, b.std_error));
    // The controls' expectations come from two formulas (the basket's log-normal moments and
    // the discrete geometric Asian's closed form), equal to rounding.
    let (ca, cb) = (a.control_variate.unwrap(), b.control_variate.unwrap());
    assert!((ca.price - cb.price).abs() < 1e-12 * ca.price, "{} vs {}", ca.price, cb.price);
}

/// The limit: perfectly correlated assets with equal parameters move as one, so the
/// basket (any weights summing to 1) prices the one-asset arithmetic Asian, within the errors
/// of the two independent estimates.
#[test]
fn perfectly_correlated_equal_assets_are_one_asset() {
    let asian = run(&contract(InstrumentName::AsianArithmetic, &[("steps", "16")]), 1 << 16, 9);
    let basket = contract(
        InstrumentName::AsianBasket,
        &[
            ("payoff", "average"),
            ("assets", "4"),
            ("vols", "0.2"),
            ("corr", "1"),
            ("weights", "0.1,0.2,0.3,0.4"),
            ("steps", "16"),
        ],
    );
    let b = run(&basket, 1 << 16, 10);
    let bound = 4.0 * (asian.std_error.powi(2) + b.std_error.powi(2)).sqrt();
    assert!((asian.price - b.price).abs() < bound, "{} vs {}", asian.price, b.price);
    // The assets' paths are equal, so the geometric control is the one-asset geometric Asian
    // and its closed form holds.
    assert!(b.control_variate.unwrap().check_z.abs() < 4.0, "{:?}", b.control_variate);
}

/// Two assets with the chapter's payoff are the chapter's basket (`warpmc price`), path by path
/// up to the rounding of the starting log-prices in different units.
#[test]
fn two_assets_with_the_chapters_payoff_are_the_chapters_basket() {
    use warpmc::pricing::{PricingJob, price_asian_basket};
    let i = contract(InstrumentName::AsianBasket, &[("steps", "64")]);
    let r = run(&i, 1 << 15, 12);
    let job = PricingJob { paths: 1 << 15, steps: 64, seed: 12, ..Default::default() };
    let chapter = price_asian_basket(&*cpu(2), &job).unwrap();
    assert!((r.price - chapter.price).abs() < 1e-5 * chapter.price, "{} vs {}", r.price, chapter.price);
    // The control is the chapter's check quantity, with the same closed form.
    let cv = r.control_variate.expect("Margrabe's closed form for two assets");
    let z = chapter.check.z_score.unwrap();
    assert!((cv.check_z - z).abs() < 1e-3, "{} vs {z}", cv.check_z);
}

#[test]
fn a_correlated_basket_prices_with_its_geometric_control() {
    let corr = "1,0.5,0.2,0;0.5,1,0.3,0.1;0.2,0.3,1,-0.2;0,0.1,-0.2,1";
    let i = contract(
        InstrumentName::AsianBasket,
        &[
            ("payoff", "average"),
            ("spots", "100,90,110,95"),
            ("vols", "0.2,0.3,0.25,0.4"),
            ("dividends", "0,0.02,0.01,0"),
            ("weights", "0.25,0.25,0.3,0.2"),
            ("correlation", corr),
            ("strike", "100"),
            ("steps", "32"),
        ],
    );
    let r = run(&i, 1 << 16, 13);
    let cv = r.control_variate.expect("the geometric basket's closed form");
    assert!(cv.check_z.abs() < 4.0, "control check z {}", cv.check_z);
    assert!(cv.variance_reduction > 20.0, "variance reduction {}", cv.variance_reduction);
    assert!((cv.price - r.price).abs() < 4.0 * r.std_error);
    let anti = run_with(&i, RunSettings { paths: 1 << 16, seed: 14, antithetic: true, ..Default::default() });
    assert!((anti.price - r.price).abs() < 4.0 * (anti.std_error.powi(2) + r.std_error.powi(2)).sqrt());
    // 32 assets, the most the kernels take, price too.
    let big = contract(
        InstrumentName::AsianBasket,
        &[("payoff", "average"), ("assets", "32"), ("corr", "0.2"), ("steps", "4")],
    );
    let b = run(&big, 1 << 12, 15);
    assert!(b.price > 0.0 && b.control_variate.unwrap().check_z.abs() < 4.0, "{b:?}");
}

/// The basket's finite-difference Greeks: with one asset they estimate the arithmetic Asian's
/// pathwise Greeks (on the same paths); with perfectly correlated equal assets, the same.
#[test]
fn basket_greeks_agree_with_the_one_asset_greeks() {
    let s = RunSettings { paths: 1 << 16, seed: 33, ..Default::default() };
    let asian = greeks(&*cpu(2), &contract(InstrumentName::AsianArithmetic, &[("steps", "12")]), &s).unwrap();
    for kv in [
        vec![("payoff", "average"), ("assets", "1"), ("vols", "0.2"), ("steps", "12")],
        vec![("payoff", "average"), ("assets", "3"), ("vols", "0.2"), ("corr", "1"), ("steps", "12")],
    ] {
        let b = greeks(&*cpu(2), &contract(InstrumentName::AsianBasket, &kv), &s).unwrap();
        for (a, e) in asian.greeks.iter().zip(&b.greeks) {
            assert_eq!(a.greek, e.greek);
            assert!(
                (a.value - e.value).abs() <= 4.0 * (a.std_error + e.std_error) + 2e-3 * a.value.abs(),
                "{kv:?} {}: pathwise {} ± {}, basket {} ± {}",
                a.greek,
                a.value,
                a.std_error,
                e.value,
                e.std_error
            );
        }
    }
}

#[test]
fn bad_correlation_matrices_name_the_entry() {
    let cases: &[(&str, &str)] = &[
        ("1,0.5;0.4,1", "entry (2, 1)"),
        ("1,0.5;0.5,0.9", "entry (2, 2)"),
        ("1,1.5;1.5,1", "entry (1, 2)"),
        ("1,nan;nan,1", "entry (1, 2)"),
        ("1,0.9,0.9;0.9,1,-0.9;0.9,-0.9,1", "positive semidefinite"),
        ("1,0.5;0.5", "2 rows"),
    ];
    for (m, want) in cases {
        let mut p = BTreeMap::new();
        p.insert("correlation".to_string(), m.to_string());
        let e = Instrument::new(InstrumentName::AsianBasket, &p).unwrap_err().to_string();
        assert!(e.contains("correlation") && e.contains(want), "{m}: {e}");
    }
    for (kv, field) in [
        (("assets", "33"), "assets"),
        (("assets", "0"), "assets"),
        (("spots", "100,0"), "spots"),
        (("vols", "0.2,-0.1"), "vols"),
        (("weights", "1,-2"), "weights"),
        (("payoff", "best-of"), "payoff"),
        (("strike", "100"), "param"),
    ] {
        let mut p = BTreeMap::new();
        p.insert(kv.0.to_string(), kv.1.to_string());
        match Instrument::new(InstrumentName::AsianBasket, &p) {
            Err(warpmc::Error::InvalidParameter { field: f, .. }) => assert_eq!(f, field, "{kv:?}"),
            other => panic!("{kv:?}: {other:?}"),
        }
    }
}

#[test]
fn the_thread_count_does_not_change_a_basket_with_greeks() {
    let i = contract(InstrumentName::AsianBasket, &[("payoff", "average"), ("assets", "5"), ("steps", "9")]);
    let s = RunSettings { paths: 999, seed: 4, antithetic: true, ..Default::default() };
    let one = greeks(&*cpu(1), &i, &s).unwrap().greeks;
    assert_eq!(greeks(&*cpu(3), &i, &s).unwrap().greeks, one);
}

// ------------------------------------------------------------------------------------------------
// Randomised quasi-Monte Carlo (CPU).
// ------------------------------------------------------------------------------------------------

#[test]
fn qmc_prices_match_closed_forms() {
    for (name, kv) in [
        (InstrumentName::EuropeanCall, vec![]),
        (InstrumentName::EuropeanPut, vec![("strike", "90"), ("steps", "8")]),
        (InstrumentName::AsianGeometric, vec![("steps", "64")]),
        (InstrumentName::AsianGeometric, vec![("steps", "100"), ("option", "put")]),
    ] {
        let i = contract(name, &kv);
        for q in [
            QmcSettings::default(),
            QmcSettings { scramble: Scramble::Shift, ..Default::default() },
            QmcSettings { construction: Construction::Increments, replicates: 8, ..Default::default() },
        ] {
            let r = run_with(&i, RunSettings { qmc: Some(q), ..qmc(1 << 14) });
            assert_near_reference(&r, 0.0);
            assert!(r.qmc.is_some() && r.std_error > 0.0);
        }
    }
}

/// QMC agrees with plain Monte Carlo within their errors and, for the smooth (after the bridge)
/// arithmetic Asian, its error is far smaller at equal paths. (The target, 10x at 2^20
/// paths, is a benchmark figure; this fixed-seed test asks for 4x at 2^16.)
#[test]
fn qmc_agrees_with_monte_carlo_and_beats_it_on_the_asian() {
    let i = contract(InstrumentName::AsianArithmetic, &[("steps", "64")]);
    let mc = run(&i, 1 << 16, 42);
    let q = run_with(&i, qmc(1 << 16));
    let bound = 4.0 * (mc.std_error.powi(2) + q.std_error.powi(2)).sqrt();
    assert!((mc.price - q.price).abs() < bound, "{} vs {}", mc.price, q.price);
    assert!(q.std_error * 4.0 < mc.std_error, "QMC {} vs MC {}", q.std_error, mc.std_error);
    // The control variate on top, over the replicates.
    let cv = q.control_variate.unwrap();
    assert!((cv.price - q.price).abs() < 4.0 * q.std_error && cv.check_z.abs() < 4.0, "{cv:?}");
    // Antithetic QMC and the GARCH lookback (its replay restarts the point) run too.
    let a = run_with(&i, RunSettings { antithetic: true, ..qmc(1 << 14) });
    assert!((a.price - q.price).abs() < 4.0 * (a.std_error.powi(2) + q.std_error.powi(2)).sqrt());
    let g = run_with(&contract(InstrumentName::LookbackGarch, &[("steps", "32")]), qmc(1 << 12));
    assert!(g.control_variate.unwrap().check_z.abs() < 4.0);
}

#[test]
fn qmc_greeks_match_closed_forms_and_threads_change_nothing() {
    let i = contract(InstrumentName::EuropeanCall, &[]);
    let g = greeks(&*cpu(2), &i, &qmc(1 << 14)).unwrap();
    for e in &g.greeks {
        let r = e.reference.unwrap();
        assert!(
            (e.value - r).abs() <= 4.0 * e.std_error + 1e-3 * r.abs(),
            "{} {} ± {} vs {r}",
            e.greek,
            e.value,
            e.std_error
        );
    }
    let a = contract(InstrumentName::AsianBarrier, &[("steps", "17")]);
    let s = RunSettings { antithetic: true, ..qmc(1 << 10) };
    let one = price(&*cpu(1), &a, &s).unwrap();
    let seven = price(&*cpu(7), &a, &s).unwrap();
    assert_eq!((one.price, one.std_error), (seven.price, seven.std_error));
    assert_eq!(greeks(&*cpu(1), &a, &s).unwrap().greeks, greeks(&*cpu(7), &a, &s).unwrap().greeks);
}

#[test]
fn qmc_settings_are_checked() {
    let i = contract(InstrumentName::EuropeanCall, &[]);
    let e = price(&*cpu(1), &i, &qmc(1000)).unwrap_err().to_string();
    assert!(e.contains("paths") && e.contains("multiple"), "{e}");
    let long = contract(InstrumentName::AsianArithmetic, &[("steps", "20000")]);
    let e = price(&*cpu(1), &long, &qmc(1 << 10)).unwrap_err().to_string();
    assert!(e.contains("steps") && e.contains("16384"), "{e}");
    let basket = contract(InstrumentName::AsianBasket, &[]);
    let e = price(&*cpu(1), &basket, &qmc(1 << 10)).unwrap_err().to_string();
    assert!(e.contains("qmc") && e.contains("one-asset"), "{e}");
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
            let s = RunSettings { generator, seed: 5, antithetic: n % 2 == 1, ..Default::default() };
            let c = sums(&*host, &i, &s, 7..7 + paths);
            let g = sums(&*gpu, &i, &s, 7..7 + paths);
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
        let i = contract(name, &[("steps", "64")]);
        let s = RunSettings { seed: 4, ..Default::default() };
        let exact = sums(&*gpu, &i, &s, 0..100_000);
        let fast = sums(&*gpu, &i, &RunSettings { mode: Mode::Fast, ..s.clone() }, 0..100_000);
        let (e, f) = (exact.sum_a.to_f64(), fast.sum_a.to_f64());
        assert!((f - e).abs() <= 1e-4 * e.abs(), "{}: fast {f} exact {e}", name.name());
    }
}

/// Exact mode: the basket (both payoffs, with and without antithetic pairs) with every
/// generator, and its Greeks (three coefficient sets on common random numbers) for any launch
/// shape, give the CPU's sums bit for bit.
#[test]
fn gpu_baskets_match_cpu_bit_for_bit() {
    let Some(gpu) = gpu_or_skip("gpu_baskets_match_cpu_bit_for_bit") else { return };
    let host = cpu(4);
    let chapter = contract(InstrumentName::AsianBasket, &[("steps", "12")]);
    let average = contract(
        InstrumentName::AsianBasket,
        &[
            ("payoff", "average"),
            ("assets", "5"),
            ("corr", "0.4"),
            ("steps", "12"),
            ("option", "put"),
            ("strike", "104"),
        ],
    );
    for &generator in GeneratorKind::ALL {
        let paths = if generator == GeneratorKind::Mt19937 { 150 } else { 1001 };
        for (n, i) in [&chapter, &average].into_iter().enumerate() {
            let s = RunSettings { generator, seed: 6, antithetic: n == 1, ..Default::default() };
            assert_eq!(sums(&*gpu, i, &s, 3..3 + paths), sums(&*host, i, &s, 3..3 + paths), "{generator}, {n}");
        }
    }
    let s = RunSettings { paths: 2049, seed: 3, ..Default::default() };
    let c = greeks(&*host, &average, &s).unwrap().greeks;
    for (block, grid) in [(None, None), (Some(32), Some(1)), (Some(96), Some(50))] {
        let opts = BackendOptions { gpu_block: block, gpu_grid: grid, ..Default::default() };
        let Some(gpu) = gpu_with("gpu_baskets_match_cpu_bit_for_bit", opts) else { return };
        assert_eq!(greeks(&*gpu, &average, &s).unwrap().greeks, c, "block {block:?} grid {grid:?}");
    }
}

/// Exact mode: QMC prices and Greeks (every scramble and construction) are the CPU's bit for bit
/// for any launch shape; fast mode within 1e-4 of exact.
#[test]
fn gpu_qmc_matches_cpu_bit_for_bit() {
    let host = cpu(4);
    let asian = contract(InstrumentName::AsianArithmetic, &[("steps", "100")]);
    let garch = contract(InstrumentName::LookbackGarch, &[("steps", "33")]);
    for (block, grid) in [(None, None), (Some(32), Some(1)), (Some(64), Some(9))] {
        let opts = BackendOptions { gpu_block: block, gpu_grid: grid, ..Default::default() };
        let Some(gpu) = gpu_with("gpu_qmc_matches_cpu_bit_for_bit", opts) else { return };
        for q in [
            QmcSettings::default(),
            QmcSettings { scramble: Scramble::Shift, construction: Construction::Increments, replicates: 4 },
        ] {
            for (i, antithetic) in [(&asian, false), (&garch, true)] {
                let s = RunSettings { antithetic, qmc: Some(q), ..qmc(4096) };
                let (c, g) = (price(&*host, i, &s).unwrap(), price(&*gpu, i, &s).unwrap());
                assert_eq!((g.price, g.std_error), (c.price, c.std_error), "{} {q:?} block {block:?}", i.name.name());
            }
            let s = RunSettings { qmc: Some(q), ..qmc(2048) };
            let e = contract(InstrumentName::EuropeanPut, &[("steps", "5")]);
            assert_eq!(greeks(&*gpu, &e, &s).unwrap().greeks, greeks(&*host, &e, &s).unwrap().greeks);
        }
    }
    let Some(gpu) = gpu_or_skip("gpu_qmc_matches_cpu_bit_for_bit") else { return };
    let exact = price(&*gpu, &asian, &qmc(1 << 16)).unwrap();
    let fast = price(&*gpu, &asian, &RunSettings { mode: Mode::Fast, ..qmc(1 << 16) }).unwrap();
    assert!((fast.price - exact.price).abs() <= 1e-4 * exact.price, "fast {} exact {}", fast.price, exact.price);
}
