//! Backends: where a job runs.
//!
//! An [`Executor`] runs the shared step functions of [`warpmc_kernels`] over a range of paths or
//! streams and returns exact sums. Two exist: [`cpu::CpuExecutor`] (rayon, all cores) and, with
//! the `gpu` feature, [`gpu::GpuExecutor`] (cudarc, dynamic loading). [`open`] picks one.

use std::ops::Range;

use warpmc_kernels::accum::PairMoments;
use warpmc_kernels::asian::AsianBasketSteps;
use warpmc_kernels::basket::{BasketJob, BasketLeg, MAX_ASSETS, MAX_LEGS};
use warpmc_kernels::instrument::{Legs, PathSteps};
use warpmc_kernels::qmc::QmcParams;
use warpmc_kernels::rng::Generator;

use crate::Result;
use crate::generators::GeneratorKind;
use crate::pricing::Mode;

pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;

/// Which backend to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The GPU when a driver and a device are present, the CPU otherwise.
    #[default]
    Auto,
    Cpu,
    Gpu,
}

/// How to open a backend.
#[derive(Clone, Copy, Debug, Default)]
pub struct BackendOptions {
    pub kind: BackendKind,
    /// CPU worker threads (default: all cores).
    pub cpu_threads: Option<usize>,
    /// GPU launch shape override (threads per block, a multiple of 32; blocks).
    pub gpu_block: Option<u32>,
    pub gpu_grid: Option<u32>,
    /// CUDA device ordinal.
    pub gpu_device: usize,
}

/// What the generator fill produces (see [`warpmc_kernels::fill`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FillKind {
    /// Raw 32-bit words.
    Words,
    /// Uniform `f32` in (0, 1].
    Uniforms,
    /// Uniform `f64` in (0, 1] with 53 random bits, from two words each.
    UniformsF64,
    /// Standard normal `f32` by Box-Muller.
    Normals(Mode),
    /// A distribution of [`crate::distributions`]: any transform, precision and mode.
    Dist(crate::distributions::DistFill),
}

impl FillKind {
    /// 32-bit words per value in a filled buffer (the value's bits, little-endian words).
    pub const fn words_per_value(self) -> usize {
        match self {
            FillKind::UniformsF64 => 2,
            FillKind::Dist(d) => d.words_per_value(),
            FillKind::Words | FillKind::Uniforms | FillKind::Normals(_) => 1,
        }
    }
}

/// Where the streams of a fill start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamInit {
    /// Streams `first .. first + count` of `seed` (each generator's own stream rule).
    Seeded { generator: GeneratorKind, seed: u64, first: u64, count: u64 },
    /// One stream from a raw state (`--state`), in the definition's word order.
    Explicit { generator: GeneratorKind, words: Vec<u32> },
}

impl StreamInit {
    pub fn streams(&self) -> u64 {
        match self {
            StreamInit::Seeded { count, .. } => *count,
            StreamInit::Explicit { .. } => 1,
        }
    }

    pub fn generator(&self) -> GeneratorKind {
        match self {
            StreamInit::Seeded { generator, .. } | StreamInit::Explicit { generator, .. } => *generator,
        }
    }

    /// The states of these streams, computed on the host.
    pub fn states<G: Generator>(&self) -> Result<Vec<G>> {
        Ok(match self {
            StreamInit::Explicit { words, .. } => vec![G::from_raw_state(words)?],
            StreamInit::Seeded { seed, first, count, .. } => {
                use rayon::prelude::*;
                (0..*count).into_par_iter().map(|k| G::stream(*seed, first + k)).collect()
            }
        })
    }
}

/// Why the Asian basket cannot take the transform of code `normals` with `generator`, as an
/// error's allowed range (`None`: it can). One rule for both callers: the executors'
/// [`check_asian`] and `PricingJob::check_transform`, which name the field differently.
pub fn basket_transform_refusal(normals: u32, generator: GeneratorKind) -> Option<String> {
    use warpmc_kernels::dist::transform as t;
    if ![t::BOX_MULLER, t::INVERSION, t::INVERSION_NAIVE, t::POLAR, t::ZIGGURAT].contains(&normals) {
        return Some(
            "box-muller, inversion, inversion-naive, polar or ziggurat (codes 0 to 4): Wallace's method makes \
             normals in pools shared by a block's threads, not from one path's stream"
                .into(),
        );
    }
    if warpmc_kernels::asian::fixed_words(normals) {
        return None;
    }
    if generator == GeneratorKind::Adder {
        return Some(crate::distributions::ADDER_REJECTION.into());
    }
    (generator.lanes() > 1).then(|| {
        format!(
            "box-muller, inversion or inversion-naive with {generator}: its 32 lanes share one state and draw in \
             lockstep, and a rejection method draws a variable number of words per pair (or choose another generator)"
        )
    })
}

/// Check an Asian basket call's transform (`p.normals`) against `generator`, as both executors
/// do before simulating ([`basket_transform_refusal`]).
pub fn check_asian(p: &AsianBasketSteps, generator: GeneratorKind) -> Result<()> {
    match basket_transform_refusal(p.normals, generator) {
        Some(allowed) => Err(crate::Error::invalid("normals", p.normals, allowed)),
        None => Ok(()),
    }
}

/// Refuse legs the kernels cannot run: a transform that `generator` cannot feed (as
/// [`check_asian`]), or legs with different transforms.
pub fn check_legs(legs: &Legs, generator: GeneratorKind) -> Result<()> {
    let count = legs.count.clamp(1, 3) as usize;
    let normals = legs.legs[0].normals;
    if let Some(other) = legs.legs[..count].iter().find(|l| l.normals != normals) {
        return Err(crate::Error::invalid("normals", other.normals, "the same transform in every leg"));
    }
    match basket_transform_refusal(normals, generator) {
        Some(allowed) => Err(crate::Error::invalid("normals", normals, allowed)),
        None => Ok(()),
    }
}

/// Refuse a basket call the kernels cannot run: assets or legs out of range, legs that do not
/// match the job, or a transform `generator` cannot feed (as [`check_legs`]).
pub fn check_basket(job: &BasketJob, legs: &[BasketLeg], generator: GeneratorKind) -> Result<()> {
    if !(1..=MAX_ASSETS as u32).contains(&job.assets) {
        return Err(crate::Error::invalid("assets", job.assets, format!("[1, {MAX_ASSETS}]")));
    }
    if legs.is_empty() || legs.len() > MAX_LEGS || legs.len() != job.legs as usize {
        return Err(crate::Error::invalid("legs", legs.len(), format!("[1, {MAX_LEGS}], as many as the job says")));
    }
    match basket_transform_refusal(job.normals, generator) {
        Some(allowed) => Err(crate::Error::invalid("normals", job.normals, allowed)),
        None => Ok(()),
    }
}

/// Refuse a QMC call whose tables do not cover the legs' dates or whose points pass the
/// sequence's period.
pub fn check_qmc(legs: &Legs, q: &QmcParams, directions: &[u32], keys: &[u32], points: &Range<u64>) -> Result<()> {
    let count = legs.count.clamp(1, 3) as usize;
    let steps = legs.legs[0].steps;
    if legs.legs[..count].iter().any(|l| l.steps != steps) {
        return Err(crate::Error::invalid("steps", steps, "the same dates in every leg of a QMC sample"));
    }
    let needed = warpmc_kernels::qmc::dimensions_needed(steps, q.construction);
    if q.dims < needed
        || directions.len() != q.dims as usize * warpmc_kernels::sobol::BITS
        || keys.len() != q.dims as usize
    {
        return Err(crate::Error::invalid(
            "dims",
            q.dims,
            format!("at least {needed} dimensions, with 32 direction numbers and one key each"),
        ));
    }
    if points.end > 1 << 32 {
        return Err(crate::Error::invalid("paths", points.end, "at most 2^32 points a replicate"));
    }
    Ok(())
}

/// The words of generator states, as the GPU kernels read them.
pub fn state_words<G: Generator>(states: &[G]) -> &[u32] {
    const { assert!(size_of::<G>().is_multiple_of(4) && align_of::<G>() == 4) };
    // SAFETY: `Generator`'s contract: a #[repr(C)] struct of u32 fields only, so each state is
    // size_of::<G>() / 4 initialised words without padding, aligned to 4 (asserted above).
    unsafe { std::slice::from_raw_parts(states.as_ptr().cast::<u32>(), std::mem::size_of_val(states) / 4) }
}

/// Produces consecutive blocks of the interleaved fill layout, keeping stream states between
/// blocks. Every block but the last must hold a multiple of `4 * streams` values.
pub trait Filler {
    /// Fill `out` with `out.len() / kind.words_per_value()` values, as 32-bit words: a `u32`,
    /// the bits of an `f32`, or an `f64`'s bits as two words, low word first.
    fn fill(&mut self, out: &mut [u32]) -> Result<()>;
    /// Produce `kind` from the next block on (the streams go on where they are).
    fn set_kind(&mut self, kind: FillKind);
}

/// A backend.
pub trait Executor: Send + Sync {
    /// `"cpu"` or `"gpu"`.
    fn kind(&self) -> &'static str;
    /// The device in words: GPU name and multiprocessors, or CPU thread count.
    fn description(&self) -> String;
    /// How the kernels were loaded, for `warpmc info` (GPU only).
    fn module_note(&self) -> Option<String> {
        None
    }
    /// How many paths of `steps` steps to run per call, for progress reporting.
    fn batch_paths(&self, steps: u32) -> u64;
    /// Exact sums of `(payoff, unfloored)` over Asian basket paths `paths` of `seed`, path `k`
    /// drawing from stream `k` of `generator`.
    fn asian_basket(
        &self,
        p: &AsianBasketSteps,
        generator: GeneratorKind,
        seed: u64,
        paths: Range<u64>,
        mode: Mode,
    ) -> Result<PairMoments>;
    /// The same with the constant-RNG baseline (fast mode) instead of a generator.
    fn asian_basket_constant(&self, p: &AsianBasketSteps, paths: Range<u64>) -> Result<PairMoments>;
    /// Exact sums of `(payoff, control)` over one-asset instrument samples `paths` of `seed`
    /// (see [`warpmc_kernels::instrument`]), sample `k` drawing from stream `k` of `generator`.
    fn instrument(
        &self,
        p: &PathSteps,
        generator: GeneratorKind,
        seed: u64,
        paths: Range<u64>,
        mode: Mode,
    ) -> Result<PairMoments> {
        self.instrument_legs(&Legs::single(*p), generator, seed, paths, mode)
    }
    /// The same for samples that are weighted sums of legs on common random numbers
    /// ([`Legs`]: finite-difference and pathwise Greeks).
    fn instrument_legs(
        &self,
        legs: &Legs,
        generator: GeneratorKind,
        seed: u64,
        paths: Range<u64>,
        mode: Mode,
    ) -> Result<PairMoments>;
    /// Exact sums of `(Σ_j λ_j f_j, control)` over basket samples `paths` of `seed` (see
    /// [`warpmc_kernels::basket`]), sample `k` drawing from stream `k` of `generator`.
    fn basket(
        &self,
        job: &BasketJob,
        legs: &[BasketLeg],
        generator: GeneratorKind,
        seed: u64,
        paths: Range<u64>,
        mode: Mode,
    ) -> Result<PairMoments>;
    /// Exact sums over one-asset samples `points` of one randomised QMC replicate (see
    /// [`warpmc_kernels::qmc`]): `directions` holds 32 words and `keys` one per dimension.
    fn instrument_qmc(
        &self,
        legs: &Legs,
        q: &QmcParams,
        directions: &[u32],
        keys: &[u32],
        points: Range<u64>,
        mode: Mode,
    ) -> Result<PairMoments>;
    /// A filler for `kind` starting at `init`.
    fn filler(&self, kind: FillKind, init: &StreamInit) -> Result<Box<dyn Filler + '_>>;
    /// The GPU executor, for device-memory operations (`None` on the CPU).
    #[cfg(feature = "gpu")]
    fn as_gpu(&self) -> Option<&gpu::GpuExecutor> {
        None
    }
}

/// Open the backend `opts` asks for. With [`BackendKind::Auto`], the GPU is used when one can be
/// opened, otherwise the CPU; with [`BackendKind::Gpu`], no GPU is an error.
pub fn open(opts: &BackendOptions) -> Result<Box<dyn Executor>> {
    match opts.kind {
        BackendKind::Cpu => Ok(Box::new(cpu::CpuExecutor::new(opts.cpu_threads)?)),
        BackendKind::Gpu => open_gpu(opts),
        BackendKind::Auto => match open_gpu(opts) {
            Ok(exec) => Ok(exec),
            Err(crate::Error::GpuUnavailable(_)) => Ok(Box::new(cpu::CpuExecutor::new(opts.cpu_threads)?)),
            Err(e) => Err(e),
        },
    }
}

#[cfg(feature = "gpu")]
fn open_gpu(opts: &BackendOptions) -> Result<Box<dyn Executor>> {
    Ok(Box::new(gpu::GpuExecutor::new(opts)?))
}

#[cfg(not(feature = "gpu"))]
fn open_gpu(_: &BackendOptions) -> Result<Box<dyn Executor>> {
    Err(crate::Error::GpuUnavailable(
        "this build of warpmc has no GPU support (built without the `gpu` feature)".into(),
    ))
}

/// Whether a GPU can be opened, and if not, why (for `warpmc info` and test skips).
pub fn gpu_status() -> std::result::Result<String, String> {
    match open_gpu(&BackendOptions { kind: BackendKind::Gpu, ..Default::default() }) {
        Ok(exec) => Ok(match exec.module_note() {
            Some(note) => format!("{} ({note})", exec.description()),
            None => exec.description(),
        }),
        Err(e) => Err(e.to_string()),
    }
}
