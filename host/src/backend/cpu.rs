//! The CPU executor: the shared step functions on all cores through rayon.
//!
//! Paths are cut into fixed chunks, each accumulated by one worker into exact sums, and the
//! chunk sums are merged; integer sums are order-independent, so the result is the same for any
//! thread count (and equal to the GPU's in exact mode).

use std::ops::Range;

use rayon::prelude::*;
use warpmc_kernels::accum::PairMoments;
use warpmc_kernels::asian::{AsianBasketSteps, accumulate_constant_paths, accumulate_paths};
use warpmc_kernels::fill::{GROUP, Group, Normals, Uniforms, Words, fill_stream};
use warpmc_kernels::rng::HybridTaus;
use warpmc_kernels::rng::streams::hybrid_taus_stream;
use warpmc_kernels::{Exact, Fast, MathMode};

use super::{Executor, FillKind, Filler, StreamInit};
use crate::pricing::Mode;
use crate::{Error, Result};

/// Paths per work item.
const CHUNK: u64 = 256;
/// Most worker threads a pool may have.
pub const MAX_THREADS: usize = 4096;

pub struct CpuExecutor {
    pool: rayon::ThreadPool,
}

impl CpuExecutor {
    /// A pool of `threads` workers (default: one per core).
    pub fn new(threads: Option<usize>) -> Result<Self> {
        if let Some(t) = threads.filter(|t| !(1..=MAX_THREADS).contains(t)) {
            return Err(Error::invalid("threads", t, format!("[1, {MAX_THREADS}]")));
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.unwrap_or(0))
            .build()
            .map_err(|e| Error::invalid("threads", threads.unwrap_or(0), format!("a pool that can start ({e})")))?;
        Ok(Self { pool })
    }

    /// Run `f` inside this executor's thread pool.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }

    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    fn sum_chunks(&self, paths: Range<u64>, f: impl Fn(u64, u64, &mut PairMoments) + Sync) -> PairMoments {
        let chunks = (paths.end - paths.start).div_ceil(CHUNK);
        self.pool.install(|| {
            (0..chunks)
                .into_par_iter()
                .map(|c| {
                    let first = paths.start + c * CHUNK;
                    let mut acc = PairMoments::ZERO;
                    f(first, (first + CHUNK).min(paths.end), &mut acc);
                    acc
                })
                .reduce(
                    || PairMoments::ZERO,
                    |mut a, b| {
                        a.merge(&b);
                        a
                    },
                )
        })
    }
}

impl Executor for CpuExecutor {
    fn kind(&self) -> &'static str {
        "cpu"
    }

    fn description(&self) -> String {
        match self.threads() {
            1 => "CPU, 1 thread".to_string(),
            n => format!("CPU, {n} threads"),
        }
    }

    fn batch_paths(&self, steps: u32) -> u64 {
        // About 2^26 steps per thread per batch: progress every fraction of a second.
        ((self.threads() as u64) << 26) / steps.max(1) as u64
    }

    fn asian_basket(&self, p: &AsianBasketSteps, seed: u64, paths: Range<u64>, mode: Mode) -> Result<PairMoments> {
        Ok(match mode {
            Mode::Exact => self.sum_chunks(paths, |a, b, acc| accumulate_paths::<Exact>(p, seed, a, b, 1, acc)),
            Mode::Fast => self.sum_chunks(paths, |a, b, acc| accumulate_paths::<Fast>(p, seed, a, b, 1, acc)),
        })
    }

    fn asian_basket_constant(&self, p: &AsianBasketSteps, paths: Range<u64>) -> Result<PairMoments> {
        // The baseline's x0 and dx come from a black box so the optimiser sees run-time values.
        let (x0, dx) = std::hint::black_box((0.0f32, 0.0f32));
        Ok(self.sum_chunks(paths, |a, b, acc| accumulate_constant_paths::<Fast>(p, x0, dx, a, b, 1, acc)))
    }

    fn filler(&self, kind: FillKind, init: StreamInit) -> Result<Box<dyn Filler + '_>> {
        let states = match init {
            StreamInit::Explicit(s) => vec![s],
            StreamInit::Seeded { seed, first, count } => {
                self.pool.install(|| (0..count).into_par_iter().map(|k| hybrid_taus_stream(seed, first + k)).collect())
            }
        };
        Ok(Box::new(CpuFiller { exec: self, kind, states }))
    }
}

struct CpuFiller<'a> {
    exec: &'a CpuExecutor,
    kind: FillKind,
    states: Vec<HybridTaus>,
}

/// A stream's groups with their first output index and valid length.
type StreamGroups<T> = Vec<(usize, [T; GROUP], usize)>;

/// One block on the CPU: each stream's groups are produced in parallel, then interleaved.
fn fill_block<K: Group>(
    pool: &rayon::ThreadPool,
    states: &mut [HybridTaus],
    out: &mut [u32],
    to_word: fn(K::Item) -> u32,
) {
    let streams = states.len();
    let len = out.len();
    let rows = len.div_ceil(GROUP * streams);
    let per_stream: Vec<StreamGroups<K::Item>> = pool.install(|| {
        states
            .par_iter_mut()
            .enumerate()
            .map(|(s, rng)| {
                let mut groups = Vec::with_capacity(rows);
                fill_stream::<K, _, _>(rng, s, streams, len, |base, g, valid| groups.push((base, g, valid)));
                groups
            })
            .collect()
    });
    for (base, g, valid) in per_stream.into_iter().flatten() {
        for j in 0..valid {
            out[base + j] = to_word(g[j]);
        }
    }
}

fn mode_normals<M: MathMode>(pool: &rayon::ThreadPool, states: &mut [HybridTaus], out: &mut [u32]) {
    fill_block::<Normals<M>>(pool, states, out, f32::to_bits);
}

impl Filler for CpuFiller<'_> {
    fn fill(&mut self, out: &mut [u32]) -> Result<()> {
        let pool = &self.exec.pool;
        match self.kind {
            FillKind::Words => fill_block::<Words>(pool, &mut self.states, out, |w| w),
            FillKind::Uniforms => fill_block::<Uniforms>(pool, &mut self.states, out, f32::to_bits),
            FillKind::Normals(Mode::Exact) => mode_normals::<Exact>(pool, &mut self.states, out),
            FillKind::Normals(Mode::Fast) => mode_normals::<Fast>(pool, &mut self.states, out),
        }
        Ok(())
    }
}
