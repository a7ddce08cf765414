//! Pricing jobs: validated input, a run on a backend, a report with error bars.
//!
//! The only product so far is GPU Gems 3's Asian basket (see [`warpmc_kernels::asian`] for the
//! model and the payoff). Data flows one way: [`PricingJob`] (validated) -> kernel coefficients
//! -> a backend's exact sums ([`PairMoments`]) -> [`PriceReport`].

use std::time::Instant;

use serde::Serialize;
use warpmc_kernels::accum::PairMoments;
use warpmc_kernels::asian::{AsianBasketSteps, split_f64};

use crate::backend::Executor;
use crate::distributions::Transform;
use crate::generators::GeneratorKind;
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

    /// The larger spot.
    pub fn scale(&self) -> f64 {
        self.spot_a.max(self.spot_b)
    }

    /// The kernels' input for `steps` dates, and the unit of their results.
    ///
    /// The coefficients are computed in `f64` and rounded once to `f32`. The kernels simulate
    /// in units of `U = max_i E[s_i]`, the largest expected basket value over the dates, so that
    /// per-path values and their squares sit well inside the exact accumulators' range and
    /// resolution whatever the spots, the drift or the maturity (a rate of -1 over 100 years
    /// shrinks prices by e^-100).
    pub fn kernel_job(&self, steps: u32) -> KernelJob {
        let dt = self.maturity / steps as f64;
        let sq = dt.sqrt();
        let scale = self.scale();
        let (ln_a0, ln_b0) = (self.spot_a.ln() - scale.ln(), self.spot_b.ln() - scale.ln());
        let mut p = AsianBasketSteps {
            ln_a0: split_f64(ln_a0),
            ln_b0: split_f64(ln_b0),
            mu_a: ((self.rate - 0.5 * self.vol_a * self.vol_a) * dt) as f32,
            sig_aa: (self.vol_a * sq) as f32,
            mu_b: ((self.rate - 0.5 * self.vol_b * self.vol_b) * dt) as f32,
            sig_ab: (self.corr * self.vol_b * sq) as f32,
            sig_bb: (self.vol_b * (1.0 - self.corr * self.corr).max(0.0).sqrt() * sq) as f32,
            steps,
            normals: Transform::BoxMuller.code(),
        };
        // In units of the larger spot first; then shift the start to units of U (the closed
        // forms are homogeneous of degree one in the spots).
        let e = date_expectations(&p);
        let shift = e.max.ln();
        p.ln_a0 = split_f64(ln_a0 - shift);
        p.ln_b0 = split_f64(ln_b0 - shift);
        let expected = DateExpectations { mean: e.mean / e.max, last: e.last / e.max, max: 1.0 };
        KernelJob { steps: p, unit: scale * e.max, expected }
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

/// Expectations of the basket value `s_i = max(a_i, b_i)` over the dates of the simulated model,
/// computed from the coefficients the kernels actually use, in the units of `p`'s start.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DateExpectations {
    /// `E[mean_i s_i]`.
    pub mean: f64,
    /// `E[s_n]`, the last date.
    pub last: f64,
    /// `max_i E[s_i]`.
    pub max: f64,
}

/// [`DateExpectations`] of `p`: Margrabe's formula at each date.
pub fn date_expectations(p: &AsianBasketSteps) -> DateExpectations {
    let ln_a0 = p.ln_a0[0] as f64 + p.ln_a0[1] as f64;
    let ln_b0 = p.ln_b0[0] as f64 + p.ln_b0[1] as f64;
    let (mu_a, mu_b) = (p.mu_a as f64, p.mu_b as f64);
    let (saa, sab, sbb) = (p.sig_aa as f64, p.sig_ab as f64, p.sig_bb as f64);
    let var_a = saa * saa;
    let var_b = sab * sab + sbb * sbb;
    let cov = saa * sab;
    let at = |i: f64| expected_max_lognormal(ln_a0 + i * mu_a, i * var_a, ln_b0 + i * mu_b, i * var_b, i * cov);
    let (mut sum, mut max, mut last) = (0.0, 0.0f64, 0.0);
    for i in 1..=p.steps {
        last = at(i as f64);
        sum += last;
        max = max.max(last);
    }
    DateExpectations { mean: sum / p.steps as f64, last, max }
}

/// Closed-form expectation of the unfloored path value `mean_i s_i - s_n` for the simulated
/// model (units of `p`'s start, undiscounted). Used to validate every run and as a control
/// variate.
pub fn unfloored_expectation(p: &AsianBasketSteps) -> f64 {
    let e = date_expectations(p);
    e.mean - e.last
}

/// What the kernels run for a job, and how to read their results.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelJob {
    /// The kernels' input.
    pub steps: AsianBasketSteps,
    /// Currency units per unit of the kernels' results (undiscounted): the larger spot times
    /// `max_i E[s_i] / larger spot`.
    pub unit: f64,
    /// The date expectations in the kernels' units (`max` is 1 by construction).
    pub expected: DateExpectations,
}

/// Bound on the rounding error of the mean of a per-path value (payoff or check quantity), in
/// the kernels' units: 2^-21 of `max_i E[s_i]`. Each date's basket value is one `f32`
/// exponential of a compensated log-price (within about 2 ulps); the largest per-path
/// difference from an `f64` re-implementation measured in `tests/tests/precision.rs` is 2^-23.8
/// of `U` (2^-23.5 in a one-off run at 10^6 steps), and the tests assert the bound per path.
pub const ROUNDING_BOUND: f64 = 1.0 / (1u64 << 21) as f64;

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
    /// The uniform generator whose streams feed the paths.
    pub generator: GeneratorKind,
    /// The normal transform between the generator and the paths (Box-Muller by default, the
    /// chapter's; also inversion, naive inversion, polar and Ziggurat).
    pub transform: Transform,
}

impl Default for PricingJob {
    /// The default basket, 256 steps (the chapter's), 2^20 paths, seed 1, exact mode, the
    /// default generator.
    fn default() -> Self {
        Self {
            option: AsianBasket::default(),
            steps: 256,
            paths: 1 << 20,
            seed: 1,
            mode: Mode::Exact,
            generator: GeneratorKind::default(),
            transform: Transform::BoxMuller,
        }
    }
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
        self.check_transform()?;
        self.check_sampleable()
    }

    /// The transform must make standard normals one path at a time (Wallace's pools do not),
    /// and a rejection transform cannot run on a collective generator, whose 32 lanes draw in
    /// lockstep.
    pub fn check_transform(&self) -> Result<()> {
        let t = self.transform;
        match crate::backend::basket_transform_refusal(t.code(), self.generator) {
            Some(allowed) => Err(Error::invalid("transform", t.name(), allowed)),
            None => Ok(()),
        }
    }

    /// Refuse parameters whose prices are too heavy-tailed for `paths` samples.
    ///
    /// A price at maturity is log-normal with log-variance `V = vol^2 T`; the mean of `e^X`,
    /// `X ~ N(m, V)`, is carried by `X` near `m + V`, `sqrt(V)` standard deviations above the
    /// mean of `X`, a region of probability `Φ(-sqrt V)`. A sample that holds few paths there
    /// misses most of the expectation *and* understates its own standard error, so the price
    /// and its error bar are both wrong while looking fine. warpmc requires
    /// `paths Φ(-sqrt V) >= MIN_TAIL_PATHS` for the larger volatility, unless `V <= 1` (relative
    /// variance of the price below e - 1: no heavy tail to miss). At the defaults (`V = 0.09`)
    /// nothing is refused; at 2^20 paths `V` may reach 16, at 2^30 paths 28.
    pub fn check_sampleable(&self) -> Result<()> {
        let v = self.option.vol_a.max(self.option.vol_b).powi(2) * self.option.maturity;
        if v <= 1.0 {
            return Ok(());
        }
        let tail = normal_cdf(-v.sqrt());
        let expected = self.paths as f64 * tail;
        if expected >= MIN_TAIL_PATHS {
            return Ok(());
        }
        let tail_text = if tail > 0.0 { format!("{tail:.2e}") } else { "below 1e-308".to_string() };
        let hold = if expected >= 0.01 {
            format!("about {expected:.3}")
        } else if expected > 0.0 {
            format!("about {expected:.2e}")
        } else {
            "practically none".to_string()
        };
        // The largest V these paths allow, and the paths this V needs.
        let v_max = normal_quantile_upper(MIN_TAIL_PATHS / self.paths as f64).max(1.0).powi(2);
        let needed = (MIN_TAIL_PATHS / tail).ceil();
        let more = if needed <= limits::PATHS_MAX as f64 {
            format!(", or raise --paths to at least {needed:.0}")
        } else {
            " (no number of paths up to 2^40 is enough)".to_string()
        };
        Err(Error::Unsampleable(format!(
            "the larger volatility squared times the maturity is {v:.3}: the final prices are log-normal with that \
             log-variance, and their mean is carried by paths {:.2} standard deviations out (probability \
             {tail_text}). {} paths would hold {hold} of them; at least {MIN_TAIL_PATHS} are needed for \
             the price and its standard error to mean anything. Reduce --vol-a/--vol-b or --maturity (at {} paths, \
             vol^2 x maturity may be up to {v_max:.2}){more}",
            v.sqrt(),
            self.paths,
            self.paths
        )))
    }
}

/// Fewest paths a sample must be expected to hold in the region that carries the mean of the
/// heaviest-tailed price (see [`PricingJob::check_sampleable`]).
pub const MIN_TAIL_PATHS: f64 = 30.0;

/// `x` with `Φ(-x) = p` for `p` in (0, 0.5]: the upper-tail normal quantile, by bisection on
/// [`normal_cdf`] (host-side, once per job).
fn normal_quantile_upper(p: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 40.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if normal_cdf(-mid) > p { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi)
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
    pub generator: GeneratorKind,
    /// The normal transform feeding the paths.
    pub transform: Transform,
    /// `"cpu"` or `"gpu"`.
    pub backend: String,
    /// The device: GPU name, or CPU thread count.
    pub device: String,
    pub wall_seconds: f64,
    pub paths_per_second: f64,
    pub msteps_per_second: f64,
    /// Validation: the unfloored value's Monte Carlo mean against its closed form. A report
    /// whose check [failed](CheckStatus::Failed) does not carry a trustworthy price.
    pub check: ControlCheck,
    /// The price with the unfloored value as control variate (same paths; lower variance), or
    /// `None` where that estimate would be degenerate ([`Self::control_variate_note`] says why).
    pub price_control_variate: Option<f64>,
    pub std_error_control_variate: Option<f64>,
    /// Why there is no control-variate price, when there is none.
    pub control_variate_note: Option<String>,
    /// Bound on the error that single-precision rounding adds to the price (and to the check's
    /// Monte Carlo mean), beside the statistical `std_error`: see [`ROUNDING_BOUND`].
    pub rounding_bound: f64,
    /// Set when the rounding bound matters: a price within it of zero, or larger than the
    /// standard error.
    pub precision_note: Option<String>,
    pub option: AsianBasket,
}

/// Largest `|z|` of a check that passes. A correct simulation exceeds it with probability
/// 5.7e-7 per run.
pub const CHECK_Z_MAX: f64 = 5.0;

/// The outcome of the closed-form check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// `|z| <= CHECK_Z_MAX`, or the difference is within `CHECK_Z_MAX` standard errors plus the
    /// rounding bound of single-precision paths (the note says so).
    Passed,
    /// The difference is more than [`CHECK_Z_MAX`] standard errors, or not zero while the
    /// standard error is: the simulation does not reproduce the model's known expectation.
    Failed,
    /// Nothing to compare: every path gave the same check value and it equals the closed form
    /// (with one date, `mean - final` is identically zero).
    NoInformation,
}

/// The closed-form check that runs with every price.
#[derive(Clone, Debug, Serialize)]
pub struct ControlCheck {
    /// Discounted Monte Carlo mean of `mean_i s_i - s_n`.
    pub monte_carlo: f64,
    /// Its discounted closed-form expectation.
    pub closed_form: f64,
    pub std_error: f64,
    /// `(monte_carlo - closed_form) / std_error`; `None` when the standard error is zero (a
    /// difference then cannot be measured in standard errors: see `status`).
    pub z_score: Option<f64>,
    pub status: CheckStatus,
    /// What a failed or uninformative check means, in words.
    pub note: Option<String>,
}

impl ControlCheck {
    /// Compare the Monte Carlo mean `mc` (standard error `se`, rounding error at most
    /// `rounding`) with the closed form `cf`.
    fn new(mc: f64, cf: f64, se: f64, rounding: f64, job: &PricingJob) -> Self {
        let diff = mc - cf;
        let (z_score, status, note) = if se > 0.0 {
            let z = diff / se;
            if z.abs() <= CHECK_Z_MAX {
                (Some(z), CheckStatus::Passed, None)
            } else if diff.abs() <= CHECK_Z_MAX * se + rounding {
                let why = format!(
                    "{:.2} standard errors, but within {CHECK_Z_MAX} standard errors plus the rounding bound \
                     {rounding:.3e} of single-precision paths",
                    z.abs()
                );
                (Some(z), CheckStatus::Passed, Some(why))
            } else {
                let why = format!("the Monte Carlo mean is {:.2} standard errors from the closed form", z.abs());
                (Some(z), CheckStatus::Failed, Some(failure_advice(&why)))
            }
        } else if job.steps == 1 {
            let why = "with one date the average is the final value, so the check quantity is zero on every path";
            (None, CheckStatus::NoInformation, Some(why.to_string()))
        } else if diff.abs() <= rounding {
            let why = "every path gave the same check value, equal to the closed form within rounding";
            (None, CheckStatus::NoInformation, Some(why.to_string()))
        } else {
            let why = format!(
                "every path gave the same check value, and it differs from the closed form by {:.6e} \
                 (zero standard error: the difference cannot be a fluctuation)",
                diff
            );
            (None, CheckStatus::Failed, Some(failure_advice(&why)))
        };
        Self { monte_carlo: mc, closed_form: cf, std_error: se, z_score, status, note }
    }
}

/// A failed check's explanation with what to change. Unsampleable parameters are refused before
/// the run ([`PricingJob::check_sampleable`]), so what remains is a sample too small for a skewed
/// payoff, or a wrong simulation.
fn failure_advice(why: &str) -> String {
    format!(
        "{why}. Either the sample is too small for this payoff: rare paths (where the lower asset overtakes \
         the other, say) carry part of the expectation, and a sample that misses them also understates its \
         standard error; or the simulation is wrong. Rerun with many more --paths and another --seed: a failure \
         that persists with 100 times the paths is a bug to report, and the price must not be used"
    )
}

/// Run `job` on `exec` and report. `progress(done, total)` is called after each batch of paths.
pub fn price_asian_basket_with_progress(
    exec: &dyn Executor,
    job: &PricingJob,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<PriceReport> {
    job.validate()?;
    let kernel = job.option.kernel_job(job.steps);
    let steps = AsianBasketSteps { normals: job.transform.code(), ..kernel.steps };
    let start = Instant::now();
    let batch = exec.batch_paths(job.steps).max(1);
    let mut total = PairMoments::ZERO;
    let mut first = 0;
    while first < job.paths {
        let end = (first + batch).min(job.paths);
        let part = exec.asian_basket(&steps, job.generator, job.seed, first..end, job.mode)?;
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
            "{} of {} paths left the representable range (a basket value above 2^31 times its largest \
             expectation over the dates, or an overflow): the price would be biased. The volatilities, rate \
             and maturity are too extreme for this model; reduce --vol-a/--vol-b, --rate or --maturity",
            total.out_of_range, job.paths
        )));
    }
    Ok(report(exec, job, &kernel, &total, wall))
}

/// [`price_asian_basket_with_progress`] without progress reports.
pub fn price_asian_basket(exec: &dyn Executor, job: &PricingJob) -> Result<PriceReport> {
    price_asian_basket_with_progress(exec, job, &mut |_, _| {})
}

/// Smallest `1 - correlation^2` of payoff and control for which the control-variate estimate is
/// reported: at 1 the payoff equalled the control on every sampled path, and the estimate would
/// be the control's closed form with a standard error of zero, a statement about the sample
/// rather than the option.
const CV_MIN_RESIDUAL: f64 = 1e-12;

fn report(exec: &dyn Executor, job: &PricingJob, kernel: &KernelJob, m: &PairMoments, wall: f64) -> PriceReport {
    let e = Estimates::from_moments(m);
    let n = m.n as f64;
    let unit = kernel.unit * job.option.discount();
    let price = unit * e.mean;
    let std_error = unit * e.std_dev / n.sqrt();
    let rounding_bound = unit * ROUNDING_BOUND;
    let expected = kernel.expected.mean - kernel.expected.last;
    let control_se = unit * e.control_std_dev / n.sqrt();
    let check = ControlCheck::new(unit * e.control_mean, unit * expected, control_se, rounding_bound, job);
    let precision_note = if price + Z_95 * std_error < rounding_bound {
        Some(format!(
            "the price is within single precision's rounding bound ({rounding_bound:.3e}) of zero: the model moves \
             prices by too little over the maturity for f32 paths to resolve it; read it as 0 ± {rounding_bound:.3e}, \
             or raise --vol-a/--vol-b or --maturity"
        ))
    } else if rounding_bound > std_error {
        Some(format!(
            "single-precision rounding (at most {rounding_bound:.3e}) exceeds the standard error: more paths will \
             not make this price more accurate"
        ))
    } else {
        None
    };
    // Control variate: payoff - beta (control - E[control]), beta = cov / var(control).
    let residual = 1.0 - e.correlation * e.correlation;
    let cv = if check.status == CheckStatus::Failed {
        Err("not reported: the closed-form check failed, so the control's sample mean is no valid correction"
            .to_string())
    } else if check.status == CheckStatus::NoInformation {
        Err("not reported: the control is the same on every path, so it corrects nothing".to_string())
    } else if !(e.std_dev > 0.0) {
        Err("not reported: the payoff is the same on every path, so there is no variance to reduce".to_string())
    } else if !(e.control_std_dev > 0.0) || !(residual > CV_MIN_RESIDUAL) {
        Err("not reported: the payoff equals the control on every sampled path (correlation 1), so the \
             estimate would be degenerate"
            .to_string())
    } else {
        let beta = e.correlation * e.std_dev / e.control_std_dev;
        let adj = e.mean - beta * (e.control_mean - expected);
        let var = e.std_dev * e.std_dev * residual;
        Ok((unit * adj, unit * (var / n).sqrt()))
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
        generator: job.generator,
        transform: job.transform,
        backend: exec.kind().to_string(),
        device: exec.description(),
        wall_seconds: wall,
        paths_per_second: job.paths as f64 / wall,
        msteps_per_second: steps_total / wall / 1e6,
        check,
        price_control_variate: cv.as_ref().ok().map(|c| c.0),
        std_error_control_variate: cv.as_ref().ok().map(|c| c.1),
        control_variate_note: cv.err(),
        rounding_bound,
        precision_note,
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
        let job = PricingJob { steps: 0, paths: 10, seed: 0, ..Default::default() };
        assert!(job.validate().unwrap_err().to_string().contains("steps"));
        let job = PricingJob { steps: 4, paths: 0, ..job };
        assert!(job.validate().unwrap_err().to_string().contains("paths"));
    }

    fn job_with_steps(steps: u32) -> PricingJob {
        PricingJob { steps, paths: 1000, ..Default::default() }
    }

    #[test]
    fn the_check_never_reads_an_unexplained_difference_as_z_0() {
        let j = job_with_steps(16);
        // Zero standard error and a difference beyond rounding: failed, no z.
        let c = ControlCheck::new(1.0, 1.5, 0.0, 1e-9, &j);
        assert_eq!((c.status, c.z_score), (CheckStatus::Failed, None));
        assert!(c.note.unwrap().contains("zero standard error"));
        // Zero standard error, equal within rounding: nothing to conclude, no z.
        let c = ControlCheck::new(1.0, 1.0 + 1e-10, 0.0, 1e-9, &j);
        assert_eq!((c.status, c.z_score), (CheckStatus::NoInformation, None));
        // One date: no information whatever the numbers.
        let c = ControlCheck::new(0.0, 0.0, 0.0, 1e-9, &job_with_steps(1));
        assert_eq!(c.status, CheckStatus::NoInformation);
        assert!(c.note.unwrap().contains("one date"));
        // Ordinary outcomes.
        let c = ControlCheck::new(1.0, 1.01, 0.01, 1e-9, &j);
        assert_eq!((c.status, c.z_score, c.note), (CheckStatus::Passed, Some(-1.0000000000000009), None));
        let c = ControlCheck::new(1.0, 1.06, 0.01, 1e-9, &j);
        assert_eq!(c.status, CheckStatus::Failed);
        assert!(c.note.unwrap().contains("--paths"));
        // Beyond 5 standard errors but within 5 plus the rounding bound: passed, and said so.
        let c = ControlCheck::new(1.0, 1.0 + 7e-9, 1e-9, 3e-9, &j);
        assert_eq!(c.status, CheckStatus::Passed);
        assert!(c.note.unwrap().contains("rounding bound"));
    }

    #[test]
    fn sampleability_follows_the_tail_that_carries_the_mean() {
        let job = |vol: f64, maturity: f64, paths: u64| PricingJob {
            option: AsianBasket { vol_a: vol, vol_b: 0.1, maturity, ..Default::default() },
            steps: 4,
            paths,
            ..Default::default()
        };
        // V <= 1: any number of paths.
        assert!(job(1.0, 1.0, 2).check_sampleable().is_ok());
        // V = 16 needs 30 / Φ(-4) = 947,232 paths.
        assert!(job(4.0, 1.0, 1 << 20).check_sampleable().is_ok());
        let e = job(4.0, 1.0, 900_000).check_sampleable().unwrap_err().to_string();
        assert!(e.contains("raise --paths to at least 947232") && e.contains("--vol-a"), "{e}");
        // The limit it states is where the rule switches.
        assert!((normal_quantile_upper(0.025) - 1.959_963_984_540_054).abs() < 1e-12);
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
        let p = AsianBasket::default().kernel_job(1).steps;
        assert_eq!(unfloored_expectation(&p), 0.0);
    }
}
