//! Wallace pool fills (`--transform wallace`): the pools of [`warpmc_kernels::wallace`] driven by
//! any generator through the ordinary fills, on the CPU and the GPU.
//!
//! One pool per stream of the fill's [`StreamInit`]: pool `p` takes stream `p`'s words only.
//!
//! - When the filler opens, each stream's first [`POOL`] exact Box-Muller normals (the
//!   interleaved normal fill of `fill.rs`, [`FillKind::Normals`]) become its pool, rescaled to a
//!   sum of squares of `N` ([`wallace::init_pool`]).
//! - Each round after that takes one group of four words of every stream (the interleaved word
//!   fill, [`FillKind::Words`]: row `b` of the fill is round `b`) and produces batch `b` of every
//!   pool ([`wallace::batch`]): round `b` is `pools N` values, batch `b` of pool `p` at
//!   `(b pools + p) N` within the filler's output.
//!
//! The output is that sequence of rounds, whatever the fills' lengths: a fill that ends inside
//! a round produces the whole round (every pool advanced) and keeps its unread values for the
//! next fill, so two fills of `a` and `b` values give the same values as one of `a + b`. The
//! pools persist from fill to fill for as long as the filler lives; a new filler starts new
//! pools from the streams.
//!
//! The values depend on the seed, the generator, the stream range and the number of passes only:
//! not on the CPU's threads, the GPU's grid, or where fills start and end. Precision is `f32`
//! (the pool's type); the mode is always exact (fast mode runs the exact path: the method's own
//! arithmetic has nothing to approximate, and its normals come from the exact Box-Muller).

use rayon::prelude::*;
#[cfg(feature = "gpu")]
use warpmc_kernels::dist::DistParams;
use warpmc_kernels::dist::transform;
use warpmc_kernels::wallace::{
    self, BatchWords, Output, PASSES_DEFAULT, PASSES_MAX, POOL, WORDS_PER_BATCH, init_pool, interleaved,
};

use crate::backend::cpu::CpuExecutor;
use crate::backend::{FillKind, Filler, StreamInit};
use crate::distributions::{DistFill, Precision};
use crate::pricing::Mode;
use crate::{Error, Result};

/// Most pools (streams) of one Wallace filler: 8 KiB of state each (128 MiB in all), and a round
/// of `pools N` values is what a fill ending inside one produces whole (32 Mi values here).
pub const POOLS_MAX: u64 = 1 << 14;

/// Whether `d` is a Wallace fill.
pub fn is_wallace(d: &DistFill) -> bool {
    d.transform == transform::WALLACE
}

/// Check what a Wallace filler is asked for: `f32`, `1..=PASSES_MAX` passes, `1..=POOLS_MAX`
/// streams. The errors name the field and its range.
fn check(d: &DistFill, passes: u32, init: &StreamInit) -> Result<()> {
    if d.precision != Precision::F32 {
        return Err(Error::invalid("precision", "f64", "f32 for --transform wallace (an f32 pool method)"));
    }
    if !(1..=PASSES_MAX).contains(&passes) {
        return Err(Error::invalid("passes", passes, format!("[1, {PASSES_MAX}] for wallace")));
    }
    let n = init.streams();
    if !(1..=POOLS_MAX).contains(&n) {
        return Err(Error::invalid(
            "streams",
            n,
            format!("[1, {POOLS_MAX}] for --transform wallace (a pool of 2048 values, 8 KiB, per stream)"),
        ));
    }
    Ok(())
}

/// What produces whole rounds of a Wallace fill: the CPU's pools or the GPU's.
trait Rounds {
    /// Pools (streams).
    fn pools(&self) -> usize;
    /// The next `rounds` rounds into `out` (`rounds * pools * N` values, as `f32` bits).
    fn rounds(&mut self, rounds: usize, out: &mut [u32]) -> Result<()>;
}

/// The [`Filler`] of a Wallace fill over an engine of rounds: values in round order, the rest of
/// a round that a fill ended inside kept for the next.
struct PoolFiller<E> {
    engine: E,
    /// The fill kind it was opened for (`set_kind` to anything else makes `fill` an error).
    kind: FillKind,
    current: FillKind,
    /// The last round produced, and how much of it has been handed out.
    rest: Vec<u32>,
    used: usize,
}

impl<E: Rounds> PoolFiller<E> {
    fn new(engine: E, kind: FillKind) -> Self {
        Self { engine, kind, current: kind, rest: Vec::new(), used: 0 }
    }
}

impl<E: Rounds> Filler for PoolFiller<E> {
    fn set_kind(&mut self, kind: FillKind) {
        self.current = kind;
    }

    fn fill(&mut self, out: &mut [u32]) -> Result<()> {
        if self.current != self.kind {
            return Err(Error::invalid(
                "fill kind",
                format!("{:?}", self.current),
                "the Wallace fill this filler was opened for (open another filler for other values)",
            ));
        }
        let left = self.rest.len() - self.used;
        let n = left.min(out.len());
        out[..n].copy_from_slice(&self.rest[self.used..self.used + n]);
        self.used += n;
        let mut at = n;
        let round = self.engine.pools() * POOL;
        let whole = (out.len() - at) / round;
        if whole > 0 {
            self.engine.rounds(whole, &mut out[at..at + whole * round])?;
            at += whole * round;
        }
        if at < out.len() {
            self.rest.resize(round, 0);
            self.engine.rounds(1, &mut self.rest)?;
            self.used = out.len() - at;
            out[at..].copy_from_slice(&self.rest[..self.used]);
        }
        Ok(())
    }
}

/// The pools on the CPU: the generator's own CPU fills for the words, the pools' batches
/// ([`wallace::batch`]) spread over the executor's workers, a pool per task.
struct CpuPools<'a> {
    exec: &'a CpuExecutor,
    words: Box<dyn Filler + 'a>,
    pools: Vec<Box<[f32; POOL]>>,
    passes: u32,
    post: Output,
    buf: Vec<u32>,
}

impl Rounds for CpuPools<'_> {
    fn pools(&self) -> usize {
        self.pools.len()
    }

    fn rounds(&mut self, rounds: usize, out: &mut [u32]) -> Result<()> {
        let n = self.pools.len();
        assert_eq!(out.len(), rounds * n * POOL);
        self.buf.resize(rounds * n * WORDS_PER_BATCH, 0);
        self.words.fill(&mut self.buf)?;
        // Batch b of pool p is chunk b n + p of the output.
        let mut per_pool: Vec<Vec<&mut [u32]>> = (0..n).map(|_| Vec::with_capacity(rounds)).collect();
        for (i, chunk) in out.chunks_exact_mut(POOL).enumerate() {
            per_pool[i % n].push(chunk);
        }
        let (words, passes, post) = (&self.buf, self.passes, &self.post);
        self.exec.install(|| {
            self.pools.par_iter_mut().zip(per_pool).enumerate().for_each(|(p, (pool, outs))| {
                for (b, chunk) in outs.into_iter().enumerate() {
                    let at = (b * n + p) * WORDS_PER_BATCH;
                    let w: BatchWords = words[at..at + WORDS_PER_BATCH].try_into().unwrap();
                    wallace::batch(pool, &w, passes, post, |i, x| chunk[i] = x.to_bits());
                }
            })
        });
        Ok(())
    }
}

/// A Wallace filler on the CPU executor for `d` with `passes` passes per batch (the CLI's is
/// [`PASSES_DEFAULT`]).
pub fn cpu_filler<'a>(
    exec: &'a CpuExecutor,
    d: DistFill,
    passes: u32,
    init: &StreamInit,
) -> Result<Box<dyn Filler + 'a>> {
    check(&d, passes, init)?;
    let n = init.streams() as usize;
    let mut words = crate::backend::Executor::filler(exec, FillKind::Normals(Mode::Exact), init)?;
    let mut normals = vec![0u32; n * POOL];
    words.fill(&mut normals)?;
    let pools = exec.install(|| {
        (0..n)
            .into_par_iter()
            .map(|p| {
                let mut pool = Box::new([0.0f32; POOL]);
                init_pool(|m| f32::from_bits(normals[interleaved(m, p, n)]), |m, x| pool[m] = x);
                pool
            })
            .collect()
    });
    words.set_kind(FillKind::Words);
    let post = wallace::output(&d.params());
    let engine = CpuPools { exec, words, pools, passes, post, buf: Vec::new() };
    Ok(Box::new(PoolFiller::new(engine, FillKind::Dist(d))))
}

/// The passes a Wallace fill of the CLI and the executors' `filler` runs.
pub const fn default_passes() -> u32 {
    PASSES_DEFAULT
}

/// The kernel's run-time parameters, passed by value.
#[cfg(feature = "gpu")]
#[repr(transparent)]
struct Params(DistParams);
// SAFETY: `DistParams` is `#[repr(C)]`, two u32 and two f64, no pointers; the PTX parameter is
// declared from the same definition.
#[cfg(feature = "gpu")]
unsafe impl cudarc::driver::DeviceRepr for Params {}

#[cfg(feature = "gpu")]
mod gpu {
    use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

    use super::*;
    use crate::backend::gpu::{DeviceStreams, GpuExecutor};

    fn gpu_err(what: &'static str) -> impl FnOnce(cudarc::driver::DriverError) -> Error {
        move |e| Error::Gpu(format!("{what}: {e:?}"))
    }

    /// The pools on the GPU: the generator's fill kernels for the words, `wallace_f32` for the
    /// batches (blocks of 256 threads whatever `--gpu-block` says: the block is the pool's
    /// owner; the grid is one block per pool unless `--gpu-grid` sets it).
    pub(super) struct GpuPools<'a> {
        pub exec: &'a GpuExecutor,
        pub streams: DeviceStreams,
        pub pools: CudaSlice<f32>,
        pub kernel: CudaFunction,
        pub n: u64,
        pub passes: u32,
        pub params: DistParams,
        pub words: Option<CudaSlice<u32>>,
        pub out: Option<CudaSlice<u32>>,
    }

    impl Rounds for GpuPools<'_> {
        fn pools(&self) -> usize {
            self.n as usize
        }

        fn rounds(&mut self, rounds: usize, out: &mut [u32]) -> Result<()> {
            assert_eq!(out.len(), rounds * self.n as usize * POOL);
            self.launch_rounds(rounds)?;
            let stream = self.exec.stream();
            let dev = self.out.as_ref().unwrap();
            stream.memcpy_dtoh(&dev.slice(..out.len()), out).map_err(gpu_err("copy back"))?;
            stream.synchronize().map_err(gpu_err("synchronize"))
        }
    }

    impl GpuPools<'_> {
        /// The next `rounds` rounds into device memory (`self.out`, `rounds pools N` values),
        /// launched on the executor's stream without waiting: the words' fill, then the batches.
        pub(super) fn launch_rounds(&mut self, rounds: usize) -> Result<()> {
            let (n, exec) = (self.n as usize, self.exec);
            let values = rounds * n * POOL;
            let stream = exec.stream();
            let words = rounds * n * WORDS_PER_BATCH;
            if self.words.as_ref().is_none_or(|w| w.len() < words) {
                self.words = Some(stream.alloc_zeros::<u32>(words).map_err(gpu_err("alloc"))?);
            }
            if self.out.as_ref().is_none_or(|o| o.len() < values) {
                self.out = Some(stream.alloc_zeros::<u32>(values).map_err(gpu_err("alloc"))?);
            }
            let w = self.words.as_mut().unwrap();
            exec.launch_fill(FillKind::Words, &mut w.slice_mut(..words), words as u64, &mut self.streams)?;
            let dev = self.out.as_mut().unwrap();
            let grid = exec.grid_override().unwrap_or(self.n.min(i32::MAX as u64) as u32);
            let (batches, params) = (rounds as u64, Params(self.params));
            let (w_view, mut out_view) = (w.slice(..words), dev.slice_mut(..values));
            let mut b = stream.launch_builder(&self.kernel);
            b.arg(&mut self.pools).arg(&w_view).arg(&mut out_view);
            b.arg(&self.n).arg(&batches).arg(&self.passes).arg(&params);
            let config = LaunchConfig {
                grid_dim: (grid, 1, 1),
                block_dim: (wallace::THREADS as u32, 1, 1),
                shared_mem_bytes: wallace::SHARED_BYTES,
            };
            // SAFETY: the argument list is `wallace_f32`'s (`gpu-kernels/src/wallace.rs`): `pools`
            // holds `N n` values, the words `4 n batches`, the output `N n batches`; blocks of
            // 256 threads with the pool's 8 KiB of shared memory.
            unsafe { b.launch(config) }.map_err(gpu_err("wallace launch"))?;
            Ok(())
        }
    }

    /// Milliseconds (CUDA events, median of `reps` after one warm-up) that `pools` Wallace pools
    /// of `generator` take to write `rounds` rounds (`rounds pools N` values) into device memory:
    /// the words' fill and the batches, no copy to the host. For the benchmark.
    pub fn time_device_rounds(
        exec: &GpuExecutor,
        d: DistFill,
        generator: crate::generators::GeneratorKind,
        pools: u64,
        rounds: usize,
        reps: usize,
    ) -> Result<f64> {
        let init = StreamInit::Seeded { generator, seed: 1, first: 0, count: pools };
        check(&d, default_passes(), &init)?;
        let (mut engine, _) = open_pools(exec, d, default_passes(), &init)?;
        engine.launch_rounds(rounds)?;
        let mut t = Vec::new();
        for _ in 0..reps.max(1) {
            t.push(exec.time_ms(|| engine.launch_rounds(rounds))?);
        }
        t.sort_by(f64::total_cmp);
        Ok(t[t.len() / 2])
    }

    /// A Wallace filler on the GPU executor (see [`super::cpu_filler`]).
    pub fn gpu_filler<'a>(
        exec: &'a GpuExecutor,
        d: DistFill,
        passes: u32,
        init: &StreamInit,
    ) -> Result<Box<dyn Filler + 'a>> {
        check(&d, passes, init)?;
        let (engine, kind) = open_pools(exec, d, passes, init)?;
        Ok(Box::new(PoolFiller::new(engine, kind)))
    }

    /// The pools of a checked Wallace fill, initialised from the streams' first normals.
    fn open_pools<'a>(
        exec: &'a GpuExecutor,
        d: DistFill,
        passes: u32,
        init: &StreamInit,
    ) -> Result<(GpuPools<'a>, FillKind)> {
        let mut streams = exec.init_states(init)?;
        let n = init.streams();
        let stream = exec.stream();
        let values = n as usize * POOL;
        let mut normals = stream.alloc_zeros::<u32>(values).map_err(gpu_err("alloc"))?;
        exec.launch_fill(FillKind::Normals(Mode::Exact), &mut normals.slice_mut(..), values as u64, &mut streams)?;
        let mut pools = stream.alloc_zeros::<f32>(values).map_err(gpu_err("alloc"))?;
        let init_kernel = exec.function("wallace_init_f32")?;
        let grid = exec.grid_override().unwrap_or(n.div_ceil(256) as u32);
        let mut b = stream.launch_builder(&init_kernel);
        b.arg(&mut pools).arg(&normals).arg(&n);
        // SAFETY: the argument list is `wallace_init_f32`'s: `normals` holds the interleaved fill
        // of `N n` normals, `pools` `N n` values; any launch shape.
        unsafe { b.launch(LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }) }
            .map_err(gpu_err("wallace init launch"))?;
        let engine = GpuPools {
            exec,
            streams,
            pools,
            kernel: exec.function("wallace_f32")?,
            n,
            passes,
            params: d.params(),
            words: None,
            out: None,
        };
        Ok((engine, FillKind::Dist(d)))
    }
}

#[cfg(feature = "gpu")]
pub use gpu::{gpu_filler, time_device_rounds};
