//! Variance reduction judged the way it pays: the error reached in equal time.
//!
//! A variance reduction factor says how many times fewer samples an estimator needs; it does not
//! say whether each sample costs more. [`efficiency`] runs an instrument twice on the same seed
//! and `paths`, plainly and with antithetic variates (each sample then simulates two paths), and
//! compares `std_error² × wall time`, the variance the run would reach in one second:
//!
//! - antithetic: `speed-up = (se_plain² t_plain) / (se_anti² t_anti)`, measured; its variance
//!   reduction per simulated path is `se_plain² / (2 se_anti²)` (a pair counts as two paths);
//! - control variate: it comes from the plain run itself (the kernels compute the control on
//!   every path, in both runs), so at equal time its speed-up is its variance reduction factor;
//! - randomised QMC (one-asset instruments, [`crate::qmc`]): a third run on the same number of
//!   paths, in 16 replicates of Sobol' points through a Brownian bridge, measured like the
//!   antithetic run (its paths cost more than a generator's: each coordinate is a sum of
//!   direction numbers, a scramble and an inversion).
//!
//! A speed-up above 1 means that estimator reaches a given error sooner.

use serde::Serialize;

use crate::Result;
use crate::backend::Executor;
use crate::instruments::{Instrument, InstrumentReport, RunSettings, price};
use crate::qmc::QmcSettings;

/// One estimator's error, time and gain over the plain one.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimator {
    /// `plain`, `antithetic`, `control-variate` or `qmc`.
    pub estimator: &'static str,
    pub price: f64,
    pub std_error: f64,
    /// Paths simulated (an antithetic sample is two).
    pub paths_simulated: u64,
    pub wall_seconds: f64,
    /// Variance reduction per simulated path against the plain estimator (1 for plain).
    pub variance_reduction: f64,
    /// `(se_plain² t_plain) / (se² t)`: how many times less time it needs for the same error.
    pub speedup_at_equal_time: f64,
}

/// The three estimators of one instrument.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EfficiencyReport {
    pub instrument: &'static str,
    pub paths: u64,
    pub seed: u64,
    pub backend: String,
    pub estimators: Vec<Estimator>,
    /// The runs in full.
    pub plain: InstrumentReport,
    pub antithetic: InstrumentReport,
    pub qmc: Option<InstrumentReport>,
    /// Why there is no QMC run, when there is none.
    pub qmc_note: Option<String>,
}

/// Run `i` plainly and with antithetic variates (`s.antithetic` is ignored) and compare the
/// estimators at equal time (module docs).
pub fn efficiency(exec: &dyn Executor, i: &Instrument, s: &RunSettings) -> Result<EfficiencyReport> {
    let plain = price(exec, i, &RunSettings { antithetic: false, qmc: None, ..s.clone() })?;
    let anti = price(exec, i, &RunSettings { antithetic: true, qmc: None, ..s.clone() })?;
    let q = RunSettings { antithetic: false, qmc: Some(QmcSettings::default()), ..s.clone() };
    let (qmc, qmc_note) = match q.validate_for(i) {
        Ok(()) => (Some(price(exec, i, &q)?), None),
        Err(e) => (None, Some(format!("no QMC estimator: {e}"))),
    };
    let work = |se: f64, t: f64| se * se * t;
    let base = work(plain.std_error, plain.wall_seconds);
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::INFINITY };
    let mut estimators = vec![
        Estimator {
            estimator: "plain",
            price: plain.price,
            std_error: plain.std_error,
            paths_simulated: plain.paths,
            wall_seconds: plain.wall_seconds,
            variance_reduction: 1.0,
            speedup_at_equal_time: 1.0,
        },
        Estimator {
            estimator: "antithetic",
            price: anti.price,
            std_error: anti.std_error,
            paths_simulated: 2 * anti.paths,
            wall_seconds: anti.wall_seconds,
            variance_reduction: ratio(plain.std_error * plain.std_error, 2.0 * anti.std_error * anti.std_error),
            speedup_at_equal_time: ratio(base, work(anti.std_error, anti.wall_seconds)),
        },
    ];
    if let Some(cv) = plain.control_variate {
        estimators.push(Estimator {
            estimator: "control-variate",
            price: cv.price,
            std_error: cv.std_error,
            paths_simulated: plain.paths,
            wall_seconds: plain.wall_seconds,
            variance_reduction: cv.variance_reduction,
            speedup_at_equal_time: ratio(base, work(cv.std_error, plain.wall_seconds)),
        });
    }
    if let Some(r) = &qmc {
        estimators.push(Estimator {
            estimator: "qmc",
            price: r.price,
            std_error: r.std_error,
            paths_simulated: r.paths,
            wall_seconds: r.wall_seconds,
            variance_reduction: ratio(plain.std_error * plain.std_error, r.std_error * r.std_error),
            speedup_at_equal_time: ratio(base, work(r.std_error, r.wall_seconds)),
        });
    }
    Ok(EfficiencyReport {
        instrument: plain.instrument,
        paths: s.paths,
        seed: s.seed,
        backend: plain.backend.clone(),
        estimators,
        plain,
        antithetic: anti,
        qmc,
        qmc_note,
    })
}
