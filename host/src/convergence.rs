//! What `--plot` draws: each estimator's price with its error bar at growing numbers of paths,
//! and a sample of the payoffs.
//!
//! The estimates at `2^10, 2^11, ...` paths are prefixes of one run per estimator (the exact
//! sums of the first `n` samples are extended by the next batch), so a curve costs one run of
//! the full length, and every point is the estimate a run of that many paths would report:
//!
//! - plain and control variate: the first `n` paths of the run (the control variate is
//!   computed from the same sums, as in [`crate::instruments::price`]);
//! - antithetic: the first `n / 2` pairs, `n` paths simulated;
//! - QMC (one-asset instruments): the first `n / 16` points of each of 16 replicates.
//!
//! The payoff sample is the discounted payoff of the run's first paths, computed on the CPU by
//! the same per-path functions (the same values as the kernels' in exact mode).

use rayon::prelude::*;
use warpmc_kernels::accum::PairMoments;
use warpmc_kernels::{Exact, Fast, basket, instrument};

use crate::Result;
use crate::backend::Executor;
use crate::instruments::{Instrument, KernelLegs, RunSettings, estimates, run_range};
use crate::plot::{Estimate, Series};
use crate::pricing::Mode;
use crate::qmc::QmcSettings;

/// The smallest path count drawn.
pub const FIRST: u64 = 1 << 10;

/// The path counts of the curves: the powers of two from [`FIRST`] below `paths`, then `paths`.
pub fn counts(paths: u64) -> Vec<u64> {
    let mut out: Vec<u64> = (10..63).map(|k| 1u64 << k).take_while(|&c| c < paths).collect();
    out.push(paths);
    out
}

/// The sums of the first `c` samples of `legs` for each count `c` of `counts`, by prefixes of
/// one run.
fn mc_series(
    exec: &dyn Executor,
    s: &RunSettings,
    legs: &KernelLegs,
    counts: &[u64],
) -> Result<Vec<(u64, PairMoments)>> {
    let mut total = PairMoments::ZERO;
    let mut done = 0;
    let mut out = Vec::with_capacity(counts.len());
    for &c in counts {
        if c > done {
            total.merge(&run_range(exec, legs, s, done..c)?);
            done = c;
        }
        out.push((c, total));
    }
    Ok(out)
}

/// The plain, antithetic, control-variate and (one-asset instruments) QMC curves of `i` on the
/// settings of `s` up to `s.paths` paths (the settings' own antithetic and QMC choices are
/// replaced by the four estimators).
pub fn convergence(exec: &dyn Executor, i: &Instrument, s: &RunSettings) -> Result<Vec<Series>> {
    let plain_settings = RunSettings { antithetic: false, qmc: None, ..s.clone() };
    plain_settings.validate_for(i)?;
    let counts = counts(s.paths);
    let estimate = |paths: u64, (price, std_error): (f64, f64)| Estimate { paths, price, std_error };
    let plain = mc_series(exec, &plain_settings, &i.kernel_legs(s.transform, false), &counts)?;
    let mut series = vec![
        Series {
            label: "plain".into(),
            points: plain
                .iter()
                .map(|(c, m)| {
                    let (p, se, _) = estimates(i, std::slice::from_ref(m));
                    estimate(*c, (p, se))
                })
                .collect(),
        },
        Series {
            label: "control variate".into(),
            points: plain
                .iter()
                .filter_map(|(c, m)| {
                    let (_, _, cv) = estimates(i, std::slice::from_ref(m));
                    cv.map(|cv| estimate(*c, (cv.price, cv.std_error)))
                })
                .collect(),
        },
    ];
    let pairs: Vec<u64> = counts.iter().map(|c| c / 2).filter(|&c| c >= 2).collect();
    let anti = RunSettings { antithetic: true, ..plain_settings.clone() };
    let anti_points = mc_series(exec, &anti, &i.kernel_legs(s.transform, true), &pairs)?;
    series.push(Series {
        label: "antithetic".into(),
        points: anti_points
            .iter()
            .map(|(c, m)| {
                let (p, se, _) = estimates(i, std::slice::from_ref(m));
                estimate(2 * c, (p, se))
            })
            .collect(),
    });
    let q = QmcSettings::default();
    let r = q.replicates as u64;
    let qmc_counts: Vec<u64> = counts.iter().copied().filter(|c| c % r == 0 && c / r >= 2).collect();
    let qs = RunSettings { qmc: Some(q), paths: qmc_counts.last().copied().unwrap_or(0), ..plain_settings };
    if let (Some(_), Ok(())) = (qmc_counts.last(), qs.validate_for(i)) {
        let KernelLegs::Path(legs) = i.kernel_legs(s.transform, false) else {
            unreachable!("validate_for refuses QMC for the basket")
        };
        let dims = q.dimensions(i.steps);
        let directions = q.directions(dims)?;
        let params = q.params(dims);
        let mut parts = vec![PairMoments::ZERO; q.replicates as usize];
        let mut done = 0;
        let mut points = Vec::new();
        for &c in &qmc_counts {
            let upto = c / r;
            for (rep, part) in parts.iter_mut().enumerate() {
                let keys = q.keys(s.seed, rep as u32, dims);
                part.merge(&exec.instrument_qmc(&legs, &params, &directions, &keys, done..upto, s.mode)?);
            }
            done = upto;
            let (p, se, _) = estimates(i, &parts);
            points.push(estimate(c, (p, se)));
        }
        series.push(Series { label: format!("QMC (Sobol', {} replicates)", q.replicates), points });
    }
    Ok(series)
}

/// The discounted payoffs of paths `0..count` of `i` on the settings of `s` (Monte Carlo,
/// plain), on the CPU.
pub fn payoff_sample(i: &Instrument, s: &RunSettings, count: u64) -> Vec<f64> {
    let scale = i.discount() * i.unit();
    let legs = i.kernel_legs(s.transform, false);
    let one = |k: u64| -> f64 {
        let x = crate::with_generator!(s.generator, G => {
            let start = <G as warpmc_kernels::rng::Generator>::stream(s.seed, k);
            match (&legs, s.mode) {
                (KernelLegs::Path(l), Mode::Exact) => instrument::sample_legs_with::<_, Exact>(l, || start).0,
                (KernelLegs::Path(l), Mode::Fast) => instrument::sample_legs_with::<_, Fast>(l, || start).0,
                (KernelLegs::Basket(j, c), Mode::Exact) => basket::sample_with::<_, Exact>(j, c, || start).0,
                (KernelLegs::Basket(j, c), Mode::Fast) => basket::sample_with::<_, Fast>(j, c, || start).0,
            }
        });
        scale * x
    };
    (0..count).into_par_iter().map(one).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_powers_of_two_then_the_total() {
        assert_eq!(counts(1 << 12), vec![1024, 2048, 4096]);
        assert_eq!(counts(5000), vec![1024, 2048, 4096, 5000]);
        assert_eq!(counts(100), vec![100]);
    }
}
