//! Greeks of the instruments: delta, gamma and vega, each with its standard error.
//!
//! Every estimate is a Monte Carlo mean over paths whose per-path value is computed in the
//! kernels from the path's own normals ([`warpmc_kernels::instrument::Legs`]): one value per
//! path, so the standard error is the ordinary one of that mean, and the finite differences use
//! common random numbers by construction (every leg replays the same stream from its start).
//!
//! | instrument | delta | gamma | vega |
//! |---|---|---|---|
//! | European, Asian arithmetic and geometric | pathwise | central difference of pathwise deltas | pathwise |
//! | Asian barrier, lookbacks (GBM) | central difference | second central difference | central difference |
//! | GARCH lookback | central difference | second central difference | none (the model has no `σ`) |
//! | `N`-asset basket | central difference | second central difference | central difference |
//!
//! The basket's delta and gamma move every spot in proportion, `S_k → S_k (1 ± h)`, and are
//! per unit of the first asset's spot (`dV/dS_1` with every `S_k / S_1` held); its vega shifts
//! every volatility by the same amount (a parallel vega, per unit of `σ`), by [`VOL_BUMP`] of
//! the smallest volatility. With one asset, or perfectly correlated equal assets, they are the
//! one-asset delta, gamma and vega.
//!
//! The pathwise estimators are unbiased where the payoff is Lipschitz in the parameter and the
//! path is differentiable in it (Broadie and Glasserman 1996; Glasserman, *Monte Carlo Methods
//! in Financial Engineering*, 7.2); a knock-out barrier's payoff jumps, so it gets differences.
//! The differences bump the spot by [`SPOT_BUMP`] of itself and `σ` by [`VOL_BUMP`] of itself,
//! and carry a bias of order `h²`, small against their standard errors at the path counts used:
//! for gamma as a difference of Black-Scholes deltas at `h = 1%` of the spot, `-2.4e-4` of the
//! value for the at-the-money call of the tests and `+1.5e-5` for their put (strike 90, σ 0.3),
//! computed from the closed forms.
//!
//! With randomised QMC ([`crate::qmc`]) every leg replays the same point, and each estimate's
//! standard error comes from its replicates, as the price's does.
//!
//! References: Black-Scholes delta, gamma and vega for the Europeans, and the discrete geometric
//! Asian's (both analytic, [`crate::closed_form`]); the z-score of each estimate against them.

use std::time::Instant;

use serde::Serialize;
use warpmc_kernels::instrument::{Legs, PathSteps, flags};

use crate::backend::Executor;
use crate::closed_form;
use crate::distributions::Transform;
use crate::generators::GeneratorKind;
use crate::instruments::{Instrument, InstrumentName, KernelLegs, RunSettings, mean_and_se, run_legs};
use crate::pricing::Mode;
use crate::{Error, Result};

/// Relative spot bump `h / S_0` of the finite differences.
pub const SPOT_BUMP: f64 = 0.01;
/// Relative volatility bump `h / σ` of the finite differences.
pub const VOL_BUMP: f64 = 0.01;

/// How an estimate was computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// The derivative of the payoff along the path.
    Pathwise,
    /// A central difference of pathwise deltas (gamma), common random numbers.
    PathwiseDifference,
    /// Central differences of payoffs, common random numbers.
    FiniteDifference,
}

/// One Greek.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GreekEstimate {
    /// `delta`, `gamma` or `vega` (vega per unit of `σ`: per 100 volatility points).
    pub greek: &'static str,
    pub method: Method,
    pub value: f64,
    pub std_error: f64,
    /// The bump `h` of a difference, in the parameter's units (spot or `σ`).
    pub bump: Option<f64>,
    /// The closed-form value where one exists (Europeans, geometric Asian).
    pub reference: Option<f64>,
    /// `(value - reference) / std_error`.
    pub z: Option<f64>,
}

/// The Greeks of one instrument, run on the same paths (seed) as its price.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GreeksReport {
    pub instrument: &'static str,
    pub paths: u64,
    pub seed: u64,
    pub generator: GeneratorKind,
    pub transform: Transform,
    pub backend: String,
    pub mode: Mode,
    pub antithetic: bool,
    pub wall_seconds: f64,
    pub greeks: Vec<GreekEstimate>,
}

fn pathwise_ok(name: InstrumentName) -> bool {
    matches!(
        name,
        InstrumentName::EuropeanCall
            | InstrumentName::EuropeanPut
            | InstrumentName::AsianArithmetic
            | InstrumentName::AsianGeometric
    )
}

/// The legs of one estimate, the factor turning the mean of its samples into the Greek
/// (discount included), and its method and bump.
struct Plan {
    greek: &'static str,
    legs: KernelLegs,
    scale: f64,
    method: Method,
    bump: Option<f64>,
}

fn with_flag(mut p: PathSteps, f: u32) -> PathSteps {
    p.flags |= f;
    p
}

/// The estimates `i` gets (see the module's table).
fn plans(i: &Instrument, s: &RunSettings) -> Result<Vec<Plan>> {
    if i.basket.is_some() {
        return basket_plans(i, s);
    }
    Ok(path_plans(i, s)?
        .into_iter()
        .map(|(greek, legs, scale, method, bump)| Plan { greek, legs: KernelLegs::Path(legs), scale, method, bump })
        .collect())
}

/// The basket's three differences (module docs).
fn basket_plans(i: &Instrument, s: &RunSettings) -> Result<Vec<Plan>> {
    let b = i.basket.as_ref().expect("a basket");
    let min_vol = b.vols.iter().copied().fold(f64::INFINITY, f64::min);
    if !(min_vol > 0.0) {
        return Err(Error::invalid("vols", min_vol, "(0, 5] each for Greeks (the parallel vega bumps every one)"));
    }
    let u = i.unit();
    let disc = i.discount();
    let bumped = |f: &dyn Fn(&mut Instrument)| {
        let mut c = i.clone();
        f(&mut c);
        c.validate().map(|_| c)
    };
    let spots = |factor: f64| {
        bumped(&|c: &mut Instrument| {
            let b = c.basket.as_mut().expect("a basket");
            b.spots.iter_mut().for_each(|x| *x *= factor);
            c.spot = b.spots[0];
        })
    };
    let vols = |shift: f64| {
        bumped(&|c: &mut Instrument| {
            let b = c.basket.as_mut().expect("a basket");
            b.vols.iter_mut().for_each(|x| *x += shift);
            c.vol = b.vols[0];
        })
    };
    let (up, down) = (spots(1.0 + SPOT_BUMP)?, spots(1.0 - SPOT_BUMP)?);
    let hv = VOL_BUMP * min_vol;
    let (vu, vd) = (vols(hv)?, vols(-hv)?);
    // The first spot's bump, in the kernels' units.
    let h = SPOT_BUMP * i.spot;
    let hu = h / u;
    let legs = |set: &[(&Instrument, f64)]| {
        KernelLegs::Basket(
            i.basket_job(s.transform, s.antithetic, set.len() as u32),
            set.iter().map(|(c, w)| c.basket_leg_in(u, *w)).collect(),
        )
    };
    let fd = Method::FiniteDifference;
    Ok(vec![
        Plan {
            greek: "delta",
            legs: legs(&[(&up, 0.5 / hu), (&down, -0.5 / hu)]),
            scale: disc,
            method: fd,
            bump: Some(h),
        },
        Plan {
            greek: "gamma",
            legs: legs(&[(i, -2.0 / (hu * hu)), (&up, 1.0 / (hu * hu)), (&down, 1.0 / (hu * hu))]),
            scale: disc / u,
            method: fd,
            bump: Some(h),
        },
        Plan {
            greek: "vega",
            legs: legs(&[(&vu, 0.5 / hv), (&vd, -0.5 / hv)]),
            scale: disc * u,
            method: fd,
            bump: Some(hv),
        },
    ])
}

/// A one-asset estimate: its Greek, legs, scale, method and bump.
type PathPlan = (&'static str, Legs, f64, Method, Option<f64>);

/// The one-asset instruments' estimates (module docs).
fn path_plans(i: &Instrument, s: &RunSettings) -> Result<Vec<PathPlan>> {
    if i.vol == 0.0 && i.name != InstrumentName::LookbackGarch {
        return Err(Error::invalid("vol", 0, "(0, 5] for Greeks (at zero volatility the payoff is deterministic)"));
    }
    let u = i.unit();
    let disc = i.discount();
    let steps = |c: &Instrument| c.kernel_steps_in(s.transform, s.antithetic, u);
    let bumped = |f: &dyn Fn(&mut Instrument)| {
        let mut c = i.clone();
        f(&mut c);
        c.validate().map(|_| c)
    };
    let h = SPOT_BUMP * i.spot;
    let up = bumped(&|c| c.spot += h)?;
    let down = bumped(&|c| c.spot -= h)?;
    // The spot bump in the kernels' units: the legs' values are per unit of `S_0 / U`.
    let hu = h / u;
    let base = steps(i);
    let legs3 = |a: PathSteps, b: PathSteps, c: PathSteps, w: [f64; 3], count: u32| Legs {
        legs: [a, b, c],
        weights: w,
        count,
        pad: 0,
    };
    let mut out = Vec::new();
    if pathwise_ok(i.name) {
        out.push(("delta", Legs::single(with_flag(base, flags::PATHWISE_DELTA)), disc, Method::Pathwise, None));
        let (a, b) = (with_flag(steps(&up), flags::PATHWISE_DELTA), with_flag(steps(&down), flags::PATHWISE_DELTA));
        out.push((
            "gamma",
            legs3(a, b, b, [0.5 / hu, -0.5 / hu, 0.0], 2),
            disc / u,
            Method::PathwiseDifference,
            Some(h),
        ));
        out.push(("vega", Legs::single(with_flag(base, flags::PATHWISE_VEGA)), disc * u, Method::Pathwise, None));
        return Ok(out);
    }
    let (a, b) = (steps(&up), steps(&down));
    out.push(("delta", legs3(a, b, b, [0.5 / hu, -0.5 / hu, 0.0], 2), disc, Method::FiniteDifference, Some(h)));
    out.push((
        "gamma",
        legs3(base, a, b, [-2.0 / (hu * hu), 1.0 / (hu * hu), 1.0 / (hu * hu)], 3),
        disc / u,
        Method::FiniteDifference,
        Some(h),
    ));
    if i.name != InstrumentName::LookbackGarch {
        let hv = VOL_BUMP * i.vol;
        let (vu, vd) = (bumped(&|c| c.vol += hv)?, bumped(&|c| c.vol -= hv)?);
        out.push((
            "vega",
            legs3(steps(&vu), steps(&vd), base, [0.5 / hv, -0.5 / hv, 0.0], 2),
            disc * u,
            Method::FiniteDifference,
            Some(hv),
        ));
    }
    Ok(out)
}

/// The closed-form Greeks of `i` where they exist: `(delta, gamma, vega)`.
pub fn reference_greeks(i: &Instrument) -> Option<(f64, f64, f64)> {
    let (m, t) = (i.market(), i.option_type());
    let g = match i.name {
        InstrumentName::EuropeanCall | InstrumentName::EuropeanPut => closed_form::black_scholes(&m, i.strike, t),
        InstrumentName::AsianGeometric => closed_form::geometric_asian(&m, i.strike, i.steps, t),
        _ => return None,
    }
    .ok()?;
    Some((g.delta, g.gamma, g.vega))
}

/// Delta, gamma and vega of `i` (see the module docs), each on the paths of `s`.
pub fn greeks(exec: &dyn Executor, i: &Instrument, s: &RunSettings) -> Result<GreeksReport> {
    i.validate()?;
    s.validate_for(i)?;
    let start = Instant::now();
    let reference = reference_greeks(i);
    let mut greeks = Vec::new();
    for plan in plans(i, s)? {
        let parts = run_legs(exec, i, &plan.legs, s, &mut |_, _| {})?;
        let (out, n) = parts.iter().fold((0, 0), |(o, n), m| (o + m.out_of_range, n + m.n));
        if out > 0 {
            return Err(Error::OutOfRange(format!(
                "{out} of {n} {} samples left the accumulators' range: the estimate would be biased",
                plan.greek
            )));
        }
        let (mean, se) = mean_and_se(&parts);
        let value = plan.scale * mean;
        let std_error = plan.scale.abs() * se;
        let r = reference.map(|(d, g, v)| match plan.greek {
            "delta" => d,
            "gamma" => g,
            _ => v,
        });
        let z = r.and_then(|r| (std_error > 0.0).then(|| (value - r) / std_error));
        greeks.push(GreekEstimate {
            greek: plan.greek,
            method: plan.method,
            value,
            std_error,
            bump: plan.bump,
            reference: r,
            z,
        });
    }
    Ok(GreeksReport {
        instrument: i.name.name(),
        paths: s.paths,
        seed: s.seed,
        generator: s.generator,
        transform: s.transform,
        backend: exec.kind().to_string(),
        mode: s.mode,
        antithetic: s.antithetic,
        wall_seconds: start.elapsed().as_secs_f64(),
        greeks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn zero_volatility_is_refused_by_name() {
        let mut p = BTreeMap::new();
        p.insert("vol".to_string(), "0".to_string());
        let i = Instrument::new(InstrumentName::EuropeanCall, &p).unwrap();
        let e = plans(&i, &RunSettings::default()).err().unwrap().to_string();
        assert!(e.contains("vol"), "{e}");
    }

    #[test]
    fn every_instrument_gets_its_greeks() {
        for name in InstrumentName::ALL {
            let i = Instrument::new(name, &BTreeMap::new()).unwrap();
            let p = plans(&i, &RunSettings::default()).unwrap();
            let names: Vec<_> = p.iter().map(|p| p.greek).collect();
            let want: &[&str] =
                if name == InstrumentName::LookbackGarch { &["delta", "gamma"] } else { &["delta", "gamma", "vega"] };
            assert_eq!(names, want, "{}", name.name());
            for plan in &p {
                if let KernelLegs::Path(legs) = &plan.legs {
                    let used = &legs.legs[..legs.count as usize];
                    assert!(used.iter().all(|l| l.normals == used[0].normals));
                }
            }
        }
    }
}
