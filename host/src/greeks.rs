//! Greeks of the one-asset instruments: delta, gamma and vega, each with its standard error.
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
//!
//! The pathwise estimators are unbiased where the payoff is Lipschitz in the parameter and the
//! path is differentiable in it (Broadie and Glasserman 1996; Glasserman, *Monte Carlo Methods
//! in Financial Engineering*, 7.2); a knock-out barrier's payoff jumps, so it gets differences.
//! The differences bump the spot by [`SPOT_BUMP`] of itself and `σ` by [`VOL_BUMP`] of itself,
//! and carry a bias of order `h²` (a relative `10⁻⁴` or so on the contracts tested), small
//! against their standard errors at the path counts used.
//!
//! References: Black-Scholes delta, gamma and vega for the Europeans, and the discrete geometric
//! Asian's (both analytic, [`crate::closed_form`]); the z-score of each estimate against them.

use std::time::Instant;

use serde::Serialize;
use warpmc_kernels::accum::PairMoments;
use warpmc_kernels::instrument::{Legs, PathSteps, flags};

use crate::backend::Executor;
use crate::closed_form::{self, OptionType};
use crate::distributions::Transform;
use crate::generators::GeneratorKind;
use crate::instruments::{Instrument, InstrumentName, RunSettings};
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
    legs: Legs,
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
        out.push(Plan {
            greek: "delta",
            legs: Legs::single(with_flag(base, flags::PATHWISE_DELTA)),
            scale: disc,
            method: Method::Pathwise,
            bump: None,
        });
        let (a, b) = (with_flag(steps(&up), flags::PATHWISE_DELTA), with_flag(steps(&down), flags::PATHWISE_DELTA));
        out.push(Plan {
            greek: "gamma",
            legs: legs3(a, b, b, [0.5 / hu, -0.5 / hu, 0.0], 2),
            scale: disc / u,
            method: Method::PathwiseDifference,
            bump: Some(h),
        });
        out.push(Plan {
            greek: "vega",
            legs: Legs::single(with_flag(base, flags::PATHWISE_VEGA)),
            scale: disc * u,
            method: Method::Pathwise,
            bump: None,
        });
        return Ok(out);
    }
    let (a, b) = (steps(&up), steps(&down));
    out.push(Plan {
        greek: "delta",
        legs: legs3(a, b, b, [0.5 / hu, -0.5 / hu, 0.0], 2),
        scale: disc,
        method: Method::FiniteDifference,
        bump: Some(h),
    });
    out.push(Plan {
        greek: "gamma",
        legs: legs3(base, a, b, [-2.0 / (hu * hu), 1.0 / (hu * hu), 1.0 / (hu * hu)], 3),
        scale: disc / u,
        method: Method::FiniteDifference,
        bump: Some(h),
    });
    if i.name != InstrumentName::LookbackGarch {
        let hv = VOL_BUMP * i.vol;
        let (vu, vd) = (bumped(&|c| c.vol += hv)?, bumped(&|c| c.vol -= hv)?);
        out.push(Plan {
            greek: "vega",
            legs: legs3(steps(&vu), steps(&vd), base, [0.5 / hv, -0.5 / hv, 0.0], 2),
            scale: disc * u,
            method: Method::FiniteDifference,
            bump: Some(hv),
        });
    }
    Ok(out)
}

/// The closed-form Greeks of `i` where they exist: `(delta, gamma, vega)`.
pub fn reference_greeks(i: &Instrument) -> Option<(f64, f64, f64)> {
    let m = closed_form::Market {
        spot: i.spot,
        rate: i.rate,
        dividend_yield: i.dividend,
        volatility: i.vol,
        maturity: i.maturity,
    };
    let t = if i.put { OptionType::Put } else { OptionType::Call };
    let g = match i.name {
        InstrumentName::EuropeanCall | InstrumentName::EuropeanPut => closed_form::black_scholes(&m, i.strike, t),
        InstrumentName::AsianGeometric => closed_form::geometric_asian(&m, i.strike, i.steps, t),
        _ => return None,
    }
    .ok()?;
    Some((g.delta, g.gamma, g.vega))
}

/// Exact sums of `legs` over samples `0..s.paths`, in batches the backend can take.
fn run_legs(exec: &dyn Executor, legs: &Legs, work_per_path: u32, s: &RunSettings) -> Result<PairMoments> {
    let batch = exec.batch_paths(work_per_path).max(1);
    let mut total = PairMoments::ZERO;
    let mut first = 0;
    while first < s.paths {
        let end = (first + batch).min(s.paths);
        total.merge(&exec.instrument_legs(legs, s.generator, s.seed, first..end, s.mode)?);
        first = end;
    }
    if total.n != s.paths {
        return Err(Error::Gpu(format!("the backend accounted for {} of {} samples", total.n, s.paths)));
    }
    if total.out_of_range > 0 {
        return Err(Error::OutOfRange(format!(
            "{} of {} Greek samples left the accumulators' range: the estimate would be biased",
            total.out_of_range, total.n
        )));
    }
    Ok(total)
}

/// Delta, gamma and vega of `i` (see the module docs), each on the paths of `s`.
pub fn greeks(exec: &dyn Executor, i: &Instrument, s: &RunSettings) -> Result<GreeksReport> {
    i.validate()?;
    s.validate(true)?;
    let start = Instant::now();
    let reference = reference_greeks(i);
    let passes = if s.antithetic { 2 } else { 1 } * if i.name == InstrumentName::LookbackGarch { 2 } else { 1 };
    let mut greeks = Vec::new();
    for plan in plans(i, s)? {
        let work = i.steps.saturating_mul(passes).saturating_mul(plan.legs.count);
        let m = run_legs(exec, &plan.legs, work, s)?;
        let n = m.n as f64;
        let mean = m.sum_a.to_f64() / n;
        let var = ((m.sum_aa.to_f64() - n * mean * mean) / (n - 1.0)).max(0.0);
        let value = plan.scale * mean;
        let std_error = plan.scale.abs() * (var / n).sqrt();
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
                let used = &plan.legs.legs[..plan.legs.count as usize];
                assert!(used.iter().all(|l| l.normals == used[0].normals));
            }
        }
    }
}
