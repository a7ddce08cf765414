//! The CPU executor: the shared step functions on all cores through rayon.
//!
//! Paths are cut into fixed chunks, each accumulated by one worker into exact sums, and the
//! chunk sums are merged; integer sums are order-independent, so the result is the same for any
//! thread count (and equal to the GPU's in exact mode).

use std::marker::PhantomData;
use std::ops::Range;

use rayon::prelude::*;
use warpmc_kernels::accum::PairMoments;
use warpmc_kernels::asian::{AsianBasketSteps, accumulate_constant_paths, accumulate_paths_with};
use warpmc_kernels::basket::{self, BasketJob, BasketLeg};
use warpmc_kernels::buffered::{ROUND_WORDS, lane_fill};
use warpmc_kernels::dist::{Sampler, SamplerVisitor, Value, WarpSampler, dispatch, dispatch_counts, fill_warp_cached};
use warpmc_kernels::fill::{GROUP, Group, Normals, Uniforms, UniformsF64, Words, fill_stream_sampled};
use warpmc_kernels::instrument::{self, Legs};
use warpmc_kernels::qmc::{self, QmcParams};
use warpmc_kernels::real::{Double, Single};
use warpmc_kernels::rng::{Generator, Uniform32};
use warpmc_kernels::{Exact, Fast};

use super::{Executor, FillKind, Filler, StreamInit};
use crate::distributions::{DistFill, Precision};
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
        super::check_asian(p, generator)?;
        Ok(with_generator!(generator, G => match mode {
            // Every transform (`p.normals`) through one path function; Box-Muller's is the GPU's
            // `asian_basket_*` path, the others its `asian_basket_any_*`.
            Mode::Exact => self.sum_chunks(paths, |a, b, acc| accumulate_paths_with::<G, Exact>(p, seed, a, b, 1, acc)),
            Mode::Fast => self.sum_chunks(paths, |a, b, acc| accumulate_paths_with::<G, Fast>(p, seed, a, b, 1, acc)),
        }))
    }

    fn asian_basket_constant(&self, p: &AsianBasketSteps, paths: Range<u64>) -> Result<PairMoments> {
        // The baseline's x0 and dx come from a black box so the optimiser sees run-time values.
        let (x0, dx) = std::hint::black_box((0.0f32, 0.0f32));
        Ok(self.sum_chunks(paths, |a, b, acc| accumulate_constant_paths::<Fast>(p, x0, dx, a, b, 1, acc)))
    }

    fn instrument_legs(
        &self,
        legs: &Legs,
        generator: GeneratorKind,
        seed: u64,
        paths: Range<u64>,
        mode: Mode,
    ) -> Result<PairMoments> {
        super::check_legs(legs, generator)?;
        Ok(with_generator!(generator, G => match mode {
            Mode::Exact => self.sum_chunks(paths, |a, b, acc| instrument::accumulate::<G, Exact>(legs, seed, a, b, 1, acc)),
            Mode::Fast => self.sum_chunks(paths, |a, b, acc| instrument::accumulate::<G, Fast>(legs, seed, a, b, 1, acc)),
        }))
    }

    fn basket(
        &self,
        job: &BasketJob,
        legs: &[BasketLeg],
        generator: GeneratorKind,
        seed: u64,
        paths: Range<u64>,
        mode: Mode,
    ) -> Result<PairMoments> {
        super::check_basket(job, legs, generator)?;
        Ok(with_generator!(generator, G => match mode {
            Mode::Exact => self.sum_chunks(paths, |a, b, acc| basket::accumulate::<G, Exact>(job, legs, seed, a, b, 1, acc)),
            Mode::Fast => self.sum_chunks(paths, |a, b, acc| basket::accumulate::<G, Fast>(job, legs, seed, a, b, 1, acc)),
        }))
    }

    fn instrument_qmc(
        &self,
        legs: &Legs,
        q: &QmcParams,
        directions: &[u32],
        keys: &[u32],
        points: Range<u64>,
        mode: Mode,
    ) -> Result<PairMoments> {
        super::check_qmc(legs, q, directions, keys, &points)?;
        let set = qmc::SobolSet { directions, keys, params: *q };
        Ok(match mode {
            Mode::Exact => self.sum_chunks(points, |a, b, acc| qmc::accumulate::<Exact>(legs, set, a, b, 1, acc)),
            Mode::Fast => self.sum_chunks(points, |a, b, acc| qmc::accumulate::<Fast>(legs, set, a, b, 1, acc)),
        })
    }

    fn filler(&self, kind: FillKind, init: &StreamInit) -> Result<Box<dyn Filler + '_>> {
        if let FillKind::Dist(d) = kind
            && crate::wallace::is_wallace(&d)
        {
            return crate::wallace::cpu_filler(self, d, crate::wallace::default_passes(), init);
        }
        with_generator!(init.generator(), G => {
            let states = self.pool.install(|| init.states::<G>())?;
            let pad = match init {
                StreamInit::Seeded { first, .. } if G::LANES > 1 => (*first % 32) as usize,
                _ => 0,
            };
            Ok(Box::new(CpuFiller::<G> { exec: self, kind, states, pad, staging: Vec::new() }) as Box<dyn Filler + '_>)
        })
    }
}

struct CpuFiller<'a, G> {
    exec: &'a CpuExecutor,
    kind: FillKind,
    states: Vec<G>,
    /// Lanes of the first stream's warp before it (`first mod 32`) for a collective generator,
    /// else 0: where its warps begin, for a rejection fill ([`buffered_warps`]).
    pad: usize,
    /// Where the workers of a multi-threaded fill put their rows before they are interleaved
    /// (see [`fill_block`]), kept from block to block.
    staging: Vec<u32>,
}

/// Write `values` into `dst`, [`Value::WORDS`] 32-bit words each, low word first.
#[inline(always)]
fn put_all<T: Value>(dst: &mut [u32], values: &[T]) {
    for (d, &v) in dst.chunks_exact_mut(T::WORDS).zip(values) {
        d.copy_from_slice(&v.words()[..T::WORDS]);
    }
}

/// Where the groups of a block come from: a fixed fill ([`Fixed`]) or a distribution's sampler
/// that takes the same words for every group ([`Sampled`]). Either way a group is a function of
/// its stream's next words alone, so streams can be stepped in any order or together.
trait Source: Copy + Send + Sync {
    type Item: Value;
    fn group<G: Uniform32>(&self, rng: &mut G) -> [Self::Item; GROUP];
}

/// The groups of a [`Group`] kind (words, uniforms, Box-Muller normals).
struct Fixed<K>(PhantomData<fn() -> K>);

impl<K> Clone for Fixed<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for Fixed<K> {}

impl<K: Group<Item: Value>> Source for Fixed<K> {
    type Item = K::Item;
    #[inline(always)]
    fn group<G: Uniform32>(&self, rng: &mut G) -> [K::Item; GROUP] {
        K::next_group(rng)
    }
}

/// The groups of a distribution's sampler; only for one with [`Sampler::FIXED_WORDS`], whose
/// lanes can be stepped in lockstep (it counts no rejections).
#[derive(Clone, Copy)]
struct Sampled<S>(S);

impl<S: Sampler> Source for Sampled<S> {
    type Item = S::Item;
    #[inline(always)]
    fn group<G: Uniform32>(&self, rng: &mut G) -> [S::Item; GROUP] {
        let mut iters = 0;
        self.0.next_group(rng, &mut iters)
    }
}

/// Streams stepped together: in each row, each of them draws its group in turn from a state
/// kept word-major ([`Lanes`]). The same instructions on eight independent states are what the
/// compiler vectorises (one AVX2 register, two SSE2 ones), where one state's steps form a chain
/// of dependent operations that leaves most of a core idle.
const LOCKSTEP: usize = 8;
/// The largest state stepped in lockstep, in words (64 bytes: mrg32k3a's 6, philox's 11, a GQ58
/// generator's 16). Larger states are stepped one at a time.
const LOCKSTEP_WORDS: usize = 16;
/// Lockstep state a task cycles through along a row: at most this many bytes (in the L1 cache),
/// so that a task with more streams fills its rows in panels of streams.
const PANEL_STATE_BYTES: usize = 16 << 10;
/// Output bytes one task fills per tile of rows: small enough to stay in its core's L2 cache
/// while the task's panels and single streams go over the tile, and (with several tasks) until
/// the tile is interleaved.
const TILE_BYTES: usize = 256 << 10;

/// [`LOCKSTEP`] states, word-major: `w[k][l]` is word `k` of stream `l`'s state. Kept in memory
/// in this order, word `k` of the eight states is one vector load and store.
#[derive(Clone, Copy)]
struct Lanes {
    w: [[u32; LOCKSTEP]; LOCKSTEP_WORDS],
}

impl Lanes {
    /// Whether `G` is stepped in lockstep: a small state, and not a collective generator (whose
    /// CPU state is a whole warp's).
    const fn holds<G: Generator>() -> bool {
        G::LANES == 1 && size_of::<G>() <= 4 * LOCKSTEP_WORDS
    }

    fn new<G: Generator>(states: &[G]) -> Self {
        let mut lanes = Self { w: [[0; LOCKSTEP]; LOCKSTEP_WORDS] };
        for (l, &g) in states.iter().enumerate() {
            lanes.set(l, g);
        }
        lanes
    }

    #[inline(always)]
    fn get<G: Generator>(&self, l: usize) -> G {
        assert!(Self::holds::<G>());
        let mut words = [0u32; LOCKSTEP_WORDS];
        for (k, w) in words.iter_mut().enumerate().take(size_of::<G>() / 4) {
            *w = self.w[k][l];
        }
        // SAFETY: `Generator`'s contract makes G a #[repr(C)] struct of u32 fields without
        // padding, aligned to 4 (so to no more than `words`), of size_of::<G>() / 4 words,
        // which `holds` bounds by the LOCKSTEP_WORDS of `words`; any u32 values are valid
        // fields, and these are the words `set` took from a G.
        unsafe { std::ptr::read(words.as_ptr().cast::<G>()) }
    }

    #[inline(always)]
    fn set<G: Generator>(&mut self, l: usize, g: G) {
        for (k, &w) in super::state_words(std::slice::from_ref(&g)).iter().enumerate() {
            self.w[k][l] = w;
        }
    }
}

/// A contiguous range of streams that one worker fills: its first whole groups of [`LOCKSTEP`]
/// streams in lockstep, the others (or all, for a large state) one at a time.
struct Task<'s, G> {
    states: &'s mut [G],
    /// The lockstep streams' states while the task runs (written back by `finish`).
    lanes: Vec<Lanes>,
}

impl<'s, G: Generator> Task<'s, G> {
    fn new(states: &'s mut [G]) -> Self {
        let together = if Lanes::holds::<G>() { states.len() / LOCKSTEP * LOCKSTEP } else { 0 };
        let lanes = states[..together].chunks_exact(LOCKSTEP).map(Lanes::new).collect();
        Self { states, lanes }
    }

    /// `rows` rows of this task's groups: row `r` is `dst[r * row_words ..]`, one group per
    /// stream in stream order. Compiled twice on x86-64: for the baseline (SSE2, all that a
    /// build for `x86_64` may assume) and with AVX2, taken when the CPU has it (twice the lanes
    /// per instruction, and 32-bit multiplies in vectors). Both give the same words: integer
    /// arithmetic is exact, and floating-point operations are IEEE operations either way (Rust
    /// never contracts them into fused multiply-adds).
    fn fill_rows<K: Source>(&mut self, src: &K, dst: &mut [u32], row_words: usize, rows: usize) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the one requirement of calling a function compiled with AVX2 enabled is a
            // CPU that has it, detected just above.
            return unsafe { self.fill_rows_avx2(src, dst, row_words, rows) };
        }
        self.fill_rows_inline(src, dst, row_words, rows)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn fill_rows_avx2<K: Source>(&mut self, src: &K, dst: &mut [u32], row_words: usize, rows: usize) {
        self.fill_rows_inline(src, dst, row_words, rows)
    }

    #[inline(always)]
    fn fill_rows_inline<K: Source>(&mut self, src: &K, dst: &mut [u32], row_words: usize, rows: usize) {
        let group_words = GROUP * <K::Item as Value>::WORDS;
        let span = LOCKSTEP * group_words;
        // Row by row within a panel: the writes run along the rows, and the panel's states stay
        // in the L1 cache.
        let panel = (PANEL_STATE_BYTES / (LOCKSTEP * size_of::<G>())).max(1);
        let mut col = 0;
        for panel in self.lanes.chunks_mut(panel) {
            for r in 0..rows {
                let row = &mut dst[r * row_words + col..][..panel.len() * span];
                for (lanes, out) in panel.iter_mut().zip(row.chunks_exact_mut(span)) {
                    let mut groups = [[K::Item::default(); GROUP]; LOCKSTEP];
                    for (l, group) in groups.iter_mut().enumerate() {
                        let mut rng: G = lanes.get(l);
                        *group = src.group(&mut rng);
                        lanes.set(l, rng);
                    }
                    put_all(out, groups.as_flattened());
                }
            }
            col += panel.len() * span;
        }
        for rng in &mut self.states[self.lanes.len() * LOCKSTEP..] {
            for r in 0..rows {
                put_all(&mut dst[r * row_words + col..][..group_words], &src.group(rng));
            }
            col += group_words;
        }
    }

    /// The lockstep streams' states back where they came from.
    fn finish(self) {
        for (states, lanes) in self.states.chunks_exact_mut(LOCKSTEP).zip(&self.lanes) {
            for (l, g) in states.iter_mut().enumerate() {
                *g = lanes.get(l);
            }
        }
    }
}

/// One block on the CPU, in the interleaved layout of [`warpmc_kernels::fill`]
/// (`out.len() / K::Item::WORDS` values). Every stream draws whole groups, as on the GPU,
/// including a group cut short by the end of the block.
///
/// Workers own contiguous ranges of streams ([`Task`]). One worker writes its rows straight
/// into `out`. Several fill a tile of rows each into its own part of `staging`, and then copy
/// whole rows of the tile into `out`, the rows split among them: writing interleaved parts of
/// the same rows from several cores straight into memory was four times slower than one core
/// writing whole rows (2-core AMD EPYC, 16 MiB blocks).
fn fill_block<K: Source, G: Generator>(
    pool: &rayon::ThreadPool,
    states: &mut [G],
    staging: &mut Vec<u32>,
    out: &mut [u32],
    src: K,
) -> Result<()> {
    let streams = states.len();
    let words = <K::Item as Value>::WORDS;
    let values = out.len() / words;
    if values == 0 {
        return Ok(());
    }
    if streams == 0 {
        return Err(Error::invalid("streams", 0, "at least 1 to fill from"));
    }
    let group_words = GROUP * words;
    let row_words = streams * group_words;
    let rows = values / (GROUP * streams);
    let (whole, last) = out[..values * words].split_at_mut(rows * row_words);
    let threads = pool.current_num_threads();
    let per_task = streams_per_task(streams, threads);
    let mut tasks: Vec<Task<G>> = states.chunks_mut(per_task).map(Task::new).collect();
    if let [task] = &mut tasks[..] {
        let tile = (TILE_BYTES / 4 / row_words).max(1);
        for tile in whole.chunks_mut(tile * row_words) {
            task.fill_rows(&src, tile, row_words, tile.len() / row_words);
        }
    } else if rows > 0 {
        let tile = (TILE_BYTES / 4 * tasks.len() / row_words).clamp(1, rows);
        if staging.len() < tile * row_words {
            staging.resize(tile * row_words, 0);
        }
        for tile in whole.chunks_mut(tile * row_words) {
            let n = tile.len() / row_words;
            // Task t's rows are consecutive in its part of the staging area.
            let mut parts = Vec::with_capacity(tasks.len());
            let mut free = &mut staging[..n * row_words];
            for task in &tasks {
                let (part, rest) = free.split_at_mut(n * task.states.len() * group_words);
                parts.push(part);
                free = rest;
            }
            pool.install(|| {
                tasks.par_iter_mut().zip(parts).for_each(|(task, part)| {
                    let span = task.states.len() * group_words;
                    task.fill_rows(&src, part, span, n)
                })
            });
            let staged = &staging[..n * row_words];
            let rows_per_job = n.div_ceil(2 * threads);
            pool.install(|| {
                tile.par_chunks_mut(rows_per_job * row_words).enumerate().for_each(|(j, job)| {
                    for (i, row) in job.chunks_exact_mut(row_words).enumerate() {
                        let r = j * rows_per_job + i;
                        // Task parts in stream order: part t starts where the earlier parts' n
                        // rows end, and its row r lands where its streams start in `row`.
                        let parts = staged.chunks(n * per_task * group_words);
                        for (part, row_part) in parts.zip(row.chunks_mut(per_task * group_words)) {
                            let span = row_part.len();
                            row_part.copy_from_slice(&part[r * span..][..span]);
                        }
                    }
                })
            });
        }
    }
    tasks.into_iter().for_each(Task::finish);
    // The last row, cut short: the streams whose group starts before its end draw a whole group.
    let rest = last.len() / words;
    for (s, rng) in states.iter_mut().enumerate().take(rest.div_ceil(GROUP)) {
        let base = s * GROUP;
        let valid = (rest - base).min(GROUP);
        put_all(&mut last[base * words..][..valid * words], &src.group(rng)[..valid]);
    }
    Ok(())
}

/// A block of a distribution fill ([`FillKind::Dist`]). A sampler that takes the same words for
/// every group (Box-Muller, inversion) fills as the fixed fills do ([`fill_block`]: streams in
/// lockstep, vectorised); one that rejects draws each stream's groups by its own loop over the
/// shared sampler ([`warpmc_kernels::fill::fill_stream_sampled`], the GPU kernels' loop too),
/// the streams spread over the pool. The layout, and so every value, is the same either way.
fn fill_dist<G: Generator>(
    pool: &rayon::ThreadPool,
    states: &mut [G],
    staging: &mut Vec<u32>,
    out: &mut [u32],
    d: DistFill,
    lockstep: bool,
    pad: usize,
) -> Result<()> {
    if G::LANES > 1 && d.transform & warpmc_kernels::dist::transform::PRE_CACHE != 0 {
        return Err(Error::invalid(
            "generator",
            G::NAME,
            "a generator whose streams draw one word at a time for a pre-cached transform",
        ));
    }
    if !d.fixed_words && G::NAME == <warpmc_kernels::rng::Adder as Generator>::NAME {
        return Err(Error::invalid("generator", G::NAME, crate::distributions::ADDER_REJECTION));
    }
    let p = d.params();
    let visit = CpuDist { pool, states, staging, out, lockstep, pad };
    if d.is_counts() {
        return dispatch_counts(&p, visit);
    }
    match (d.precision, d.mode) {
        (Precision::F32, Mode::Exact) => dispatch::<Single<Exact>, _>(&p, visit),
        (Precision::F32, Mode::Fast) => dispatch::<Single<Fast>, _>(&p, visit),
        (Precision::F64, _) => dispatch::<Double, _>(&p, visit),
    }
}

struct CpuDist<'a, G> {
    pool: &'a rayon::ThreadPool,
    states: &'a mut [G],
    staging: &'a mut Vec<u32>,
    out: &'a mut [u32],
    /// Whether a sampler of fixed words fills through [`fill_block`] (false: every sampler
    /// stream by stream, the reference the tests compare the lockstep fill with).
    lockstep: bool,
    /// `CpuFiller::pad`.
    pad: usize,
}

/// A pointer that the workers of one fill share: each writes only its own stream's places.
#[derive(Clone, Copy)]
struct Shared(*mut u32);
// SAFETY: the fill's workers write disjoint words through it (each its stream's groups of the
// interleaved layout), and the fill waits for all of them before the buffer is used again.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl<G: Generator> SamplerVisitor for CpuDist<'_, G> {
    type Out = Result<()>;

    fn visit<S: Sampler>(self, sampler: S) -> Result<()> {
        if S::FIXED_WORDS && self.lockstep {
            return fill_block(self.pool, self.states, self.staging, self.out, Sampled(sampler));
        }
        let w = <S::Item as Value>::WORDS;
        let values = self.out.len() / w;
        let streams = self.states.len();
        let (out, len) = (Shared(self.out.as_mut_ptr()), self.out.len());
        if !S::FIXED_WORDS && G::LANES > 1 {
            buffered_warps(self.pool, self.states, self.pad, values, |rng, s, mine| {
                let out = out;
                let step = streams * GROUP;
                lane_fill(&sampler, rng, mine, &mut 0u32, |k, g| {
                    let base = s * GROUP + k as usize * step;
                    write_group(out, len, w, base, &g, (values - base).min(GROUP))
                })
            });
            return Ok(());
        }
        self.pool.install(|| {
            self.states.par_iter_mut().enumerate().with_min_len(16).for_each(|(s, rng)| {
                let out = out;
                fill_stream_sampled(&sampler, rng, s, streams, values, 0, &mut 0u32, |base, g, valid| {
                    write_group(out, len, w, base, &g, valid)
                });
            })
        });
        Ok(())
    }

    /// The pre-cached samplers: a task per warp of 32 consecutive streams, its lanes in turn
    /// ([`fill_warp_cached`], what a GPU warp does).
    fn visit_warp<S: WarpSampler>(self, sampler: S) -> Result<()> {
        let w = <S::Item as Value>::WORDS;
        let values = self.out.len() / w;
        let streams = self.states.len();
        let (out, len) = (Shared(self.out.as_mut_ptr()), self.out.len());
        self.pool.install(|| {
            self.states.par_chunks_mut(32).enumerate().for_each(|(j, warp)| {
                let out = out;
                fill_warp_cached(&sampler, warp, 32 * j, streams, values, &mut 0u32, |base, g, valid| {
                    write_group(out, len, w, base, &g, valid)
                });
            })
        });
        Ok(())
    }

    fn unknown(self) -> Result<()> {
        Err(Error::invalid("distribution", "this combination", "one that warpmc_kernels::dist::dispatch knows"))
    }
}

/// A rejection fill on a collective generator's streams as the GPU's warps run it
/// (`warpmc_kernels::buffered`): a task per warp (streams `s` with the same `(s + pad) / 32`),
/// each lane's groups by `lane(rng, s, mine)` (its rounds returned), then every lane of the warp
/// drawn on to the warp's most rounds, where the GPU leaves the state.
fn buffered_warps<G: Generator>(
    pool: &rayon::ThreadPool,
    states: &mut [G],
    pad: usize,
    values: usize,
    lane: impl Fn(&mut G, usize, u64) -> u64 + Sync,
) {
    let streams = states.len();
    let groups = values.div_ceil(GROUP);
    let mut warps = Vec::new();
    let (mut rest, mut first) = (states, 0usize);
    while !rest.is_empty() {
        let n = (32 - (first + pad) % 32).min(rest.len());
        let (warp, tail) = rest.split_at_mut(n);
        warps.push((first, warp));
        rest = tail;
        first += n;
    }
    pool.install(|| {
        warps.into_par_iter().for_each(|(first, warp)| {
            let mut rounds = [0u64; 32];
            for (i, rng) in warp.iter_mut().enumerate() {
                let s = first + i;
                let mine = if s < groups { (groups - s).div_ceil(streams) as u64 } else { 0 };
                rounds[i] = lane(rng, s, mine);
            }
            let most = rounds.iter().copied().max().unwrap_or(0);
            for (i, rng) in warp.iter_mut().enumerate() {
                for _ in 0..(most - rounds[i]) * ROUND_WORDS as u64 {
                    rng.next_u32();
                }
            }
        })
    });
}

/// Values `base .. base + valid` of a distribution fill (`w` words each) into `out` (`len`
/// words), from `g`.
#[inline(always)]
fn write_group<V: Value>(out: Shared, len: usize, w: usize, base: usize, g: &[V], valid: usize) {
    for (i, v) in g.iter().take(valid).enumerate() {
        let words = v.words();
        for (k, &word) in words.iter().take(w).enumerate() {
            let at = (base + i) * w + k;
            assert!(at < len);
            // SAFETY: in bounds (checked); value `base + i` belongs to one stream alone in the
            // layout, filled by one worker, so no other worker writes this word.
            unsafe { out.0.add(at).write(word) };
        }
    }
}

/// Streams per task: one task on one thread; otherwise two tasks per thread, so that a thread
/// slowed by other work can hand one over, in whole lockstep groups. With too few streams for
/// that, whole lockstep groups still, on fewer threads: eight streams stepped together on one
/// core outrun four on each of two (64 streams on 16 threads: 8 tasks, not 16 of 4 streams
/// stepped one at a time).
fn streams_per_task(streams: usize, threads: usize) -> usize {
    if threads <= 1 {
        return streams;
    }
    streams.div_ceil(2 * threads).next_multiple_of(LOCKSTEP).min(streams)
}

impl<G: Generator> Filler for CpuFiller<'_, G> {
    fn set_kind(&mut self, kind: FillKind) {
        self.kind = kind;
    }

    fn fill(&mut self, out: &mut [u32]) -> Result<()> {
        let (pool, states, staging, pad) = (&self.exec.pool, &mut self.states, &mut self.staging, self.pad);
        match self.kind {
            FillKind::Words => fill_block(pool, states, staging, out, Fixed::<Words>(PhantomData)),
            FillKind::Uniforms => fill_block(pool, states, staging, out, Fixed::<Uniforms>(PhantomData)),
            FillKind::UniformsF64 => fill_block(pool, states, staging, out, Fixed::<UniformsF64>(PhantomData)),
            FillKind::Normals(Mode::Exact) => {
                fill_block(pool, states, staging, out, Fixed::<Normals<Exact>>(PhantomData))
            }
            FillKind::Normals(Mode::Fast) => {
                fill_block(pool, states, staging, out, Fixed::<Normals<Fast>>(PhantomData))
            }
            FillKind::Dist(d) => fill_dist::<G>(pool, states, staging, out, d, true, pad),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use rand::{Rng as _, SeedableRng as _};
    use warpmc_kernels::dist::{ExponentialSampler, Inversion, NormalSampler};

    use super::*;
    use crate::backend::state_words;

    /// Words per second of `f`, which produces `words` words per call: the best of three
    /// measurements of about 0.3 s each (the best, because background load only slows it).
    fn rate(words: usize, mut f: impl FnMut()) -> f64 {
        f();
        (0..3)
            .map(|_| {
                let (start, mut calls) = (Instant::now(), 0u64);
                while start.elapsed() < Duration::from_millis(300) {
                    f();
                    calls += 1;
                }
                (calls * words as u64) as f64 / start.elapsed().as_secs_f64()
            })
            .fold(0.0, f64::max)
    }

    /// The CPU fill's `u32` words per second on one thread, beside stepping one state in a loop
    /// and rand's SmallRng, for issue 6's target (the fastest generator beats SmallRng per
    /// core). `WARPMC_BENCH_GENERATORS=lcg32,taus88` restricts the generators.
    #[test]
    #[ignore = "a throughput measurement, not a check: cargo test --release -- --ignored --nocapture"]
    fn fill_throughput_per_core() {
        let only = std::env::var("WARPMC_BENCH_GENERATORS").ok();
        let (exec, exec2) = (CpuExecutor::new(Some(1)).unwrap(), CpuExecutor::new(Some(2)).unwrap());
        // The block `warpmc generate` fills: 2^22 values rounded up to whole rows.
        let block = |streams: usize| (1usize << 22).div_ceil(GROUP * streams) * GROUP * streams;
        let mut buf = vec![0u32; block(64)];
        let mut small = rand::rngs::SmallRng::seed_from_u64(1);
        let n = buf.len();
        let next_u32 = rate(n, || std::hint::black_box(&mut buf).iter_mut().for_each(|x| *x = small.next_u32()));
        let bytes = rate(n, || small.fill_bytes(bytemuck_words(&mut buf)));
        println!("SmallRng: next_u32 {:.0} M words/s, fill_bytes {:.0} M words/s", next_u32 / 1e6, bytes / 1e6);
        for &g in GeneratorKind::ALL {
            if only.as_deref().is_some_and(|o| !o.split(',').any(|n| n == g.name())) {
                continue;
            }
            let raw = with_generator!(g, G => {
                let mut rng = G::stream(1, 0);
                rate(n, || std::hint::black_box(&mut buf).iter_mut().for_each(|x| *x = rng.next_u32()))
            });
            let mut line = format!("{:<16} loop {:>5.0}", g.name(), raw / 1e6);
            for (threads, streams) in [(1, 1), (1, 8), (1, 64), (1, 1024), (1, 65536), (2, 64), (2, 1024)] {
                let exec = if threads == 1 { &exec } else { &exec2 };
                let init = StreamInit::Seeded { generator: g, seed: 1, first: 0, count: streams as u64 };
                let mut filler = exec.filler(FillKind::Words, &init).unwrap();
                let mut out = vec![0u32; block(streams)];
                let r = rate(out.len(), || filler.fill(&mut out).unwrap());
                line += &format!("  {threads}t S={streams} {:>5.0}", r / 1e6);
            }
            println!("{line}  (M words/s)");
        }
    }

    /// The fill against its definition: stream `k` of the block is `G::stream(seed, first + k)`
    /// stepped with `next_u32`, and value `i` is value `4 (i / 4 / S) + i % 4` of stream
    /// `(i / 4) % S`, made of that stream's words by the kind's conversion. Stream counts cover
    /// lockstep groups, single streams and both mixed in one task; the last block is cut short.
    #[test]
    fn fill_is_each_stream_laid_out() {
        for g in [
            GeneratorKind::Philox4x32x10,
            GeneratorKind::Xorwow,
            GeneratorKind::HybridTaus,
            GeneratorKind::Lcg32,
            GeneratorKind::Mt19937,
            GeneratorKind::Warp,
        ] {
            with_generator!(g, G => check_against_streams::<G>(g));
        }
    }

    fn check_against_streams<G: Generator>(g: GeneratorKind) {
        let kinds = [
            FillKind::Words,
            FillKind::Uniforms,
            FillKind::UniformsF64,
            FillKind::Normals(Mode::Exact),
            FillKind::Normals(Mode::Fast),
        ];
        for threads in [1, 2] {
            let exec = CpuExecutor::new(Some(threads)).unwrap();
            for streams in [1, 3, 7, 13, 64] {
                let row = GROUP * streams;
                for kind in kinds {
                    for tail in [1, row / 2 + 1, row - 1, row] {
                        check_blocks::<G>(&exec, g, kind, streams, &[2 * row, 3 * row, tail]);
                    }
                }
            }
        }
    }

    /// Blocks of many rows: several tiles of rows per block, the last tile partial, with one
    /// worker (which writes straight into the output) and two (which interleave a staging area),
    /// and rows of several panels of lockstep streams (1000 streams).
    #[test]
    fn fill_of_several_tiles_is_each_stream_laid_out() {
        for threads in [1, 2] {
            let exec = CpuExecutor::new(Some(threads)).unwrap();
            for (streams, rows) in [(1, 40_000), (7, 10_000), (64, 2_500), (1000, 100)] {
                let row = GROUP * streams;
                for g in [GeneratorKind::Xorwow, GeneratorKind::Philox4x32x10, GeneratorKind::Mt19937] {
                    for kind in [FillKind::Words, FillKind::UniformsF64] {
                        with_generator!(g, G => check_blocks::<G>(&exec, g, kind, streams, &[rows * row, rows * row + row / 2 + 1]));
                    }
                }
            }
        }
    }

    /// Fill `blocks` (values each, all but the last whole rows) from streams 5 .. 5 + `streams`
    /// of seed 77 and compare each value with its definition.
    fn check_blocks<G: Generator>(
        exec: &CpuExecutor,
        g: GeneratorKind,
        kind: FillKind,
        streams: usize,
        blocks: &[usize],
    ) {
        use warpmc_kernels::convert::{u32_pair_to_unit_f64, u32_to_unit_open_closed};
        use warpmc_kernels::normal::box_muller;
        let (seed, first, row) = (77, 5, GROUP * streams);
        let init = StreamInit::Seeded { generator: g, seed, first: first as u64, count: streams as u64 };
        let wpv = kind.words_per_value();
        let mut filler = exec.filler(kind, &init).unwrap();
        let mut got = vec![0u32; blocks.iter().sum::<usize>() * wpv];
        let mut at = 0;
        for &b in blocks {
            filler.fill(&mut got[at..at + b * wpv]).unwrap();
            at += b * wpv;
        }
        // The words each stream draws (f64 values take two).
        let per_stream = 2 * GROUP * (got.len() / wpv).div_ceil(row);
        let words: Vec<Vec<u32>> = (0..streams)
            .map(|k| {
                let mut rng = G::stream(seed, (first + k) as u64);
                (0..per_stream).map(|_| rng.next_u32()).collect()
            })
            .collect();
        for (i, got) in got.chunks_exact(wpv).enumerate() {
            let (w, m) = (&words[(i / GROUP) % streams], GROUP * (i / row) + i % GROUP);
            let want = match kind {
                FillKind::Words => vec![w[m]],
                FillKind::Uniforms => vec![u32_to_unit_open_closed(w[m]).to_bits()],
                FillKind::UniformsF64 => {
                    let b = u32_pair_to_unit_f64(w[2 * m], w[2 * m + 1]).to_bits();
                    vec![b as u32, (b >> 32) as u32]
                }
                FillKind::Normals(mode) => {
                    let (a, b) = match mode {
                        Mode::Exact => box_muller::<Exact>(w[m & !1], w[m | 1]),
                        Mode::Fast => box_muller::<Fast>(w[m & !1], w[m | 1]),
                    };
                    vec![if m % 2 == 0 { a } else { b }.to_bits()]
                }
                FillKind::Dist(_) => unreachable!("this reference covers the fixed fills"),
            };
            let threads = exec.threads();
            assert_eq!(got, want, "{g}, {kind:?}, {streams} streams, {threads} threads, blocks {blocks:?}: value {i}");
        }
    }

    /// Distribution fills whose sampler takes the same words for every group run through the
    /// lockstep fill ([`fill_block`]); their values are those of the stream-by-stream loop (the
    /// GPU kernels' loop, [`fill_stream_sampled`]) bit for bit, and so are the states after, for
    /// every such distribution, transform, precision and mode, lockstep groups and single
    /// streams, blocks cut short within a group, one and two threads, and a collective
    /// generator (stepped one stream at a time by both).
    #[test]
    fn lockstep_dist_fill_is_the_stream_loop() {
        use crate::distributions::{DistKind, DistSpec, every_spec};
        let mut specs: Vec<DistSpec> = every_spec().into_iter().filter(DistSpec::fixed_words).collect();
        let mut affine = DistSpec::new(DistKind::Normal);
        (affine.mean, affine.sd) = (1.5, 0.25);
        specs.extend([affine, affine.with_mode(Mode::Fast), affine.with_precision(Precision::F64)]);
        // normal and lognormal by 3 transforms in 3 precision-modes, exponential inversion in 3.
        assert_eq!(specs.len(), 21 + 3);
        for threads in [1, 2] {
            let exec = CpuExecutor::new(Some(threads)).unwrap();
            for g in
                [GeneratorKind::HybridTaus, GeneratorKind::Philox4x32x10, GeneratorKind::Mrg32k3a, GeneratorKind::Warp]
            {
                with_generator!(g, G => {
                    for streams in [1, 3, 7, 8, 13, 64] {
                        let row = GROUP * streams;
                        for d in &specs {
                            for tail in [1, row / 2 + 1, row - 1, row] {
                                compare_dist::<G>(&exec, g, d.fill(), streams, &[2 * row, 3 * row, tail]);
                            }
                        }
                    }
                    // Many rows: several tiles of rows, staged and interleaved on two threads.
                    let row = GROUP * 64;
                    compare_dist::<G>(&exec, g, specs[0].fill(), 64, &[3000 * row, 5]);
                });
            }
        }
    }

    fn compare_dist<G: Generator>(exec: &CpuExecutor, g: GeneratorKind, d: DistFill, streams: usize, blocks: &[usize]) {
        let init = StreamInit::Seeded { generator: g, seed: 31, first: 2, count: streams as u64 };
        let wpv = d.words_per_value();
        let len = blocks.iter().sum::<usize>() * wpv;
        let (mut got, mut want) = (vec![0u32; len], vec![1u32; len]);
        let mut filler = exec.filler(FillKind::Dist(d), &init).unwrap();
        let mut states: Vec<G> = init.states().unwrap();
        let mut staging = Vec::new();
        let mut at = 0;
        for &b in blocks {
            filler.fill(&mut got[at..at + b * wpv]).unwrap();
            fill_dist(&exec.pool, &mut states, &mut staging, &mut want[at..at + b * wpv], d, false, 2).unwrap();
            at += b * wpv;
        }
        let what = format!("{g}, {}, {streams} streams, {} threads, blocks {blocks:?}", d.describe(), exec.threads());
        if let Some(i) = (0..len).find(|&i| got[i] != want[i]) {
            panic!("{what}: word {i} is {:#x}, the stream loop's {:#x}", got[i], want[i]);
        }
        // The states after: the next words of each stream agree.
        let mut after = vec![0u32; streams * GROUP];
        let mut filler_states = vec![0u32; streams * GROUP];
        fill_block(&exec.pool, &mut states, &mut staging, &mut after, Fixed::<Words>(PhantomData)).unwrap();
        filler.set_kind(FillKind::Words);
        filler.fill(&mut filler_states).unwrap();
        assert!(after == filler_states, "{what}: different states after");
    }

    /// Both compilations of the lockstep loop (baseline and AVX2) give the same words and leave
    /// the same states: on an AVX2 machine the other tests only see the AVX2 one.
    #[test]
    fn lockstep_compilations_agree() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            for g in [GeneratorKind::Kiss, GeneratorKind::Mrg32k3a, GeneratorKind::Philox4x32x10] {
                with_generator!(g, G => {
                    compare_lockstep::<_, G>(g, Fixed::<Words>(PhantomData));
                    compare_lockstep::<_, G>(g, Fixed::<UniformsF64>(PhantomData));
                    compare_lockstep::<_, G>(g, Fixed::<Normals<Exact>>(PhantomData));
                    compare_lockstep::<_, G>(g, Fixed::<Normals<Fast>>(PhantomData));
                    // A distribution's sampler: log-normal (its post-transform), by inversion.
                    type Ln = NormalSampler<Single<Exact>, Inversion>;
                    compare_lockstep::<_, G>(g, Sampled(Ln::new(0.5, 2.0, true)));
                    type Exp64 = ExponentialSampler<Double, false>;
                    compare_lockstep::<_, G>(g, Sampled(Exp64::new(3.0)));
                });
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn compare_lockstep<K: Source, G: Generator>(g: GeneratorKind, src: K) {
        // Two lockstep groups and three single streams.
        let streams = 2 * LOCKSTEP + 3;
        let (rows, words) = (50, <K::Item as Value>::WORDS);
        let row_words = streams * GROUP * words;
        let run = |avx2: bool| {
            let mut states: Vec<G> = (0..streams as u64).map(|k| G::stream(9, k)).collect();
            let mut out = vec![0u32; rows * row_words];
            let mut task = Task::new(&mut states);
            if avx2 {
                // SAFETY: the caller checked that the CPU has AVX2.
                unsafe { task.fill_rows_avx2(&src, &mut out, row_words, rows) }
            } else {
                task.fill_rows_inline(&src, &mut out, row_words, rows)
            }
            task.finish();
            (out, state_words(&states).to_vec())
        };
        let (base, avx2) = (run(false), run(true));
        assert!(base.0 == avx2.0, "{g}, {}: different output", std::any::type_name::<K>());
        assert!(base.1 == avx2.1, "{g}, {}: different states after", std::any::type_name::<K>());
    }

    /// A block that is not whole rows may only come last, but an empty one and an odd word
    /// count for `f64` (the odd word is left alone) are harmless.
    #[test]
    fn empty_and_odd_blocks() {
        let exec = CpuExecutor::new(Some(2)).unwrap();
        let init = StreamInit::Seeded { generator: GeneratorKind::Xorwow, seed: 1, first: 0, count: 3 };
        let mut filler = exec.filler(FillKind::UniformsF64, &init).unwrap();
        filler.fill(&mut []).unwrap();
        let mut odd = vec![7u32; 2 * 12 + 1];
        filler.fill(&mut odd).unwrap();
        assert_eq!(odd[24], 7);
        let whole = generate_words(FillKind::UniformsF64, &init, 12);
        assert_eq!(odd[..24], whole[..]);
    }

    fn generate_words(kind: FillKind, init: &StreamInit, values: usize) -> Vec<u32> {
        let exec = CpuExecutor::new(Some(1)).unwrap();
        let mut out = vec![0u32; values * kind.words_per_value()];
        exec.filler(kind, init).unwrap().fill(&mut out).unwrap();
        out
    }

    /// `buf`'s bytes, for `fill_bytes`.
    fn bytemuck_words(buf: &mut [u32]) -> &mut [u8] {
        // SAFETY: u8 has no alignment or validity requirement, and the byte view covers exactly
        // `buf`'s memory, borrowed mutably for the returned lifetime.
        unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), size_of_val(buf)) }
    }
}
