//! Pricing jobs: validated input, a run on a backend, a report with error bars.
//!
//! The only product so far is GPU Gems 3's Asian basket (see [`warpmc_kernels::asian`] for the
//! model and the payoff). Data flows one way: [`PricingJob`] (validated) -> kernel coefficients
//! -> a backend's exact sums ([`PairMoments`]) -> [`PriceReport`].

use std::time::Instant;

use serde::Serialize;
use warpmc_kernels::accum::PairMoments;
use warpmc_kernels::asian::AsianBasketSteps;

use crate::backend::Executor;
use crate::{Error, Result};

/// Two-sided 95% quantile of the standard normal distribution, Φ⁻¹(0.975).
pub const Z_95: f64 = 1.959_963_984_540_054;

/// Arithmetic mode of a job: see [`warpmc_kernels::mode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The project's portable math: the same bits on the CPU and the GPU.
    Exact,
    /// The GPU's approximate instructions (`std` on the CPU): faster, within a tolerance.
    Fast,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Exact => "exact",
            Mode::Fast => "fast",
        }
    }
}

/// The Asian basket option of GPU Gems 3 Listing 37-8 (see [`warpmc_kernels::asian`]).
///
/// Annualised, continuously compounded parameters under the risk-neutral measure.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct AsianBasket {
    /// Initial price of asset a.
    pub spot_a: f64,
    /// Initial price of asset b.
    pub spot_b: f64,
    /// Volatility of asset a (0.2 = 20% a year).
    pub vol_a: f64,
    /// Volatility of asset b.
    pub vol_b: f64,
    /// Correlation of the two assets' Brownian motions.
    pub corr: f64,
    /// Risk-free rate: the drift of both assets and the discount rate.
    pub rate: f64,
    /// Time to maturity in years; the averaging dates are `i * maturity / steps`.
    pub maturity: f64,
}

impl Default for AsianBasket {
    /// Spots 100 and 100, volatilities 20% and 30%, correlation 0.5, rate 5%, one year.
    fn default() -> Self {
        Self { spot_a: 100.0, spot_b: 100.0, vol_a: 0.2, vol_b: 0.3, corr: 0.5, rate: 0.05, maturity: 1.0 }
    }
}

/// Allowed ranges (documented in README.md). Wide enough for any sensible contract; the bounds
/// keep single-precision paths finite.
pub mod limits {
    pub const SPOT_MAX: f64 = 1e12;
    pub const VOL_MAX: f64 = 5.0;
    pub const RATE_ABS_MAX: f64 = 1.0;
    pub const MATURITY_MAX: f64 = 100.0;
    pub const STEPS_MAX: u32 = 1_000_000;
    pub const PATHS_MIN: u64 = 2;
    pub const PATHS_MAX: u64 = 1 << 40;
}

fn check_open_closed(field: &'static str, v: f64, hi: f64) -> Result<()> {
    if v > 0.0 && v <= hi { Ok(()) } else { Err(Error::invalid(field, v, format!("(0, {hi}]"))) }
}

fn check_closed(field: &'static str, v: f64, lo: f64, hi: f64) -> Result<()> {
    if v >= lo && v <= hi { Ok(()) } else { Err(Error::invalid(field, v, format!("[{lo}, {hi}]"))) }
}

impl AsianBasket {
    /// Check every parameter against its range (NaN is never in range).
    pub fn validate(&self) -> Result<()> {
        check_open_closed("spot_a", self.spot_a, limits::SPOT_MAX)?;
        check_open_closed("spot_b", self.spot_b, limits::SPOT_MAX)?;
        check_open_closed("vol_a", self.vol_a, limits::VOL_MAX)?;
        check_open_closed("vol_b", self.vol_b, limits::VOL_MAX)?;
        check_closed("corr", self.corr, -1.0, 1.0)?;
        check_closed("rate", self.rate, -limits::RATE_ABS_MAX, limits::RATE_ABS_MAX)?;
        check_open_closed("maturity", self.maturity, limits::MATURITY_MAX)?;
        Ok(())
    }

    /// The larger spot: the unit in which the kernels simulate.
    pub fn scale(&self) -> f64 {
        self.spot_a.max(self.spot_b)
    }

    /// Per-step kernel coefficients for `steps` dates (computed in `f64`, rounded once to `f32`).
    pub fn kernel_steps(&self, steps: u32) -> AsianBasketSteps {
        let dt = self.maturity / steps as f64;
        let sq = dt.sqrt();
        let scale = self.scale();
        AsianBasketSteps {
            a0: (self.spot_a / scale) as f32,
            b0: (self.spot_b / scale) as f32,
            mu_a: ((self.rate - 0.5 * self.vol_a * self.vol_a) * dt) as f32,
            sig_aa: (self.vol_a * sq) as f32,
            mu_b: ((self.rate - 0.5 * self.vol_b * self.vol_b) * dt) as f32,
            sig_ab: (self.corr * self.vol_b * sq) as f32,
            sig_bb: (self.vol_b * (1.0 - self.corr * self.corr).max(0.0).sqrt() * sq) as f32,
            steps,
        }
    }

    /// Discount factor `exp(-rate * maturity)`.
    pub fn discount(&self) -> f64 {
        (-self.rate * self.maturity).exp()
    }
}

/// Standard normal CDF.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

/// `E[max(A, B)]` for jointly log-normal `A = exp(X)`, `B = exp(Y)` with `X ~ N(ma, va)`,
/// `Y ~ N(mb, vb)`, `Cov(X, Y) = c`: `E[B] + E[(A - B)+]`, the latter by Margrabe's formula.
pub fn expected_max_lognormal(ma: f64, va: f64, mb: f64, vb: f64, c: f64) -> f64 {
    let ea = (ma + 0.5 * va).exp();
    let eb = (mb + 0.5 * vb).exp();
    let v2 = (va + vb - 2.0 * c).max(0.0);
    if v2 < 1e-300 {
        // A / B is constant: max(A, B) is whichever starts higher.
        return if ma >= mb { ea } else { eb };
    }
    let v = v2.sqrt();
    let d1 = ((ea / eb).ln() + 0.5 * v2) / v;
    eb + ea * normal_cdf(d1) - eb * normal_cdf(d1 - v)
}

/// Closed-form expectation of the unfloored path value `mean_i s_i - s_n` for the simulated
/// model, computed from the `f32` coefficients the kernels actually use (in units of the larger
/// spot, undiscounted). Used to validate every run and as a control variate.
pub fn unfloored_expectation(p: &AsianBasketSteps) -> f64 {
    let (a0, b0) = (p.a0 as f64, p.b0 as f64);
    let (mu_a, mu_b) = (p.mu_a as f64, p.mu_b as f64);
    let (saa, sab, sbb) = (p.sig_aa as f64, p.sig_ab as f64, p.sig_bb as f64);
    let var_a = saa * saa;
    let var_b = sab * sab + sbb * sbb;
    let cov = saa * sab;
    let n = p.steps as f64;
    let at = |i: f64| expected_max_lognormal(a0.ln() + i * mu_a, i * var_a, b0.ln() + i * mu_b, i * var_b, i * cov);
    let mean: f64 = (1..=p.steps).map(|i| at(i as f64)).sum::<f64>() / n;
    mean - at(n)
}

/// A pricing job.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PricingJob {
    pub option: AsianBasket,
    /// Number of averaging dates (GPU Gems 3 uses 256).
    pub steps: u32,
    /// Number of Monte Carlo paths; path `k` uses stream `k` of `seed`.
    pub paths: u64,
    pub seed: u64,
    pub mode: Mode,
}

impl PricingJob {
    pub fn validate(&self) -> Result<()> {
        self.option.validate()?;
        if !(1..=limits::STEPS_MAX).contains(&self.steps) {
            return Err(Error::invalid("steps", self.steps, format!("[1, {}]", limits::STEPS_MAX)));
        }
        if !(limits::PATHS_MIN..=limits::PATHS_MAX).contains(&self.paths) {
            return Err(Error::invalid("paths", self.paths, format!("[{}, 2^40]", limits::PATHS_MIN)));
        }
        Ok(())
    }
}

/// Mean and standard error of per-path values, and of a control-variate estimate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimates {
    /// Mean payoff (units of the larger spot, undiscounted).
    pub mean: f64,
    /// Sample standard deviation of the payoff.
    pub std_dev: f64,
    /// Mean of the unfloored value.
    pub control_mean: f64,
    pub control_std_dev: f64,
    /// Correlation between payoff and unfloored value.
    pub correlation: f64,
}

impl Estimates {
    /// From exact sums over `n >= 2` in-range paths.
    pub fn from_moments(m: &PairMoments) -> Self {
        let n = m.n as f64;
        let (sa, sb) = (m.sum_a.to_f64(), m.sum_b.to_f64());
        let mean = sa / n;
        let control_mean = sb / n;
        let var = ((m.sum_aa.to_f64() - sa * mean) / (n - 1.0)).max(0.0);
        let var_c = ((m.sum_bb.to_f64() - sb * control_mean) / (n - 1.0)).max(0.0);
        let cov = (m.sum_ab.to_f64() - sa * control_mean) / (n - 1.0);
        let correlation = if var > 0.0 && var_c > 0.0 { cov / (var * var_c).sqrt() } else { 0.0 };
        Self { mean, std_dev: var.sqrt(), control_mean, control_std_dev: var_c.sqrt(), correlation }
    }
}

/// What `warpmc price` reports.
#[derive(Clone, Debug, Serialize)]
pub struct PriceReport {
    /// Discounted price estimate.
    pub price: f64,
    /// Its standard error.
    pub std_error: f64,
    /// 95% confidence interval `price ± 1.96 std_error`.
    pub ci95: [f64; 2],
    pub paths: u64,
    pub steps: u32,
    pub seed: u64,
    pub mode: Mode,
    /// `"cpu"` or `"gpu"`.
    pub backend: String,
    /// The device: GPU name, or CPU thread count.
    pub device: String,
    pub wall_seconds: f64,
    pub paths_per_second: f64,
    pub msteps_per_second: f64,
    /// Validation: the unfloored value's Monte Carlo mean against its closed form.
    pub check: ControlCheck,
    /// The price with the unfloored value as control variate (same paths; lower variance).
    pub price_control_variate: f64,
    pub std_error_control_variate: f64,
    pub option: AsianBasket,
}

/// The closed-form check that runs with every price.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ControlCheck {
    /// Discounted Monte Carlo mean of `mean_i s_i - s_n`.
    pub monte_carlo: f64,
    /// Its discounted closed-form expectation.
    pub closed_form: f64,
    pub std_error: f64,
    /// `(monte_carlo - closed_form) / std_error`: within ±4 unless something is wrong.
    pub z_score: f64,
}

/// Run `job` on `exec` and report. `progress(done, total)` is called after each batch of paths.
pub fn price_asian_basket_with_progress(
    exec: &dyn Executor,
    job: &PricingJob,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<PriceReport> {
    job.validate()?;
    let steps = job.option.kernel_steps(job.steps);
    let start = Instant::now();
    let batch = exec.batch_paths(job.steps).max(1);
    let mut total = PairMoments::ZERO;
    let mut first = 0;
    while first < job.paths {
        let end = (first + batch).min(job.paths);
        let part = exec.asian_basket(&steps, job.seed, first..end, job.mode)?;
        total.merge(&part);
        first = end;
        progress(first, job.paths);
    }
    let wall = start.elapsed().as_secs_f64();
    if total.n != job.paths {
        return Err(Error::Gpu(format!("the backend accounted for {} of {} paths", total.n, job.paths)));
    }
    if total.out_of_range > 0 {
        return Err(Error::OutOfRange(format!(
            "{} of {} paths left the representable range (a simulated price above 2^31 times the larger \
             spot, or an overflow): the price would be biased. The volatilities, rate and maturity are too \
             extreme for this model; reduce --vol-a/--vol-b, --rate or --maturity",
            total.out_of_range, job.paths
        )));
    }
    Ok(report(exec, job, &steps, &total, wall))
}

/// [`price_asian_basket_with_progress`] without progress reports.
pub fn price_asian_basket(exec: &dyn Executor, job: &PricingJob) -> Result<PriceReport> {
    price_asian_basket_with_progress(exec, job, &mut |_, _| {})
}

fn report(exec: &dyn Executor, job: &PricingJob, steps: &AsianBasketSteps, m: &PairMoments, wall: f64) -> PriceReport {
    let e = Estimates::from_moments(m);
    let n = m.n as f64;
    let unit = job.option.scale() * job.option.discount();
    let price = unit * e.mean;
    let std_error = unit * e.std_dev / n.sqrt();
    let expected = unfloored_expectation(steps);
    let control_se = unit * e.control_std_dev / n.sqrt();
    let check = ControlCheck {
        monte_carlo: unit * e.control_mean,
        closed_form: unit * expected,
        std_error: control_se,
        z_score: if control_se > 0.0 { unit * (e.control_mean - expected) / control_se } else { 0.0 },
    };
    // Control variate: payoff - beta (control - E[control]), beta = cov / var(control).
    let (price_cv, se_cv) = if e.control_std_dev > 0.0 {
        let beta = e.correlation * e.std_dev / e.control_std_dev;
        let adj = e.mean - beta * (e.control_mean - expected);
        let var = (e.std_dev * e.std_dev * (1.0 - e.correlation * e.correlation)).max(0.0);
        (unit * adj, unit * (var / n).sqrt())
    } else {
        (price, std_error)
    };
    let steps_total = job.paths as f64 * job.steps as f64;
    PriceReport {
        price,
        std_error,
        ci95: [price - Z_95 * std_error, price + Z_95 * std_error],
        paths: job.paths,
        steps: job.steps,
        seed: job.seed,
        mode: job.mode,
        backend: exec.kind().to_string(),
        device: exec.description(),
        wall_seconds: wall,
        paths_per_second: job.paths as f64 / wall,
        msteps_per_second: steps_total / wall / 1e6,
        check,
        price_control_variate: price_cv,
        std_error_control_variate: se_cv,
        option: job.option,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_field_and_range() {
        let mut o = AsianBasket { vol_a: 0.0, ..Default::default() };
        let e = o.validate().unwrap_err().to_string();
        assert!(e.contains("vol_a") && e.contains("(0, 5]"), "{e}");
        o = AsianBasket { corr: 1.5, ..Default::default() };
        assert!(o.validate().unwrap_err().to_string().contains("corr"));
        o = AsianBasket { maturity: f64::NAN, ..Default::default() };
        assert!(o.validate().unwrap_err().to_string().contains("maturity"));
        o = AsianBasket { spot_b: -1.0, ..Default::default() };
        assert!(o.validate().unwrap_err().to_string().contains("spot_b"));
        let job = PricingJob { option: AsianBasket::default(), steps: 0, paths: 10, seed: 0, mode: Mode::Exact };
        assert!(job.validate().unwrap_err().to_string().contains("steps"));
        let job = PricingJob { steps: 4, paths: 0, ..job };
        assert!(job.validate().unwrap_err().to_string().contains("paths"));
    }

    #[test]
    fn margrabe_limits() {
        // Independent, equal, zero-variance assets: E[max] = max of the values.
        assert!((expected_max_lognormal(0.0, 0.0, 1.0f64.ln(), 0.0, 0.0) - 1.0).abs() < 1e-15);
        // Symmetric case: E[max(A,B)] with A, B iid lognormal(0, v): 2 e^{v/2} Φ(sqrt(v/2)).
        let v: f64 = 0.09;
        let exact = 2.0 * (0.5 * v).exp() * normal_cdf((v / 2.0).sqrt());
        assert!((expected_max_lognormal(-0.5 * v + 0.5 * v, v, 0.0, v, 0.0) - exact).abs() < 1e-12);
    }

    #[test]
    fn one_step_has_zero_payoff_and_zero_control() {
        let p = AsianBasket::default().kernel_steps(1);
        assert_eq!(unfloored_expectation(&p), 0.0);
    }
}
