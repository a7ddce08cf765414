//! The CPU executor: the shared step functions on all cores through rayon.
//!
//! Paths are cut into fixed chunks, each accumulated by one worker into exact sums, and the
//! chunk sums are merged; integer sums are order-independent, so the result is the same for any
//! thread count (and equal to the GPU's in exact mode).

use std::ops::Range;

use rayon::prelude::*;
use warpmc_kernels::accum::PairMoments;
use warpmc_kernels::asian::{AsianBasketSteps, accumulate_constant_paths, accumulate_paths};
use warpmc_kernels::fill::{GROUP, Group, Normals, Uniforms, UniformsF64, Words, fill_stream};
use warpmc_kernels::rng::Generator;
use warpmc_kernels::{Exact, Fast};

use super::{Executor, FillKind, Filler, StreamInit};
use crate::generators::GeneratorKind;
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

    fn asian_basket(
        &self,
        p: &AsianBasketSteps,
        generator: GeneratorKind,
        seed: u64,
        paths: Range<u64>,
        mode: Mode,
    ) -> Result<PairMoments> {
        Ok(with_generator!(generator, G => match mode {
            Mode::Exact => self.sum_chunks(paths, |a, b, acc| accumulate_paths::<G, Exact>(p, seed, a, b, 1, acc)),
            Mode::Fast => self.sum_chunks(paths, |a, b, acc| accumulate_paths::<G, Fast>(p, seed, a, b, 1, acc)),
        }))
    }

    fn asian_basket_constant(&self, p: &AsianBasketSteps, paths: Range<u64>) -> Result<PairMoments> {
        // The baseline's x0 and dx come from a black box so the optimiser sees run-time values.
        let (x0, dx) = std::hint::black_box((0.0f32, 0.0f32));
        Ok(self.sum_chunks(paths, |a, b, acc| accumulate_constant_paths::<Fast>(p, x0, dx, a, b, 1, acc)))
    }

    fn filler(&self, kind: FillKind, init: &StreamInit) -> Result<Box<dyn Filler + '_>> {
        with_generator!(init.generator(), G => {
            let states = self.pool.install(|| init.states::<G>())?;
            Ok(Box::new(CpuFiller::<G> { exec: self, kind, states }) as Box<dyn Filler + '_>)
        })
    }
}

struct CpuFiller<'a, G> {
    exec: &'a CpuExecutor,
    kind: FillKind,
    states: Vec<G>,
}

/// A stream's groups with their first output index and valid length.
type StreamGroups<T> = Vec<(usize, [T; GROUP], usize)>;

/// One block on the CPU: each stream's groups are produced in parallel, then interleaved;
/// `put(i, value)` stores value `i` of the block (`values` of them).
fn fill_block<K: Group, G: Generator>(
    pool: &rayon::ThreadPool,
    states: &mut [G],
    values: usize,
    mut put: impl FnMut(usize, K::Item),
) {
    let streams = states.len();
    let rows = values.div_ceil(GROUP * streams);
    let per_stream: Vec<StreamGroups<K::Item>> = pool.install(|| {
        states
            .par_iter_mut()
            .enumerate()
            .map(|(s, rng)| {
                let mut groups = Vec::with_capacity(rows);
                fill_stream::<K, _, _>(rng, s, streams, values, |base, g, valid| groups.push((base, g, valid)));
                groups
            })
            .collect()
    });
    for (base, g, valid) in per_stream.into_iter().flatten() {
        for (j, &v) in g.iter().enumerate().take(valid) {
            put(base + j, v);
        }
    }
}

impl<G: Generator> Filler for CpuFiller<'_, G> {
    fn set_kind(&mut self, kind: FillKind) {
        self.kind = kind;
    }

    fn fill(&mut self, out: &mut [u32]) -> Result<()> {
        let pool = &self.exec.pool;
        let states = &mut self.states;
        let n = out.len() / self.kind.words_per_value();
        match self.kind {
            FillKind::Words => fill_block::<Words, G>(pool, states, n, |i, w| out[i] = w),
            FillKind::Uniforms => fill_block::<Uniforms, G>(pool, states, n, |i, x| out[i] = x.to_bits()),
            FillKind::UniformsF64 => fill_block::<UniformsF64, G>(pool, states, n, |i, x| {
                let b = x.to_bits();
                (out[2 * i], out[2 * i + 1]) = (b as u32, (b >> 32) as u32);
            }),
            FillKind::Normals(Mode::Exact) => {
                fill_block::<Normals<Exact>, G>(pool, states, n, |i, x| out[i] = x.to_bits())
            }
            FillKind::Normals(Mode::Fast) => {
                fill_block::<Normals<Fast>, G>(pool, states, n, |i, x| out[i] = x.to_bits())
            }
        }
        Ok(())
    }
}
