//! Adaptive multidimensional Monte Carlo integration: VEGAS importance sampling with adaptive
//! stratification (Lepage 1978; "VEGAS+", Lepage 2021), on the CPU, one or several GPUs, and MPI
//! ranks, with the same result bit for bit at any scale.
//!
//! An iteration:
//! 1. **Plan** (host, deterministic): `y` space is cut into `strata^d` hypercubes; hypercube `h`
//!    gets `n_h = 2 + ⌊(N - 2 cubes) w_h / Σw⌋` points, with `w_h = σ_h^β` from the previous
//!    iteration (uniform at first). Points are numbered `0..Σn_h`, hypercube by hypercube.
//! 2. **Sample** (backend): point `k` draws from stream `first_stream + k` of the seed (a warp
//!    generator's points: from the lanes of one warp state per tile of 32768 points,
//!    [`warpmc_kernels::vegas::TILE_ROUNDS`]), is mapped
//!    through the adaptive grid and evaluated ([`warpmc_kernels::vegas::run_points`]); the backend
//!    returns exact fixed-point sums per hypercube and per grid bin ([`VegasSums`]). The points
//!    may be split in any way between threads, devices and ranks: integer sums merge exactly.
//! 3. **Estimate** (host): `I = Σ_h V_h Σv / n_h`, `Var = Σ_h V_h² s_h² / n_h` (`V_h = 1 /
//!    cubes`, `s_h²` the sample variance in the hypercube).
//! 4. **Adapt** (host): each axis's grid is refined from its bins' `∫ (f J)²` estimates, smoothed
//!    and damped (`((r - 1) / ln r)^α`), so that every increment carries the same share.
//!
//! Iterations after the `warmup` ones are combined with weights `1 / σ_k²`, with `χ²/dof` as the
//! consistency check. The run stops at a target relative error, an evaluation budget or an
//! iteration count.
//!
//! Every number that steers the run (allocation, grid, scale of the fixed point) is computed on
//! the host from the exact sums with correctly rounded operations and the project's own `ln` and
//! `exp` ([`warpmc_kernels::math64`]), so every backend, device count and MPI rank takes the
//! same decisions and draws the same points.

use std::ops::Range;
use std::time::Instant;

use warpmc_kernels::math64::{exp_f64, ln_f64};
use warpmc_kernels::vegas::{self, IntegrandParams, MAX_BINS, MAX_CUBES, MAX_DIM, VegasJob, VegasSums};

use crate::generators::GeneratorKind;
use crate::{Error, Result};

/// A backend's share of an iteration: evaluate points `range` of `job` and return their sums.
pub trait VegasRunner: Sync {
    /// Where it runs (for the report).
    fn describe(&self) -> String;
    /// The sums of points `range` (inside `0..job.points`).
    fn run(
        &self,
        job: &VegasJob,
        integrand: &Integrand<'_>,
        generator: GeneratorKind,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
    ) -> Result<VegasSums>;

    /// As [`Self::run`], with the sums of the hypercubes from `from` to the last one that
    /// `range` touches written into `dest` (`CUBE_WORDS` words each, exactly that many);
    /// `from` lies from the range's first hypercube to one past its last. The returned part
    /// holds the others (the hypercubes before `from`). A GPU copies its part straight from
    /// page-locked memory into `dest`; the default runs [`Self::run`] and copies.
    #[allow(clippy::too_many_arguments)]
    fn run_into(
        &self,
        job: &VegasJob,
        integrand: &Integrand<'_>,
        generator: GeneratorKind,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
        from: u64,
        dest: &mut [u64],
    ) -> Result<VegasSums> {
        let end = touched_end(offsets, &range);
        let mut part = self.run(job, integrand, generator, edges, offsets, range)?;
        let at = dest_offset(from, dest.len(), part.first_cube..end)?;
        // A runner's part holds the hypercubes its range touches, and may hold zero ones after
        // them (the CPU's holds all): they are dropped with the rest after `at`.
        let Some(ours) = part.cubes.get(at..at + dest.len()) else {
            let held = part.cube_range();
            return Err(Error::invalid("hypercubes", format!("..{end}"), format!("the runner's part, {held:?}")));
        };
        dest.copy_from_slice(ours);
        part.cubes.truncate(at);
        Ok(part)
    }
}

/// One past the last hypercube that points `range` fall in (0 for none).
pub fn touched_end(offsets: &[u64], range: &Range<u64>) -> u64 {
    if range.is_empty() { 0 } else { vegas::cube_of(offsets, range.end - 1) + 1 }
}

/// Where [`VegasRunner::run_into`]'s `dest` begins in a part whose hypercubes start at
/// `touched.start` (`CUBE_WORDS` words each) and whose range of points reaches hypercube
/// `touched.end - 1`: the first word of hypercube `from`, when `dest` holds exactly the
/// hypercubes `from..touched.end`; else an error naming both. Every runner checks its `dest`
/// with it.
pub fn dest_offset(from: u64, dest_words: usize, touched: Range<u64>) -> Result<usize> {
    let words = vegas::CUBE_WORDS as u64;
    if touched.start <= from && from <= touched.end && dest_words as u64 == (touched.end - from) * words {
        return Ok(((from - touched.start) * words) as usize);
    }
    Err(Error::invalid(
        "hypercubes",
        format!("from {from} in {dest_words} words"),
        format!("a first hypercube in {}..={} and {words} words for each up to {}", touched.start, touched.end, touched.end),
    ))
}

/// What is integrated.
#[derive(Clone, Copy)]
pub enum Integrand<'a> {
    /// A built-in family (both backends).
    Builtin(&'a IntegrandParams),
    /// A Rust closure over the point's coordinates (CPU only).
    Closure(&'a (dyn Fn(&[f64]) -> f64 + Sync)),
    /// A user's integrand compiled to PTX (both backends).
    Compiled(&'a CompiledIntegrand<'a>),
}

/// A user's integrand crate (`warpmc_kernels::integrand_kernel!`, compiled by `cargo xtask
/// build-integrand`): the GPU runs kernel `kernel` (Philox4x32-10; another generator's is
/// `kernel__<suffix>`, when the crate's `integrand_kernel!` lists it) of module `ptx` with the parameter block
/// `params` (the bytes of the crate's `#[repr(C)]` struct); the CPU runs `cpu`, the same
/// function compiled for the host, so both give the same bits when the function uses only
/// correctly rounded operations and `warpmc_kernels::math64`.
pub struct CompiledIntegrand<'a> {
    pub ptx: &'a str,
    pub kernel: &'a str,
    pub params: &'a [u8],
    pub dim: u32,
    pub cpu: &'a (dyn Fn(&[f64]) -> f64 + Sync),
}

/// The integrator's settings.
#[derive(Clone, Debug, serde::Serialize)]
pub struct IntegrateSpec {
    pub dim: u32,
    pub generator: GeneratorKind,
    pub seed: u64,
    /// Evaluations per iteration (the plan uses at most this many).
    pub evals_per_iteration: u64,
    /// Most iterations, warm-up included.
    pub max_iterations: u32,
    /// Leading iterations that adapt the grid but are left out of the result.
    pub warmup: u32,
    /// Stop once the combined relative error is at most this (after two kept iterations).
    pub target_rel_error: Option<f64>,
    /// Stop before an iteration would take the evaluations past this.
    pub max_evals: Option<u64>,
    /// Grid increments per axis.
    pub bins: u32,
    /// Grid damping `α` (0: no adaptation).
    pub alpha: f64,
    /// Stratification damping `β` (0: uniform allocation).
    pub beta: f64,
    /// Strata per axis (default: the largest with `strata^d <= evals / 4`).
    pub strata: Option<u32>,
}

impl IntegrateSpec {
    pub fn new(dim: u32) -> Self {
        Self {
            dim,
            generator: GeneratorKind::default(),
            seed: 1,
            evals_per_iteration: 1_000_000,
            max_iterations: 12,
            warmup: 2,
            target_rel_error: None,
            max_evals: None,
            bins: 128,
            alpha: 0.5,
            beta: 0.75,
            strata: None,
        }
    }

    pub fn validate(&self) -> Result<()> {
        if self.dim == 0 || self.dim as usize > MAX_DIM {
            return Err(Error::invalid("dim", self.dim, format!("[1, {MAX_DIM}]")));
        }
        if !(1000..=1 << 40).contains(&self.evals_per_iteration) {
            return Err(Error::invalid("evals_per_iteration", self.evals_per_iteration, "[1000, 2^40]"));
        }
        if !(1..=100_000).contains(&self.max_iterations) {
            return Err(Error::invalid("iterations", self.max_iterations, "[1, 100000]"));
        }
        if self.warmup >= self.max_iterations {
            return Err(Error::invalid(
                "warmup",
                self.warmup,
                format!("[0, iterations - 1 = {}]", self.max_iterations - 1),
            ));
        }
        if let Some(e) = self.target_rel_error
            && !(e > 0.0 && e < 1.0)
        {
            return Err(Error::invalid("target_rel_error", e, "(0, 1)"));
        }
        if self.max_evals == Some(0) {
            return Err(Error::invalid("evals", 0, "at least 1000"));
        }
        if !(2..=MAX_BINS).contains(&self.bins) {
            return Err(Error::invalid("bins", self.bins, format!("[2, {MAX_BINS}]")));
        }
        if !(0.0..=2.0).contains(&self.alpha) {
            return Err(Error::invalid("alpha", self.alpha, "[0, 2]"));
        }
        if !(0.0..=1.0).contains(&self.beta) {
            return Err(Error::invalid("beta", self.beta, "[0, 1]"));
        }
        if let Some(s) = self.strata {
            let cubes = (s as u64).checked_pow(self.dim);
            if s == 0 || !cubes.is_some_and(|c| c <= MAX_CUBES && 2 * c <= self.evals_per_iteration) {
                return Err(Error::invalid(
                    "strata",
                    s,
                    "at least 1, with strata^dim <= 2^22 and 2 strata^dim <= evals per iteration",
                ));
            }
        }
        Ok(())
    }

    /// Strata per axis: as set, else the largest `s` with `s^d <= evals / 4` and `s^d <= 2^22`.
    pub fn strata(&self) -> u32 {
        if let Some(s) = self.strata {
            return s;
        }
        let limit = (self.evals_per_iteration / 4).clamp(1, MAX_CUBES);
        let mut s = 1u64;
        while (s + 1).checked_pow(self.dim).is_some_and(|c| c <= limit) {
            s += 1;
        }
        s as u32
    }
}

/// One iteration's numbers.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Iteration {
    pub estimate: f64,
    pub std_error: f64,
    pub evals: u64,
    /// Whether it counts in the result (false for warm-up iterations).
    pub kept: bool,
    /// Runs of the iteration thrown away because the fixed-point scale had to change.
    pub rescaled: u32,
    /// Wall time of the iteration from the run on: `run_seconds` on the devices (sampling,
    /// copies, merging the sums, MPI reductions), the rest on the host (`estimate_seconds`). The
    /// plan, made before it, is `plan_seconds`.
    pub seconds: f64,
    pub run_seconds: f64,
    /// The host's part before the run: the plan (points per hypercube, [`allocate_into`]).
    pub plan_seconds: f64,
    /// The host's part after it: the estimate, the next plan's weights and the grid's
    /// refinement. With `plan_seconds`, the serial part of an iteration that more devices do not
    /// shorten (BENCHMARKS.md).
    pub estimate_seconds: f64,
    /// Each runner's time in the iteration's last run (a device's or a worker pool's sampling,
    /// copies and writes into the total; 0 for a runner given no points): how evenly the
    /// speed-based split shared the work.
    pub runner_seconds: Vec<f64>,
}

/// The result of a run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct IntegrationResult {
    pub estimate: f64,
    pub std_error: f64,
    pub chi2_per_dof: f64,
    pub dof: u32,
    pub evals: u64,
    pub iterations: Vec<Iteration>,
    pub strata: u32,
    pub cubes: u64,
    pub bins: u32,
    /// Why it stopped: "target", "budget" or "iterations".
    pub stopped_by: &'static str,
    pub wall_seconds: f64,
    /// The final grid: `dim` axes of `bins + 1` edges.
    #[serde(skip)]
    pub grid: Vec<Vec<f64>>,
}

/// The adaptive grid: `dim` axes of `bins + 1` increasing edges from 0 to 1.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    pub bins: u32,
    pub edges: Vec<f64>,
}

impl Grid {
    pub fn uniform(dim: u32, bins: u32) -> Self {
        let axis: Vec<f64> = (0..=bins).map(|i| i as f64 / bins as f64).collect();
        Self { bins, edges: (0..dim).flat_map(|_| axis.iter().copied()).collect() }
    }

    pub fn axis(&self, j: usize) -> &[f64] {
        let n = self.bins as usize + 1;
        &self.edges[j * n..(j + 1) * n]
    }

    /// Refine each axis from its bins' weights `d` (`∫ (f J)²` estimates), damped by `alpha`.
    pub fn refine(&mut self, sums: &VegasSums, alpha: f64) {
        if alpha == 0.0 {
            return;
        }
        let nb = self.bins as usize;
        let dim = self.edges.len() / (nb + 1);
        for j in 0..dim {
            let d: Vec<f64> = (0..nb).map(|b| sums.bin(j, b, nb).to_f64()).collect();
            let new = refine_axis(self.axis(j), &d, alpha);
            self.edges[j * (nb + 1)..(j + 1) * (nb + 1)].copy_from_slice(&new);
        }
    }
}

/// `x^alpha` for `x > 0` with the project's own `ln` and `exp` (the same bits on every machine).
fn pow_det(x: f64, alpha: f64) -> f64 {
    if alpha == 1.0 { x } else { exp_f64(alpha * ln_f64(x)) }
}

/// One axis's new edges: smooth the bin weights (`(d_{i-1} + 6 d_i + d_{i+1}) / 8`), compress
/// them (`((r - 1) / ln r)^α` of the share `r`), and place the edges so that every new increment
/// holds the same total weight, interpolating linearly inside the old increments.
pub fn refine_axis(edges: &[f64], d: &[f64], alpha: f64) -> Vec<f64> {
    let nb = d.len();
    if nb < 2 {
        return edges.to_vec();
    }
    let mut s = vec![0.0; nb];
    s[0] = (7.0 * d[0] + d[1]) / 8.0;
    s[nb - 1] = (d[nb - 2] + 7.0 * d[nb - 1]) / 8.0;
    for i in 1..nb - 1 {
        s[i] = (d[i - 1] + 6.0 * d[i] + d[i + 1]) / 8.0;
    }
    let total: f64 = s.iter().sum();
    if !(total > 0.0) || !total.is_finite() {
        return edges.to_vec();
    }
    let w: Vec<f64> = s
        .iter()
        .map(|&x| {
            let r = x / total;
            if r <= 0.0 {
                0.0
            } else if r >= 1.0 {
                1.0
            } else {
                pow_det((r - 1.0) / ln_f64(r), alpha)
            }
        })
        .collect();
    let wsum: f64 = w.iter().sum();
    if !(wsum > 0.0) {
        return edges.to_vec();
    }
    let step = wsum / nb as f64;
    let mut out = Vec::with_capacity(nb + 1);
    out.push(0.0);
    let (mut i, mut acc) = (0usize, 0.0f64);
    for k in 1..nb {
        let target = step * k as f64;
        while i < nb - 1 && acc + w[i] < target {
            acc += w[i];
            i += 1;
        }
        let frac = if w[i] > 0.0 { ((target - acc) / w[i]).clamp(0.0, 1.0) } else { 0.0 };
        let x = edges[i] + frac * (edges[i + 1] - edges[i]);
        // Keep the edges strictly increasing (a zero-width increment would give J = 0 there).
        let prev = *out.last().unwrap();
        out.push(if x > prev { x } else { prev + (edges[nb] - prev) * 1e-12 });
    }
    out.push(1.0);
    out
}

/// The sampling plan of an iteration without weights (points spread evenly): the points'
/// offsets per hypercube. Used by the GPU's kernel rates and by tests.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
fn allocate(cubes: u64, evals: u64) -> Vec<u64> {
    let mut offsets = Vec::new();
    allocate_into(cubes, evals, None, &mut offsets);
    offsets
}

/// The sampling plan into `offsets` (the previous iteration's buffer, reused): hypercube `h`
/// gets `2 + ⌊spare w_h / Σw⌋` points (`spare / cubes` without usable weights), and `offsets`
/// their running sums from 0. Returns the fewest points a hypercube got. `weights` comes with
/// its `Σw`, added in fixed pieces (the previous [`estimate`] adds it as it writes the
/// weights; the tests check it against `piecewise_sum`). The counts and the running sums go
/// through fixed pieces in parallel (a million hypercubes are milliseconds of serial work
/// between two launches), and `Σw` was added in fixed pieces, so the plan does not depend on
/// the thread count.
fn allocate_into(cubes: u64, evals: u64, weights: Option<(&[f64], f64)>, offsets: &mut Vec<u64>) -> u64 {
    use rayon::prelude::*;
    let spare = evals.saturating_sub(2 * cubes);
    let (weights, total) = match weights {
        Some((w, total)) if total > 0.0 && total.is_finite() => (Some(w), total),
        _ => (None, 0.0),
    };
    // Every entry after the first is written below: a buffer of the right length is not cleared.
    if offsets.len() != cubes as usize + 1 {
        offsets.clear();
        offsets.resize(cubes as usize + 1, 0);
    }
    offsets[0] = 0;
    // Each hypercube's count, with each piece's total and fewest.
    let pieces: Vec<(u64, u64)> = offsets[1..]
        .par_chunks_mut(CUBE_PIECE)
        .enumerate()
        .map(|(p, counts)| {
            let (mut sum, mut fewest) = (0u64, u64::MAX);
            for (i, n) in counts.iter_mut().enumerate() {
                let extra = match weights {
                    Some(w) => ((spare as f64) * (w[p * CUBE_PIECE + i] / total)) as u64,
                    None => spare / cubes,
                };
                *n = 2 + extra.min(spare);
                sum += *n;
                fewest = fewest.min(*n);
            }
            (sum, fewest)
        })
        .collect();
    // The running sums: each piece starts where the pieces before it end.
    let mut starts = Vec::with_capacity(pieces.len());
    let mut at = 0u64;
    for &(sum, _) in &pieces {
        starts.push(at);
        at += sum;
    }
    offsets[1..].par_chunks_mut(CUBE_PIECE).zip(starts).for_each(|(counts, mut at)| {
        for n in counts.iter_mut() {
            at += *n;
            *n = at;
        }
    });
    pieces.iter().map(|p| p.1).min().unwrap_or(1)
}

/// `Σw`, added in pieces of [`CUBE_PIECE`] in order, on rayon's workers, and the pieces' sums
/// in order: the same bits for any thread count. [`estimate`] adds `Σw` so as it writes the
/// weights; this separate pass is the tests' reference for it.
#[cfg(test)]
fn piecewise_sum(w: &[f64]) -> f64 {
    use rayon::prelude::*;
    let parts: Vec<f64> = w.par_chunks(CUBE_PIECE).map(|c| c.iter().fold(0.0, |a, &x| a + x)).collect();
    parts.iter().fold(0.0, |a, &x| a + x)
}

/// Hypercubes per piece of the host's parallel loops over the plan ([`allocate_into`],
/// [`estimate`], [`check_job`]). The pieces are fixed, and their partial sums are added in piece
/// order, so the results do not depend on the thread count.
const CUBE_PIECE: usize = 8192;

/// The per-iteration estimate and variance (in units of `2^scale_exp`), and each hypercube's
/// allocation weight `σ_h^β` for the next plan, written into `weights` (reused between
/// iterations). Hundreds of thousands of hypercubes are the host's serial work between two
/// launches, so the pieces run on rayon's workers.
fn estimate(sums: &VegasSums, offsets: &[u64], beta: f64, weights: &mut Vec<f64>) -> Estimate {
    use rayon::prelude::*;
    let cubes = offsets.len() - 1;
    let v = 1.0 / cubes as f64;
    // Every entry is written below: no need to clear a buffer of the right length.
    weights.resize(cubes, 0.0);
    let parts: Vec<(f64, f64, f64)> = weights
        .par_chunks_mut(CUBE_PIECE)
        .enumerate()
        .map(|(p, w)| {
            let (mut est, mut var, mut sum_w) = (0.0, 0.0, 0.0);
            for (i, wh) in w.iter_mut().enumerate() {
                let h = p * CUBE_PIECE + i;
                let n = (offsets[h + 1] - offsets[h]) as f64;
                let (s1, s2) = sums.cube(h);
                let mean = s1.to_f64() / n;
                let var_h = ((s2.to_f64() / n - mean * mean) * (n / (n - 1.0))).max(0.0);
                est += v * mean;
                var += v * v * var_h / n;
                *wh = allocation_weight(var_h.sqrt(), beta);
                sum_w += *wh;
            }
            (est, var, sum_w)
        })
        .collect();
    let (estimate, variance) = parts.iter().fold((0.0, 0.0), |(e, v), &(pe, pv, _)| (e + pe, v + pv));
    // Σw as `piecewise_sum` adds it (the same pieces, each from 0 in order, then the pieces in
    // order), without a second pass over the weights.
    let weight_sum = parts.iter().fold(0.0, |a, &(_, _, pw)| a + pw);
    Estimate { estimate, variance, weight_sum }
}

/// An iteration's estimate and variance (in units of `2^scale_exp`) and the sum of its
/// hypercubes' allocation weights.
struct Estimate {
    estimate: f64,
    variance: f64,
    weight_sum: f64,
}

/// `σ^β`, the share of the spare points a hypercube of standard deviation `σ` gets. The usual
/// exponents are products of square roots (correctly rounded everywhere, and a tenth of the
/// cost of `exp(β ln σ)`); others go through math64's `ln` and `exp`.
fn allocation_weight(sigma: f64, beta: f64) -> f64 {
    if beta == 0.0 {
        1.0
    } else if !(sigma > 0.0) {
        0.0
    } else if beta == 1.0 {
        sigma
    } else if beta == 0.5 {
        sigma.sqrt()
    } else if beta == 0.75 {
        let r = sigma.sqrt();
        r * r.sqrt()
    } else if beta == 0.25 {
        sigma.sqrt().sqrt()
    } else {
        pow_det(sigma, beta)
    }
}

/// `(⌊log2 x⌋)` of a positive finite `x` from its bits.
fn exponent_of(x: f64) -> i32 {
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    if e == 0 { -1074 + (64 - (bits & ((1 << 52) - 1)).leading_zeros() as i32) - 1 } else { e - 1023 }
}

/// Run the integrator on `runners` (the points of each iteration split between them in the
/// proportions `shares`, or evenly).
pub fn integrate(
    spec: &IntegrateSpec,
    integrand: &Integrand<'_>,
    runners: &[&dyn VegasRunner],
    mut progress: impl FnMut(&Iteration),
) -> Result<IntegrationResult> {
    spec.validate()?;
    if runners.is_empty() {
        return Err(Error::invalid("gpus", 0, "at least one device or worker"));
    }
    if let Integrand::Builtin(p) = integrand
        && p.dim != spec.dim
    {
        return Err(Error::invalid("dim", spec.dim, format!("the integrand's dimension {}", p.dim)));
    }
    let start = Instant::now();
    let strata = spec.strata();
    let cubes = (strata as u64).pow(spec.dim);
    let mut grid = Grid::uniform(spec.dim, spec.bins);
    // The plan and the allocation weights, each one buffer for the whole run.
    let mut offsets = Vec::new();
    let mut weights: Vec<f64> = Vec::new();
    let mut weight_sum = 0.0;
    let mut scale_exp = pilot_scale(spec, integrand);
    let mut next_stream = 0u64;
    let mut evals = 0u64;
    let mut iterations = Vec::new();
    // Relative speeds of the runners, measured per iteration (only the split depends on them).
    let mut speeds = vec![1.0f64; runners.len()];
    let mut stopped_by = "iterations";
    let (mut sw, mut swx) = (0.0f64, 0.0f64);
    let mut kept_est: Vec<(f64, f64)> = Vec::new();
    // The iteration's sums, one buffer for the whole run.
    let mut sums = VegasSums::zeros(cubes, spec.dim, spec.bins);
    for it in 0..spec.max_iterations {
        let have_weights = it > 0;
        let t_plan = Instant::now();
        let fewest = allocate_into(cubes, spec.evals_per_iteration, have_weights.then_some((&weights[..], weight_sum)), &mut offsets);
        let plan_seconds = t_plan.elapsed().as_secs_f64();
        let points = *offsets.last().unwrap();
        if let Some(budget) = spec.max_evals
            && evals + points > budget
        {
            stopped_by = "budget";
            break;
        }
        let t0 = Instant::now();
        let mut run_seconds = 0.0;
        let mut rescaled = 0;
        let mut runner_seconds: Vec<f64>;
        loop {
            let job = VegasJob {
                seed: spec.seed,
                first_stream: next_stream,
                points,
                cubes,
                dim: spec.dim,
                bins: spec.bins,
                strata,
                scale_exp,
                bin_frac_bits: vegas::bin_frac_bits(fewest),
                reserved: 0,
            };
            let t_run = Instant::now();
            runner_seconds =
                run_split(&job, integrand, spec.generator, &grid.edges, &offsets, runners, &mut speeds, 0..points, &mut sums)?;
            run_seconds += t_run.elapsed().as_secs_f64();
            if sums.stats[2] > 0 {
                return Err(Error::OutOfRange(format!(
                    "the integrand returned NaN or infinity at {} of {points} points in iteration {it}",
                    sums.stats[2]
                )));
            }
            // Choose the scale so that the largest |f J| seen is below 2^30 in fixed point (2^31
            // is the limit): redo the iteration when a value was out of range, or when the
            // values used less than 2^-15 of the range (the bins' quanta are fixed point too, so
            // their weights need the values well away from zero: `vegas::bin_frac_bits`).
            let max = f64::from_bits(sums.stats[0]);
            let needs = sums.stats[1] > 0 || (max > 0.0 && max < 65_536.0);
            if needs && rescaled < 8 {
                let real_max_exp = exponent_of(max) + scale_exp;
                scale_exp = (real_max_exp - 29).clamp(-1000, 1000);
                rescaled += 1;
                continue;
            }
            if sums.stats[1] > 0 {
                return Err(Error::OutOfRange(format!(
                    "|f J| exceeded the fixed-point range at {} points even after rescaling (scale 2^{scale_exp})",
                    sums.stats[1]
                )));
            }
            break;
        }
        next_stream += points;
        evals += points;
        let t_estimate = Instant::now();
        let Estimate { estimate: est, variance: var, weight_sum: sum_w } = estimate(&sums, &offsets, spec.beta, &mut weights);
        weight_sum = sum_w;
        let unit = vegas::pow2_neg(-scale_exp);
        let (est, err) = (est * unit, var.sqrt() * unit);
        let kept = it >= spec.warmup;
        let mut record = Iteration {
            estimate: est,
            std_error: err,
            evals: points,
            kept,
            rescaled,
            seconds: 0.0,
            run_seconds,
            plan_seconds,
            estimate_seconds: 0.0,
            runner_seconds,
        };
        // The next iteration's scale: the largest value seen with 2^2 headroom below 2^30.
        let max = f64::from_bits(sums.stats[0]);
        if max > 0.0 {
            scale_exp = (exponent_of(max) + scale_exp - 27).clamp(-1000, 1000);
        }
        if kept {
            kept_est.push((est, err));
            if err > 0.0 {
                sw += 1.0 / (err * err);
                swx += est / (err * err);
            }
        }
        grid.refine(&sums, spec.alpha);
        record.estimate_seconds = t_estimate.elapsed().as_secs_f64();
        record.seconds = t0.elapsed().as_secs_f64();
        progress(&record);
        iterations.push(record);
        if let Some(target) = spec.target_rel_error
            && kept_est.len() >= 2
        {
            let (m, e) = combine(&kept_est, sw, swx);
            if e <= target * m.abs() {
                stopped_by = "target";
                break;
            }
        }
    }
    if kept_est.is_empty() {
        return Err(Error::invalid(
            "evals",
            spec.max_evals.unwrap_or(0),
            format!("a budget that covers more than the {} warm-up iterations", spec.warmup),
        ));
    }
    let (estimate, std_error) = combine(&kept_est, sw, swx);
    let dof = kept_est.len() as u32 - 1;
    let chi2: f64 = if std_error > 0.0 {
        kept_est.iter().filter(|(_, e)| *e > 0.0).map(|(x, e)| (x - estimate).powi(2) / (e * e)).sum()
    } else {
        0.0
    };
    let nb = spec.bins as usize + 1;
    Ok(IntegrationResult {
        estimate,
        std_error,
        chi2_per_dof: if dof > 0 { chi2 / dof as f64 } else { 0.0 },
        dof,
        evals,
        iterations,
        strata,
        cubes,
        bins: spec.bins,
        stopped_by,
        wall_seconds: start.elapsed().as_secs_f64(),
        grid: grid.edges.chunks(nb).map(<[f64]>::to_vec).collect(),
    })
}

/// Points of the pilot that picks the first iteration's scale.
const PILOT_POINTS: u64 = 4096;
/// The pilot's first stream: far beyond the streams of any run's points (one per point).
const PILOT_STREAM: u64 = 1 << 62;

/// The first iteration's scale exponent: the largest `|f|` at `PILOT_POINTS` uniform points
/// (the seed's streams from `PILOT_STREAM`), evaluated on this host's CPU with the same code in
/// every process (so that MPI ranks agree), placed near `2^28` as later iterations are. Without
/// it the first iteration would run at scale 1, and an integrand far from 1 in size would need a
/// second pass (the bins' quanta need the values near the top of the range). 0 when every pilot
/// value is zero or not finite (the iteration then rescales or reports it).
fn pilot_scale(spec: &IntegrateSpec, integrand: &Integrand<'_>) -> i32 {
    let job = VegasJob {
        seed: spec.seed,
        first_stream: PILOT_STREAM,
        points: PILOT_POINTS,
        cubes: 1,
        dim: spec.dim,
        bins: 1,
        strata: 1,
        scale_exp: 0,
        bin_frac_bits: 0,
        reserved: 0,
    };
    let edges: Vec<f64> = (0..spec.dim).flat_map(|_| [0.0, 1.0]).collect();
    let offsets = [0, PILOT_POINTS];
    let mut sink = vegas::RangeSink::new(0, spec.dim, 1);
    let generator = spec.generator;
    match integrand {
        Integrand::Builtin(p) => crate::with_generator!(generator, G => vegas::run_points::<G, _, _>(&job, *p, &edges, &offsets, 0, PILOT_POINTS, &mut sink)),
        Integrand::Closure(f) => crate::with_generator!(generator, G => vegas::run_points::<G, _, _>(&job, &ClosureIntegrand(*f), &edges, &offsets, 0, PILOT_POINTS, &mut sink)),
        Integrand::Compiled(c) => crate::with_generator!(generator, G => vegas::run_points::<G, _, _>(&job, &ClosureIntegrand(c.cpu), &edges, &offsets, 0, PILOT_POINTS, &mut sink)),
    }
    let max = f64::from_bits(sink.stats[0]);
    if max > 0.0 && max.is_finite() { (exponent_of(max) - 27).clamp(-1000, 1000) } else { 0 }
}

/// The weighted mean of the kept iterations and its standard error; an iteration with zero error
/// (an integrand constant on every hypercube) gives its estimate exactly.
fn combine(kept: &[(f64, f64)], sw: f64, swx: f64) -> (f64, f64) {
    if let Some(&(x, _)) = kept.iter().find(|(_, e)| *e == 0.0) {
        return (x, 0.0);
    }
    (swx / sw, (1.0 / sw).sqrt())
}

/// Split the iteration's points between the runners in proportion to `speeds` (contiguous
/// ranges, in runner order), run them concurrently, write their exact sums into `total` (resized
/// to the job's hypercubes and bins, and overwritten: the buffer of the previous iteration is
/// reused, with no allocation or page faults), and update `speeds` from their times. Returns
/// each runner's seconds (0 for one given no points).
#[allow(clippy::too_many_arguments)]
pub fn run_split(
    job: &VegasJob,
    integrand: &Integrand<'_>,
    generator: GeneratorKind,
    edges: &[f64],
    offsets: &[u64],
    runners: &[&dyn VegasRunner],
    speeds: &mut [f64],
    range: Range<u64>,
    total: &mut VegasSums,
) -> Result<Vec<f64>> {
    if runners.is_empty() || runners.len() != speeds.len() {
        return Err(Error::invalid("runners", runners.len(), format!("at least one, one speed each ({})", speeds.len())));
    }
    let ranges = split_points(range, speeds);
    // The hypercubes each runner's points touch; neighbours share at most the one their
    // boundary cuts. Each runner writes its hypercubes from the end of the previous runner's
    // straight into the total (disjoint slices, from the runners' own threads); the shared
    // ones come back in the parts, to be added.
    let mut owned = Vec::with_capacity(ranges.len());
    let mut owned_end = 0u64;
    for r in &ranges {
        if r.is_empty() {
            owned.push(owned_end..owned_end);
        } else {
            let span = vegas::cube_of(offsets, r.start)..touched_end(offsets, r);
            let from = span.start.max(owned_end).min(span.end);
            owned.push(from..span.end);
            owned_end = owned_end.max(span.end);
        }
    }
    total.first_cube = 0;
    total.cubes.resize(job.cubes as usize * vegas::CUBE_WORDS, 0);
    total.bins.clear();
    total.bins.resize(job.dim as usize * job.bins as usize * vegas::BIN_WORDS, 0);
    total.stats = [0; vegas::STAT_WORDS];
    // The runners' slices of the total; the hypercubes no runner owns (before, between and after
    // them: no points fall there) are zeroed.
    let mut dests = Vec::with_capacity(owned.len());
    let mut rest: &mut [u64] = &mut total.cubes;
    let mut at = 0u64;
    for o in &owned {
        let skip = (o.start.max(at) - at) as usize * vegas::CUBE_WORDS;
        let len = (o.end - o.start) as usize * vegas::CUBE_WORDS;
        let (gap, tail) = std::mem::take(&mut rest).split_at_mut(skip);
        gap.fill(0);
        let (dest, tail) = tail.split_at_mut(len);
        dests.push(dest);
        rest = tail;
        at = at.max(o.end);
    }
    rest.fill(0);
    let run_one = |r: &dyn VegasRunner, range: Range<u64>, from: u64, dest: &mut [u64]| {
        if range.is_empty() {
            return (Ok(None), 0.0);
        }
        let t = Instant::now();
        let out = r.run_into(job, integrand, generator, edges, offsets, range, from, dest);
        (out.map(Some), t.elapsed().as_secs_f64())
    };
    let results: Vec<(Result<Option<VegasSums>>, f64)> = if runners.len() == 1 {
        let dest = dests.pop().unwrap_or_default();
        vec![run_one(runners[0], ranges[0].clone(), owned[0].start, dest)]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = runners
                .iter()
                .zip(ranges.iter().zip(&owned))
                .zip(dests)
                .map(|((&r, (range, owned)), dest)| {
                    let (range, from) = (range.clone(), owned.start);
                    s.spawn(move || run_one(r, range, from, dest))
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("a runner thread panicked")).collect()
        })
    };
    let mut seconds = Vec::with_capacity(results.len());
    for (i, (r, secs)) in results.into_iter().enumerate() {
        if let Some(part) = r? {
            // The shared boundary hypercube (if any), the bins and the statistics.
            total.merge(&part);
        }
        let n = (ranges[i].end - ranges[i].start) as f64;
        if n > 0.0 && secs > 0.0 {
            speeds[i] = n / secs;
        }
        seconds.push(secs);
    }
    Ok(seconds)
}

/// Contiguous pieces of `range`, one per runner, sized in proportion to `speeds`.
pub fn split_points(range: Range<u64>, speeds: &[f64]) -> Vec<Range<u64>> {
    let total: f64 = speeds.iter().sum();
    let points = range.end - range.start;
    let mut out = Vec::with_capacity(speeds.len());
    let mut at = range.start;
    let mut acc = 0.0;
    for (i, s) in speeds.iter().enumerate() {
        acc += s;
        let end = if i + 1 == speeds.len() || !(total > 0.0) {
            if i + 1 == speeds.len() { range.end } else { at }
        } else {
            range.start + ((points as f64) * (acc / total)) as u64
        };
        let end = end.clamp(at, range.end);
        out.push(at..end);
        at = end;
    }
    out
}

/// Points per piece of the CPU runner.
const CPU_PIECE: u64 = 4096;

struct ClosureIntegrand<'a>(&'a (dyn Fn(&[f64]) -> f64 + Sync));

impl vegas::Integrand for ClosureIntegrand<'_> {
    fn eval(&self, x: &[f64]) -> f64 {
        (self.0)(x)
    }
}

/// The CPU runner: the points cut into fixed pieces, summed by the executor's workers.
impl VegasRunner for crate::backend::cpu::CpuExecutor {
    fn describe(&self) -> String {
        format!("CPU, {} threads", self.threads())
    }

    fn run(
        &self,
        job: &VegasJob,
        integrand: &Integrand<'_>,
        generator: GeneratorKind,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
    ) -> Result<VegasSums> {
        check_job(job, edges, offsets, &range)?;
        check_plan(job, offsets)?;
        Ok(match integrand {
            Integrand::Builtin(p) => cpu_sums(self, job, *p, generator, edges, offsets, range),
            Integrand::Closure(f) => cpu_sums(self, job, &ClosureIntegrand(*f), generator, edges, offsets, range),
            Integrand::Compiled(c) => {
                if c.dim != job.dim {
                    return Err(Error::invalid(
                        "dim",
                        job.dim,
                        format!("the compiled integrand's dimension {}", c.dim),
                    ));
                }
                cpu_sums(self, job, &ClosureIntegrand(c.cpu), generator, edges, offsets, range)
            }
        })
    }
}

/// The bins' fixed point for a plan ([`vegas::bin_frac_bits`] of its smallest hypercube).
pub fn plan_bin_frac_bits(offsets: &[u64]) -> u32 {
    // `u64::MAX` (no hypercube) and a decreasing plan (`None`) both count as one point.
    vegas::bin_frac_bits(fewest_points(offsets).filter(|&n| n != u64::MAX).unwrap_or(1))
}

/// The fewest points of a hypercube of the plan (`u64::MAX` for none), or `None` when the
/// offsets decrease anywhere: one parallel pass (each device's thread checks its part of the
/// plan, [`check_job`]).
fn fewest_points(offsets: &[u64]) -> Option<u64> {
    use rayon::prelude::*;
    offsets
        .par_chunks(CUBE_PIECE)
        .enumerate()
        .map(|(p, c)| {
            // Each piece from the last offset of the piece before it (the first from its own first).
            let (mut prev, c) = if p == 0 { (c[0], &c[1..]) } else { (offsets[p * CUBE_PIECE - 1], c) };
            let mut fewest = u64::MAX;
            for &o in c {
                fewest = fewest.min(o.checked_sub(prev)?);
                prev = o;
            }
            Some(fewest)
        })
        .try_reduce(|| u64::MAX, |a, b| Some(a.min(b)))
}

/// The shapes the kernels rely on, checked before any backend runs a job: the job's sizes, the
/// grid's length, the plan's ends, and the part of the plan that the points of `range` read,
/// `offsets[part]` (their hypercubes' starts and the end of the last), which is returned. That
/// part must not decrease, must reach from at or before the range's first point to at or after
/// its end, and its hypercubes must have the points that the job's `bin_frac_bits` assumes. A
/// GPU copies only that part (the rest of its copy set to 0 before it and `u64::MAX` after, so
/// that the whole is non-decreasing): N devices check and copy 1/N of the plan each. The CPU,
/// whose search reads all of the plan, checks the rest too ([`check_plan`]).
pub fn check_job(job: &VegasJob, edges: &[f64], offsets: &[u64], range: &Range<u64>) -> Result<Range<usize>> {
    let bad = || Error::invalid("vegas job", format!("{job:?}"), "a consistent plan (dims, edges, offsets, range)");
    let ok = job.dim >= 1
        && job.dim as usize <= MAX_DIM
        && (2..=MAX_BINS).contains(&job.bins)
        && job.strata >= 1
        && (job.strata as u64).checked_pow(job.dim) == Some(job.cubes)
        && edges.len() == job.dim as usize * (job.bins as usize + 1)
        && offsets.len() as u64 == job.cubes + 1
        && offsets.first() == Some(&0)
        && offsets.last() == Some(&job.points)
        && range.start <= range.end
        && range.end <= job.points
        && job.reserved == 0;
    if !ok {
        return Err(bad());
    }
    if range.is_empty() {
        return Ok(0..0);
    }
    // With `offsets[0] = 0 <= k < points = offsets[cubes]`, the search keeps
    // `offsets[lo] <= k < offsets[hi]` whatever the plan: the part found covers the range.
    let part = vegas::cube_of(offsets, range.start) as usize..touched_end(offsets, range) as usize + 1;
    let p = offsets.get(part.clone()).unwrap_or(&[]);
    // The part and one entry beyond it on each side, so that a plan decreasing just where the
    // part starts or ends (a search of a broken plan can stop there) is refused too.
    let near = offsets.get(part.start.saturating_sub(1)..(part.end + 1).min(offsets.len())).unwrap_or(&[]);
    let ok = p.len() >= 2
        && p[0] <= range.start
        && p[p.len() - 1] >= range.end
        && fewest_points(near).is_some_and(|n| job.bin_frac_bits <= vegas::bin_frac_bits(n));
    if !ok {
        return Err(bad());
    }
    Ok(part)
}

/// The whole plan non-decreasing, with the points per hypercube that the job's
/// `bin_frac_bits` assumes: what a runner whose search reads all of the plan (the CPU's)
/// checks beyond [`check_job`].
pub fn check_plan(job: &VegasJob, offsets: &[u64]) -> Result<()> {
    if !fewest_points(offsets).is_some_and(|n| job.bin_frac_bits <= vegas::bin_frac_bits(n)) {
        return Err(Error::invalid("vegas job", format!("{job:?}"), "a non-decreasing plan (offsets)"));
    }
    Ok(())
}

fn cpu_sums<F: vegas::Integrand + Sync + ?Sized>(
    cpu: &crate::backend::cpu::CpuExecutor,
    job: &VegasJob,
    f: &F,
    generator: GeneratorKind,
    edges: &[f64],
    offsets: &[u64],
    range: Range<u64>,
) -> VegasSums {
    use rayon::prelude::*;
    // A collective generator's pieces are its tiles (a piece starting inside one would first
    // draw past the tile's earlier rounds).
    let piece = if generator.lanes() > 1 { vegas::TILE_POINTS } else { CPU_PIECE };
    // Pieces at multiples of `piece` (the first and last ones cut by the range).
    let base = range.start / piece;
    let pieces = if range.is_empty() { 0 } else { (range.end - 1) / piece + 1 - base };
    let parts: Vec<vegas::RangeSink> = cpu.install(|| {
        (0..pieces)
            .into_par_iter()
            .map(|c| {
                let first = ((base + c) * piece).max(range.start);
                let end = ((base + c + 1) * piece).min(range.end);
                let mut sink = vegas::RangeSink::new(vegas::cube_of(offsets, first), job.dim, job.bins);
                crate::with_generator!(generator, G => vegas::run_points::<G, F, _>(job, f, edges, offsets, first, end, &mut sink));
                sink
            })
            .collect()
    });
    let mut total = VegasSums::zeros(job.cubes, job.dim, job.bins);
    for p in parts {
        total.merge(&VegasSums { first_cube: p.first_cube, cubes: p.cubes, bins: p.bins, stats: p.stats });
    }
    total
}

/// The devices a run uses: the CPU's workers, or one or more GPUs.
pub enum Runners {
    Cpu(crate::backend::cpu::CpuExecutor),
    #[cfg(feature = "gpu")]
    Gpu(Vec<crate::backend::gpu::GpuExecutor>),
}

impl Runners {
    /// Open what `opts` asks for; `gpus` is `all`, a count `N` (devices `0..N`) or a list
    /// `0,2,3`, and applies to the GPU (default: `opts.gpu_device` alone). `auto` falls back to the
    /// CPU where no GPU can be opened.
    pub fn open(opts: &crate::backend::BackendOptions, gpus: Option<&str>) -> Result<Self> {
        use crate::backend::BackendKind;
        let cpu = || Ok(Runners::Cpu(crate::backend::cpu::CpuExecutor::new(opts.cpu_threads)?));
        match opts.kind {
            BackendKind::Cpu => cpu(),
            BackendKind::Gpu => Self::open_gpus(opts, gpus),
            BackendKind::Auto => match Self::open_gpus(opts, gpus) {
                Err(Error::GpuUnavailable(_)) => cpu(),
                other => other,
            },
        }
    }

    #[cfg(feature = "gpu")]
    fn open_gpus(opts: &crate::backend::BackendOptions, gpus: Option<&str>) -> Result<Self> {
        let devices = parse_gpus(gpus, opts.gpu_device, gpu_count()?)?;
        let execs = devices
            .iter()
            .map(|&d| crate::backend::gpu::GpuExecutor::new(&crate::backend::BackendOptions { gpu_device: d, ..*opts }))
            .collect::<Result<Vec<_>>>()?;
        Ok(Runners::Gpu(execs))
    }

    #[cfg(not(feature = "gpu"))]
    fn open_gpus(_: &crate::backend::BackendOptions, _: Option<&str>) -> Result<Self> {
        Err(Error::GpuUnavailable("this build of warpmc has no GPU support (built without the `gpu` feature)".into()))
    }

    /// The runners, in device order.
    pub fn list(&self) -> Vec<&dyn VegasRunner> {
        match self {
            Runners::Cpu(c) => vec![c as &dyn VegasRunner],
            #[cfg(feature = "gpu")]
            Runners::Gpu(g) => g.iter().map(|e| e as &dyn VegasRunner).collect(),
        }
    }
}

/// CUDA devices on this machine.
#[cfg(feature = "gpu")]
pub fn gpu_count() -> Result<usize> {
    // SAFETY: only probes for the library.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(Error::GpuUnavailable("the CUDA driver library (libcuda.so) was not found".into()));
    }
    cudarc::driver::CudaContext::device_count()
        .map(|c| c as usize)
        .map_err(|e| Error::GpuUnavailable(format!("cannot count CUDA devices: {e:?}")))
}

/// `--gpus`: `all`, a count `N` (devices `0..N`), or a comma-separated list of ordinals, each
/// below `count`; none given means `default` alone.
pub fn parse_gpus(gpus: Option<&str>, default: usize, count: usize) -> Result<Vec<usize>> {
    let allowed = format!("all, a count in [1, {count}], or a list of distinct device ordinals below {count}");
    let Some(g) = gpus.map(str::trim) else {
        return if default < count {
            Ok(vec![default])
        } else {
            Err(Error::invalid("gpu_device", default, format!("[0, {count})")))
        };
    };
    if g == "all" {
        return if count > 0 { Ok((0..count).collect()) } else { Err(Error::GpuUnavailable("no CUDA device".into())) };
    }
    if !g.contains(',')
        && let Ok(n) = g.parse::<usize>()
    {
        return if (1..=count).contains(&n) { Ok((0..n).collect()) } else { Err(Error::invalid("gpus", g, allowed)) };
    }
    let list: Vec<usize> = g
        .split(',')
        .map(|s| s.trim().parse::<usize>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Error::invalid("gpus", g, allowed.clone()))?;
    let distinct = list.iter().collect::<std::collections::BTreeSet<_>>().len() == list.len();
    if list.is_empty() || !distinct || list.iter().any(|&d| d >= count) {
        return Err(Error::invalid("gpus", g, allowed));
    }
    Ok(list)
}

/// The grid's overhead on one GPU: the evaluation rate of an iteration's kernel against a fused
/// kernel that evaluates the same integrand at plain uniform points (no strata, grid or bins).
#[derive(Clone, Debug, serde::Serialize)]
pub struct KernelRates {
    pub points: u64,
    /// Evaluations per second of the VEGAS kernel (the final grid, an even allocation).
    pub vegas: f64,
    /// Evaluations per second of the plain kernel (Philox, the same integrand).
    pub plain: f64,
    /// `vegas / plain`.
    pub ratio: f64,
}

/// Time both kernels on `gpu` at the run's points per iteration (each launched once untimed
/// first, then the fastest of several timed launches), with the final grid `result.grid`.
#[cfg(feature = "gpu")]
pub fn kernel_rates(
    gpu: &crate::backend::gpu::GpuExecutor,
    spec: &IntegrateSpec,
    params: &IntegrandParams,
    result: &IntegrationResult,
) -> Result<KernelRates> {
    let cubes = result.cubes;
    let offsets = allocate(cubes, spec.evals_per_iteration);
    let points = *offsets.last().unwrap();
    let edges: Vec<f64> = result.grid.iter().flatten().copied().collect();
    let job = VegasJob {
        seed: spec.seed,
        first_stream: 1 << 50,
        points,
        cubes,
        dim: spec.dim,
        bins: spec.bins,
        strata: result.strata,
        scale_exp: 0,
        bin_frac_bits: plan_bin_frac_bits(&offsets),
        reserved: 0,
    };
    // The plain kernel's values need a scale of their own (no Jacobian): from the largest of
    // 4096 values on the host, raised until no value is out of range on the GPU.
    let mut max = 0.0f64;
    let mut rng = <warpmc_kernels::rng::Philox4x32x10 as warpmc_kernels::rng::Generator>::stream(spec.seed, 1 << 51);
    let mut x = vec![0.0; spec.dim as usize];
    for _ in 0..4096 {
        for xj in x.iter_mut() {
            use warpmc_kernels::rng::Uniform32;
            *xj = warpmc_kernels::convert::u32_pair_to_unit_f64(rng.next_u32(), rng.next_u32());
        }
        max = max.max(vegas::genz(params, &x).abs());
    }
    let mut plain_job = VegasJob { scale_exp: if max > 0.0 { exponent_of(max) - 24 } else { 0 }, ..job };
    while gpu.time_vegas_plain(&plain_job, params, points, 1)?.3 > 0 && plain_job.scale_exp < 1000 {
        plain_job.scale_exp += 6;
    }
    let sums = gpu.vegas(&job, params, spec.generator, &edges, &offsets, 0..points, None)?;
    let max = f64::from_bits(sums.stats[0]);
    let job = VegasJob { scale_exp: if max > 0.0 { exponent_of(max) - 27 } else { 0 }, ..job };
    // Each kernel's fastest of several timed launches; the baseline's also over the launch
    // shapes it might prefer (1 to 8 waves of blocks: the VEGAS kernel's default launch has
    // several), so that the ratio does not flatter the VEGAS kernel.
    let mut ms_v = f64::INFINITY;
    for _ in 0..3 {
        let mut ms = 0.0;
        gpu.vegas(&job, params, spec.generator, &edges, &offsets, 0..points, Some(&mut ms))?;
        ms_v = ms_v.min(ms);
    }
    let mut ms_p = f64::INFINITY;
    for waves in [1, 2, 4, 8] {
        for _ in 0..2 {
            ms_p = ms_p.min(gpu.time_vegas_plain(&plain_job, params, points, waves)?.0);
        }
    }
    let (vegas, plain) = (points as f64 / (ms_v * 1e-3), points as f64 / (ms_p * 1e-3));
    Ok(KernelRates { points, vegas, plain, ratio: vegas / plain })
}

/// What `warpmc integrate` reports.
#[derive(Clone, Debug, serde::Serialize)]
pub struct IntegrateReport {
    pub integrand: crate::integrands::IntegrandSpec,
    pub settings: IntegrateSpec,
    pub backend: String,
    /// Runners at the top level of the split (devices, or 1 under MPI).
    pub devices: usize,
    /// MPI ranks (1 without MPI).
    pub ranks: usize,
    pub estimate: f64,
    pub std_error: f64,
    pub rel_error: f64,
    pub chi2_per_dof: f64,
    pub dof: u32,
    pub evals: u64,
    pub iterations: usize,
    pub exact: f64,
    pub z: f64,
    pub wall_seconds: f64,
    pub evals_per_second: f64,
    pub stopped_by: &'static str,
    pub strata: u32,
    pub cubes: u64,
    pub per_iteration: Vec<Iteration>,
    /// With `--kernel-rates` on a GPU.
    pub kernel_rates: Option<KernelRates>,
}

impl IntegrateReport {
    pub fn new(
        is: &crate::integrands::IntegrandSpec,
        spec: &IntegrateSpec,
        list: &[&dyn VegasRunner],
        r: &IntegrationResult,
    ) -> Self {
        let exact = is.exact();
        Self {
            integrand: is.clone(),
            settings: spec.clone(),
            backend: list.iter().map(|r| r.describe()).collect::<Vec<_>>().join("; "),
            devices: list.len(),
            ranks: 1,
            estimate: r.estimate,
            std_error: r.std_error,
            rel_error: r.std_error / r.estimate.abs(),
            chi2_per_dof: r.chi2_per_dof,
            dof: r.dof,
            evals: r.evals,
            iterations: r.iterations.len(),
            exact,
            z: if r.std_error > 0.0 { (r.estimate - exact) / r.std_error } else { 0.0 },
            wall_seconds: r.wall_seconds,
            evals_per_second: r.evals as f64 / r.wall_seconds,
            stopped_by: r.stopped_by,
            strata: r.strata,
            cubes: r.cubes,
            per_iteration: r.iterations.clone(),
            kernel_rates: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::CpuExecutor;
    use crate::integrands::{Family, IntegrandSpec};

    fn run(spec: &IntegrateSpec, is: &IntegrandSpec, threads: &[usize]) -> IntegrationResult {
        let execs: Vec<CpuExecutor> = threads.iter().map(|&t| CpuExecutor::new(Some(t)).unwrap()).collect();
        let dynr: Vec<&dyn VegasRunner> = execs.iter().map(|r| r as &dyn VegasRunner).collect();
        let p = is.params();
        integrate(spec, &Integrand::Builtin(&p), &dynr, |_| {}).unwrap()
    }

    fn small(dim: u32) -> IntegrateSpec {
        IntegrateSpec { evals_per_iteration: 20_000, max_iterations: 6, ..IntegrateSpec::new(dim) }
    }

    #[test]
    fn the_parallel_plan_is_the_serial_one() {
        // The plan as one serial loop: counts, running sums, fewest.
        let serial = |cubes: u64, evals: u64, w: Option<&[f64]>| {
            let spare = evals.saturating_sub(2 * cubes);
            // Σw piece by piece (CUBE_PIECE weights each, in order), the pieces in order.
            let total: f64 = w
                .map(|w| w.chunks(CUBE_PIECE).map(|c| c.iter().fold(0.0, |a, &x| a + x)).fold(0.0, |a, x| a + x))
                .unwrap_or(0.0);
            let mut offsets = vec![0u64];
            for h in 0..cubes as usize {
                let extra = match w {
                    Some(w) if total > 0.0 && total.is_finite() => ((spare as f64) * (w[h] / total)) as u64,
                    _ => spare / cubes,
                };
                offsets.push(offsets[h] + 2 + extra.min(spare));
            }
            let fewest = offsets.windows(2).map(|p| p[1] - p[0]).min().unwrap();
            (offsets, fewest)
        };
        let mut buf = vec![9u64; 3]; // reused, of the wrong length, then of the right one
        // Several pieces (3^9 = 19683 hypercubes), one piece, one hypercube; weights spread over
        // decades, all zero, one infinite, none.
        for cubes in [19_683u64, 100, 1] {
            let spread: Vec<f64> = (0..cubes).map(|h| ((h * 7919) % 1000) as f64 * 1e-3 + (h % 5) as f64 * 10.0).collect();
            let zeros = vec![0.0; cubes as usize];
            let mut inf = spread.clone();
            inf[0] = f64::INFINITY;
            for w in [Some(&spread[..]), Some(&zeros[..]), Some(&inf[..]), None] {
                for evals in [2 * cubes, 1_000_003, 7 * cubes + 5] {
                    let fewest = allocate_into(cubes, evals, w.map(|w| (w, piecewise_sum(w))), &mut buf);
                    let (want, want_fewest) = serial(cubes, evals, w);
                    assert_eq!(buf, want, "{cubes} hypercubes, {evals} points");
                    assert_eq!(fewest, want_fewest);
                    assert_eq!(fewest_points(&buf), Some(want_fewest));
                    assert_eq!(plan_bin_frac_bits(&buf), vegas::bin_frac_bits(fewest));
                }
            }
        }
        // A plan that decreases anywhere (inside a piece or across two) is refused.
        let mut bad = allocate(19_683, 1 << 20);
        for at in [5usize, CUBE_PIECE, CUBE_PIECE + 1, 19_683] {
            let mut b = bad.clone();
            b[at] = b[at - 1] - 1;
            assert_eq!(fewest_points(&b), None, "decrease at {at}");
        }
        bad[19_683] += 1;
        assert!(fewest_points(&bad).is_some());
    }

    #[test]
    fn the_estimate_adds_the_weights_as_the_plan_would() {
        // Σw from `estimate` (added as the weights are written) is `piecewise_sum` of them, bit
        // for bit, over several pieces and a short last one; and the estimate is Σ mean_h / cubes.
        let cubes = 2 * CUBE_PIECE as u64 + 77;
        let offsets = allocate(cubes, 5 * cubes);
        let mut sums = VegasSums::zeros(cubes, 1, 2);
        let mut want = 0.0;
        for h in 0..cubes as usize {
            use warpmc_kernels::accum::{ExactSum, to_fixed64};
            let (mut s1, mut s2) = (ExactSum::ZERO, ExactSum::ZERO);
            let n = (offsets[h + 1] - offsets[h]) as f64;
            for k in 0..offsets[h + 1] - offsets[h] {
                let x = ((h as u64 * 7919 + k * 104_729) % 1000) as f64 / 64.0 - 3.0;
                s1.add_fixed(to_fixed64(x).unwrap());
                s2.add_fixed(to_fixed64(x * x).unwrap());
                want += x / n / cubes as f64;
            }
            sums.cubes[h * vegas::CUBE_WORDS..][..3].copy_from_slice(&s1.w);
            sums.cubes[h * vegas::CUBE_WORDS + 3..][..3].copy_from_slice(&s2.w);
        }
        let mut weights = Vec::new();
        let e = estimate(&sums, &offsets, 0.75, &mut weights);
        assert_eq!(weights.len(), cubes as usize);
        assert!(weights.iter().filter(|&&w| w > 0.0).count() > cubes as usize / 2);
        assert_eq!(e.weight_sum.to_bits(), piecewise_sum(&weights).to_bits());
        assert!((e.estimate - want).abs() < 1e-12 * want.abs().max(1.0), "{} against {want}", e.estimate);
        assert!(e.variance > 0.0);
    }

    #[test]
    fn a_job_is_checked_on_the_part_of_the_plan_its_range_reads() {
        let (cubes, evals) = (4096u64, 40_000u64);
        let offsets = allocate(cubes, evals);
        let points = offsets[cubes as usize]; // 9 a hypercube
        let job = VegasJob {
            seed: 1,
            first_stream: 0,
            points,
            cubes,
            dim: 2,
            bins: 8,
            strata: 64,
            scale_exp: 0,
            bin_frac_bits: plan_bin_frac_bits(&offsets),
            reserved: 0,
        };
        let edges = Grid::uniform(2, 8).edges;
        // The part: the hypercubes of the range's points and the end of the last.
        let range = 1234..20_000;
        let part = check_job(&job, &edges, &offsets, &range).unwrap();
        assert_eq!(part, vegas::cube_of(&offsets, 1234) as usize..touched_end(&offsets, &range) as usize + 1);
        assert!(offsets[part.start] <= range.start && offsets[part.end - 1] >= range.end);
        assert_eq!(check_job(&job, &edges, &offsets, &(7..7)).unwrap(), 0..0);
        assert_eq!(check_job(&job, &edges, &offsets, &(0..points)).unwrap(), 0..cubes as usize + 1);
        // A decrease in the part or where it starts or ends is refused; one far from it is left
        // to the whole plan's check.
        for (at, refused) in [(part.start, true), (part.start + 1, true), (part.end - 1, true), (part.end + 3, false), (2, false)] {
            let mut bad = offsets.clone();
            bad[at] = bad[at - 1] - 1;
            assert_eq!(check_job(&job, &edges, &bad, &range).is_err(), refused, "decrease at {at}");
            assert!(check_plan(&job, &bad).is_err());
        }
        assert!(check_plan(&job, &offsets).is_ok());
        // Too few points for the job's bin fixed point, in the part or only outside it.
        let coarse = VegasJob { bin_frac_bits: job.bin_frac_bits + 1, ..job };
        assert!(check_job(&coarse, &edges, &offsets, &range).is_err());
        let mut thin = offsets.clone();
        let last = cubes as usize;
        thin[last - 1] = thin[last] - 1; // the last hypercube left with one point
        let thin_job = VegasJob { bin_frac_bits: plan_bin_frac_bits(&offsets), ..job };
        assert!(check_job(&thin_job, &edges, &thin, &range).is_ok());
        assert!(check_plan(&thin_job, &thin).is_err());
        // The plan's ends and lengths.
        let mut shifted = offsets.clone();
        shifted[0] = 1;
        assert!(check_job(&job, &edges, &shifted, &range).is_err());
        assert!(check_job(&job, &edges, &offsets[..offsets.len() - 1], &range).is_err());
        assert!(check_job(&job, &edges, &offsets, &(0..points + 1)).is_err());
    }

    #[test]
    fn allocation_weights_are_sigma_to_the_beta() {
        for beta in [0.25, 0.5, 0.75, 1.0, 0.6] {
            for sigma in [1e-300, 3.7e-9, 0.5, 1.0, 2.0, 12345.678, 1e300] {
                let w = allocation_weight(sigma, beta);
                let want = sigma.powf(beta);
                // The square roots round once or twice; exp(β ln σ) amplifies ln's rounding by
                // |β ln σ| (up to 400 here).
                let tol = if beta == 0.6 { 1e-14 } else { 4e-16 };
                assert!(((w - want) / want).abs() < tol, "{sigma}^{beta}: {w} vs {want}");
            }
            assert_eq!(allocation_weight(0.0, beta), 0.0);
        }
        assert_eq!(allocation_weight(0.0, 0.0), 1.0);
        assert_eq!(allocation_weight(5.0, 0.0), 1.0);
    }

    #[test]
    fn every_family_agrees_with_its_closed_form() {
        for (fam, dim) in Family::ALL.iter().flat_map(|&f| [(f, 2u32), (f, 5)]) {
            let is = IntegrandSpec::new(fam, dim).unwrap();
            let r = run(&small(dim), &is, &[2]);
            let exact = is.exact();
            let z = (r.estimate - exact) / r.std_error;
            assert!(z.abs() < 4.0, "{} d={dim}: {} ± {} vs {exact} (z = {z:.2})", fam.name(), r.estimate, r.std_error);
            assert!(r.std_error < 0.05 * exact.abs(), "{} d={dim}: error {} too large", fam.name(), r.std_error);
        }
    }

    #[test]
    fn the_result_is_the_same_bits_for_any_thread_count_and_split() {
        let is = IntegrandSpec::new(Family::Gaussian, 4).unwrap();
        // Philox, and a warp generator's tiles (32768 points) cut by the pieces and the splits:
        // 100000 points an iteration are four tiles, the last one partial, so the pieces of 2
        // and 7 threads and the runners' shares fall on different tiles (20000 would be one).
        for (generator, evals) in [(GeneratorKind::Philox4x32x10, 20_000), (GeneratorKind::Warp, 100_000)] {
            let spec = IntegrateSpec { generator, evals_per_iteration: evals, ..small(4) };
            let base = run(&spec, &is, &[1]);
            for threads in [&[2][..], &[7], &[1, 3], &[2, 2, 1]] {
                let r = run(&spec, &is, threads);
                assert_eq!(r.estimate.to_bits(), base.estimate.to_bits(), "{generator:?} {threads:?}");
                assert_eq!(r.std_error.to_bits(), base.std_error.to_bits(), "{generator:?} {threads:?}");
                assert_eq!(r.grid, base.grid);
            }
            let z = (base.estimate - is.exact()) / base.std_error;
            assert!(z.abs() < 5.0, "{generator:?}: {} ± {} vs {} (z = {z:.2})", base.estimate, base.std_error, is.exact());
        }
    }

    #[test]
    fn split_sums_are_the_whole_for_any_speeds_and_idle_runners() {
        // Uneven, tiny and zero speeds: boundaries inside hypercubes, a runner with no points,
        // runners whose points lie in one hypercube. Every split gives the one-runner sums.
        let is = IntegrandSpec::new(Family::ProductPeak, 3).unwrap();
        let p = is.params();
        let (dim, bins, strata) = (3u32, 8u32, 4u32);
        let cubes = (strata as u64).pow(dim);
        let offsets = allocate(cubes, 1000);
        let points = *offsets.last().unwrap();
        let job = VegasJob {
            seed: 11,
            first_stream: 0,
            points,
            cubes,
            dim,
            bins,
            strata,
            scale_exp: 0,
            bin_frac_bits: plan_bin_frac_bits(&offsets),
            reserved: 0,
        };
        let edges: Vec<f64> = (0..dim).flat_map(|_| (0..=bins).map(|i| (i as f64 / bins as f64).powi(2))).collect();
        let execs: Vec<CpuExecutor> = (0..4).map(|_| CpuExecutor::new(Some(1)).unwrap()).collect();
        let all: Vec<&dyn VegasRunner> = execs.iter().map(|r| r as &dyn VegasRunner).collect();
        let f = Integrand::Builtin(&p);
        // One buffer for every call, as an integration reuses it: each call overwrites it all.
        let mut buf = VegasSums::zeros(1, 1, 1);
        buf.stats = [7; 3];
        let mut split = |speeds: &[f64], range: Range<u64>| {
            let mut sp = speeds.to_vec();
            let runners = &all[..sp.len()];
            let pieces = split_points(range.clone(), &sp);
            let secs =
                run_split(&job, &f, GeneratorKind::Philox4x32x10, &edges, &offsets, runners, &mut sp, range, &mut buf)
                    .unwrap();
            // One time per runner, zero exactly for the runners given no points.
            assert_eq!(secs.len(), pieces.len());
            for (s, p) in secs.iter().zip(&pieces) {
                assert_eq!(*s == 0.0, p.is_empty(), "{p:?} took {s} s");
            }
            buf.clone()
        };
        let whole = split(&[1.0], 0..points);
        assert!(whole.cubes.iter().any(|&w| w != 0) && whole.stats[0] != 0 && whole.stats[1..] == [0, 0]);
        for speeds in [&[1.0, 1.0][..], &[1.0, 0.0, 2.0], &[1e-3, 1.0, 1e-3, 1.0], &[0.0, 0.0, 1.0], &[3.0, 1e-9]] {
            assert_eq!(split(speeds, 0..points), whole, "{speeds:?}");
        }
        // A part of the points (as one MPI rank runs): the hypercubes outside it are zero.
        let part = split(&[1.0, 2.0], 100..700);
        let (c0, c1) = (vegas::cube_of(&offsets, 100), vegas::cube_of(&offsets, 699));
        assert!(part.cubes[..c0 as usize * 6].iter().chain(&part.cubes[(c1 as usize + 1) * 6..]).all(|&w| w == 0));
        assert_eq!(split(&[1.0], 100..700), part);
        assert_eq!(split(&[1.0], 0..points), whole);
    }

    #[test]
    fn run_into_takes_exactly_the_touched_hypercubes() {
        // `dest_offset`: a destination from hypercube 5 of a part holding 3..9 is 4 hypercubes
        // long and starts 2 hypercubes in; empty at the end; anything else is refused.
        assert_eq!(dest_offset(5, 24, 3..9).unwrap(), 12);
        assert_eq!(dest_offset(9, 0, 3..9).unwrap(), 36);
        assert_eq!(dest_offset(3, 36, 3..9).unwrap(), 0);
        for (from, words) in [(5, 18), (5, 30), (2, 42), (10, 0), (9, 6), (5, 25)] {
            let e = dest_offset(from, words, 3..9).unwrap_err().to_string();
            assert!(e.contains("hypercubes") && e.contains("3..=9"), "{from}, {words}: {e}");
        }
        // The CPU runner (the trait's default): the last hypercubes go to `dest`, the rest stay
        // in the part, together the sums of `run`; a destination one hypercube short (which the
        // runner once filled silently, dropping the rest) is an error.
        let is = IntegrandSpec::new(Family::Gaussian, 2).unwrap();
        let p = is.params();
        let offsets = allocate(16, 400);
        let job = VegasJob {
            seed: 5,
            first_stream: 0,
            points: *offsets.last().unwrap(),
            cubes: 16,
            dim: 2,
            bins: 4,
            strata: 4,
            scale_exp: 0,
            bin_frac_bits: plan_bin_frac_bits(&offsets),
            reserved: 0,
        };
        let edges: Vec<f64> = (0..2).flat_map(|_| (0..=4).map(|i| i as f64 / 4.0)).collect();
        let cpu = CpuExecutor::new(Some(2)).unwrap();
        let (f, g) = (Integrand::Builtin(&p), GeneratorKind::Philox4x32x10);
        let range = 30..300;
        let whole = cpu.run(&job, &f, g, &edges, &offsets, range.clone()).unwrap().into_full(16);
        let (first, end) = (vegas::cube_of(&offsets, 30), touched_end(&offsets, &range));
        assert!(first > 0 && end < 16, "the range touches hypercubes {first}..{end}");
        let from = first + 2;
        let mut dest = vec![0u64; (end - from) as usize * vegas::CUBE_WORDS];
        let part = cpu.run_into(&job, &f, g, &edges, &offsets, range.clone(), from, &mut dest).unwrap();
        assert_eq!(part.cube_range().end, from);
        let mut together = part.into_full(16);
        let at = from as usize * vegas::CUBE_WORDS;
        together.cubes[at..at + dest.len()].copy_from_slice(&dest);
        assert_eq!(together, whole);
        let mut short = vec![0u64; dest.len() - vegas::CUBE_WORDS];
        let e = cpu.run_into(&job, &f, g, &edges, &offsets, range, from, &mut short).unwrap_err().to_string();
        assert!(e.contains("hypercubes"), "{e}");
    }

    #[test]
    fn a_closure_integrand_runs_on_the_cpu() {
        let runner = CpuExecutor::new(Some(2)).unwrap();
        let f = |x: &[f64]| x.iter().map(|v| v * v).sum::<f64>();
        let spec = small(3);
        let r = integrate(&spec, &Integrand::Closure(&f), &[&runner], |_| {}).unwrap();
        assert!(((r.estimate - 1.0) / r.std_error).abs() < 4.0, "{} ± {}", r.estimate, r.std_error);
        // A NaN is an error, not a number.
        let g = |x: &[f64]| if x[0] > 0.5 { f64::NAN } else { 1.0 };
        let e = integrate(&spec, &Integrand::Closure(&g), &[&runner], |_| {}).unwrap_err();
        assert!(e.to_string().contains("NaN"), "{e}");
    }

    #[test]
    fn huge_and_tiny_integrands_are_rescaled_exactly() {
        let runner = CpuExecutor::new(Some(2)).unwrap();
        let spec = small(2);
        for scale in [1e-30, 1e40] {
            let f = move |x: &[f64]| scale * (x[0] + x[1]);
            let r = integrate(&spec, &Integrand::Closure(&f), &[&runner], |_| {}).unwrap();
            assert!(((r.estimate - scale) / r.std_error).abs() < 4.0, "{scale}: {} ± {}", r.estimate, r.std_error);
            // The pilot picked the scale: the first iteration needed no second pass.
            assert_eq!(r.iterations[0].rescaled, 0, "{scale}");
            assert!((pilot_scale(&spec, &Integrand::Closure(&f)) as f64 - (scale.log2() - 27.0)).abs() <= 2.0);
        }
    }

    #[test]
    fn adaptation_pays_on_a_peak() {
        let is = IntegrandSpec::new(Family::NarrowGaussians, 4).unwrap();
        let adaptive = run(&small(4), &is, &[2]);
        let flat = run(&IntegrateSpec { alpha: 0.0, beta: 0.0, ..small(4) }, &is, &[2]);
        assert!(adaptive.std_error * 3.0 < flat.std_error, "{} vs {}", adaptive.std_error, flat.std_error);
        let z = (adaptive.estimate - is.exact()) / adaptive.std_error;
        assert!(z.abs() < 4.0, "z = {z}");
    }

    #[test]
    fn the_target_stops_the_run() {
        let is = IntegrandSpec::new(Family::Oscillatory, 3).unwrap();
        let spec = IntegrateSpec { target_rel_error: Some(1e-3), max_iterations: 50, ..small(3) };
        let r = run(&spec, &is, &[2]);
        assert_eq!(r.stopped_by, "target");
        assert!(r.std_error <= 1e-3 * r.estimate.abs());
        let spec = IntegrateSpec { max_evals: Some(100_000), max_iterations: 50, ..small(3) };
        let r = run(&spec, &is, &[2]);
        assert_eq!(r.stopped_by, "budget");
        assert!(r.evals <= 100_000);
    }

    /// On smooth integrands the iterations agree as their error bars say: `χ²/dof` averages about
    /// 1 over seeds (one value with 9 degrees of freedom has a standard deviation of 0.47; the
    /// mean of 8, 0.17).
    #[test]
    fn chi2_per_dof_is_near_one_on_smooth_integrands() {
        for fam in [Family::Gaussian, Family::Oscillatory, Family::Continuous] {
            let is = IntegrandSpec::new(fam, 4).unwrap();
            let mut sum = 0.0;
            let seeds = 8;
            for seed in 1..=seeds {
                let spec = IntegrateSpec { seed, max_iterations: 12, ..small(4) };
                let r = run(&spec, &is, &[2]);
                assert_eq!(r.dof, 9);
                sum += r.chi2_per_dof;
            }
            let mean = sum / seeds as f64;
            assert!((0.55..=1.6).contains(&mean), "{}: mean chi2/dof {mean:.3} over {seeds} seeds", fam.name());
        }
    }

    #[test]
    fn bad_settings_are_named() {
        let mut s = IntegrateSpec::new(0);
        assert!(s.validate().unwrap_err().to_string().contains("dim"));
        s.dim = 3;
        s.target_rel_error = Some(-1.0);
        assert!(s.validate().unwrap_err().to_string().contains("target_rel_error"));
        s.target_rel_error = None;
        s.bins = 1;
        assert!(s.validate().unwrap_err().to_string().contains("bins"));
        s.bins = 64;
        s.evals_per_iteration = 10;
        assert!(s.validate().unwrap_err().to_string().contains("evals_per_iteration"));
    }

    #[test]
    fn gpus_are_parsed_and_checked() {
        assert_eq!(parse_gpus(None, 1, 2).unwrap(), [1]);
        assert_eq!(parse_gpus(Some("all"), 0, 3).unwrap(), [0, 1, 2]);
        assert_eq!(parse_gpus(Some("2"), 0, 3).unwrap(), [0, 1]);
        assert_eq!(parse_gpus(Some("2,0"), 0, 3).unwrap(), [2, 0]);
        for bad in ["0", "4", "0,0", "1,5", "x", ""] {
            let e = parse_gpus(Some(bad), 0, 3).unwrap_err().to_string();
            assert!(e.contains("invalid gpus"), "{bad}: {e}");
        }
        assert!(parse_gpus(None, 3, 2).unwrap_err().to_string().contains("gpu_device"));
    }

    #[test]
    fn refinement_moves_edges_toward_the_weight() {
        let edges: Vec<f64> = (0..=4).map(|i| i as f64 / 4.0).collect();
        let new = refine_axis(&edges, &[0.0, 0.0, 0.0, 10.0], 1.0);
        assert_eq!(new[0], 0.0);
        assert_eq!(new[4], 1.0);
        assert!(new.windows(2).all(|w| w[0] < w[1]), "{new:?}");
        assert!(new[1] > 0.5, "{new:?}");
        assert_eq!(split_points(0..10, &[1.0, 1.0, 2.0]), vec![0..2, 2..5, 5..10]);
        assert_eq!(split_points(5..9, &[1.0, 1.0]), vec![5..7, 7..9]);
    }
}
