//! Randomised quasi-Monte Carlo for the one-asset instruments: Sobol' points through a Brownian
//! bridge ([`warpmc_kernels::qmc`]), in independent replicates that give an honest error bar.
//!
//! **Estimator.** A run of `paths` samples is `R` replicates of `M = paths / R` points each.
//! Replicate `r` randomises the first `M` points of the Sobol' sequence (Joe and Kuo's
//! direction numbers, [`crate::sobol`]) with its own keys (Owen's scrambling, hashed, or a
//! digital shift; [`warpmc_kernels::sobol::randomisation`]); every randomised point is uniform,
//! so each replicate's mean `m_r` is an unbiased estimate, and the `m_r` are independent. The
//! price is their mean and its standard error `sd(m_r) / √R` (Owen 1997; L'Ecuyer and Lemieux
//! 2002): an error bar as honest as Monte Carlo's, from `R` values, so `R` should not be tiny
//! (the default is 16). `M` a power of two keeps each replicate a whole net, where Sobol'
//! points are best; other `M` are allowed.
//!
//! **Control variate.** The kernels compute each path's control as in Monte Carlo. The
//! coefficient `β` is estimated from all points pooled, each replicate's mean is adjusted by it,
//! and the standard error is again the adjusted means' spread over the replicates.
//!
//! **Limits.** The bridge needs `n.next_power_of_two()` coordinates for `n` dates, the plain
//! construction `n`; the table has 21,201 dimensions, so at most 16,384 dates with the bridge
//! and 21,201 without. At most 2^32 points a replicate (the sequence's period).

use serde::Serialize;
use warpmc_kernels::accum::PairMoments;
use warpmc_kernels::qmc::{QmcParams, construction, dimensions_needed, scramble};
use warpmc_kernels::sobol::randomisation;

use crate::sobol::{MAX_DIMENSIONS, SobolDirections};
use crate::{Error, Result};

/// How the points are randomised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Scramble {
    /// Owen's nested scrambling, hashed (Burley 2020).
    #[default]
    Owen,
    /// A random digital shift.
    Shift,
}

/// How a point's coordinates become the path's normals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Construction {
    /// The Brownian bridge: coordinate 0 for the end point, then midpoints level by level.
    #[default]
    Bridge,
    /// Coordinate `i` for the increment of step `i + 1`.
    Increments,
}

/// The least and the most replicates.
pub const REPLICATES_MIN: u32 = 2;
pub const REPLICATES_MAX: u32 = 4096;

/// Randomised QMC settings of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct QmcSettings {
    pub replicates: u32,
    pub scramble: Scramble,
    pub construction: Construction,
}

impl Default for QmcSettings {
    fn default() -> Self {
        Self { replicates: 16, scramble: Scramble::Owen, construction: Construction::Bridge }
    }
}

impl QmcSettings {
    /// Check against a run of `paths` samples of `steps` dates.
    pub fn validate(&self, paths: u64, steps: u32) -> Result<()> {
        let r = self.replicates;
        if !(REPLICATES_MIN..=REPLICATES_MAX).contains(&r) {
            return Err(Error::invalid("replicates", r, format!("[{REPLICATES_MIN}, {REPLICATES_MAX}]")));
        }
        if !paths.is_multiple_of(r as u64) || paths / (r as u64) < 2 || paths / (r as u64) > 1 << 32 {
            return Err(Error::invalid(
                "paths",
                paths,
                format!("a multiple of --replicates ({r}) with 2 to 2^32 points a replicate (a power of two is best)"),
            ));
        }
        let limit = match self.construction {
            Construction::Bridge => MAX_DIMENSIONS.next_power_of_two() / 2,
            Construction::Increments => MAX_DIMENSIONS,
        };
        if steps > limit {
            return Err(Error::invalid(
                "steps",
                steps,
                format!(
                    "[1, {limit}] with QMC and the {} construction (the Sobol' table has {MAX_DIMENSIONS} dimensions)",
                    self.construction.name()
                ),
            ));
        }
        Ok(())
    }

    /// Points per replicate.
    pub fn points(&self, paths: u64) -> u64 {
        paths / self.replicates as u64
    }

    /// The kernels' parameters for tables of `dims` dimensions.
    pub fn params(&self, dims: u32) -> QmcParams {
        QmcParams {
            dims,
            scramble: match self.scramble {
                Scramble::Owen => scramble::OWEN,
                Scramble::Shift => scramble::SHIFT,
            },
            construction: self.construction_code(),
            pad: 0,
        }
    }

    fn construction_code(&self) -> u32 {
        match self.construction {
            Construction::Bridge => construction::BRIDGE,
            Construction::Increments => construction::INCREMENTS,
        }
    }

    /// Coordinates a path of `steps` dates reads.
    pub fn dimensions(&self, steps: u32) -> u32 {
        dimensions_needed(steps, self.construction_code())
    }

    /// The direction numbers of the first `dims` dimensions, as the kernels read them.
    pub fn directions(&self, dims: u32) -> Result<Vec<u32>> {
        Ok(SobolDirections::new(dims)?.as_slice().to_vec())
    }

    /// Replicate `r`'s key for each of `dims` dimensions (the Owen seed or the shift).
    pub fn keys(&self, seed: u64, r: u32, dims: u32) -> Vec<u32> {
        (0..dims)
            .map(|d| {
                let k = randomisation(seed, r, d);
                if self.scramble == Scramble::Shift { k.shift } else { k.scramble }
            })
            .collect()
    }
}

impl Construction {
    pub fn name(self) -> &'static str {
        match self {
            Construction::Bridge => "bridge",
            Construction::Increments => "increments",
        }
    }
}

impl Scramble {
    pub fn name(self) -> &'static str {
        match self {
            Scramble::Owen => "owen",
            Scramble::Shift => "shift",
        }
    }
}

/// Mean and standard error of the mean of independent values (the replicates' estimates).
pub fn mean_se_of(values: &[f64]) -> (f64, f64) {
    let r = values.len() as f64;
    let mean = values.iter().sum::<f64>() / r;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (r - 1.0);
    (mean, (var / r).sqrt())
}

/// Each replicate's means of the payoff and of the control.
pub fn replicate_means(parts: &[PairMoments]) -> (Vec<f64>, Vec<f64>) {
    parts
        .iter()
        .map(|m| {
            let n = m.n as f64;
            (m.sum_a.to_f64() / n, m.sum_b.to_f64() / n)
        })
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_checked_against_the_run() {
        let q = QmcSettings::default();
        q.validate(1 << 20, 256).unwrap();
        q.validate(48, 16384).unwrap();
        let field = |e: Error| match e {
            Error::InvalidParameter { field, .. } => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(field(q.validate(1000, 1).unwrap_err()), "paths");
        assert_eq!(field(q.validate(16, 1).unwrap_err()), "paths");
        assert_eq!(field(q.validate(1 << 20, 16385).unwrap_err()), "steps");
        let inc = QmcSettings { construction: Construction::Increments, ..q };
        inc.validate(1 << 20, 21201).unwrap();
        assert_eq!(field(inc.validate(1 << 20, 21202).unwrap_err()), "steps");
        let few = QmcSettings { replicates: 1, ..q };
        assert_eq!(field(few.validate(1 << 20, 1).unwrap_err()), "replicates");
        assert_eq!(q.dimensions(256), 256);
        assert_eq!(q.dimensions(250), 256);
        assert_eq!(inc.dimensions(250), 250);
    }

    #[test]
    fn replicates_have_their_own_keys() {
        let q = QmcSettings::default();
        let (a, b) = (q.keys(1, 0, 64), q.keys(1, 1, 64));
        assert_ne!(a, b);
        assert_eq!(a, q.keys(1, 0, 64));
        assert_ne!(a, q.keys(2, 0, 64));
        let s = QmcSettings { scramble: Scramble::Shift, ..q };
        assert_ne!(s.keys(1, 0, 64), a);
    }

    #[test]
    fn replicate_statistics() {
        let (m, se) = mean_se_of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m, 2.5);
        assert!((se - (5.0f64 / 3.0 / 4.0).sqrt()).abs() < 1e-15);
    }
}
