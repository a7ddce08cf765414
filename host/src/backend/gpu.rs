//! The GPU executor: the PTX module built from `gpu-kernels`, loaded and launched through
//! cudarc with dynamic loading (no CUDA is needed to build; no driver is a clean error).
//!
//! All unsafe code of the host crate is here, at the kernel-launch boundary. Each launch
//! relies on the same invariants, checked in this file: buffers are allocated with the lengths
//! the kernel's documentation gives (`gpu-kernels/src/gpu.rs`), and the block size is a
//! multiple of 32 (the kernels' warp reductions use full-mask shuffles).

use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUfunction_attribute};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, DriverError, LaunchConfig,
    PushKernelArg,
};
use warpmc_kernels::accum::PairMoments;
use warpmc_kernels::asian::AsianBasketSteps;
use warpmc_kernels::basket::{BasketJob, BasketLeg};
use warpmc_kernels::instrument::Legs;
use warpmc_kernels::inverse_normal::InversionSweep;
use warpmc_kernels::qmc::QmcParams;
use warpmc_kernels::rng::Generator;

use super::{BackendOptions, Executor, FillKind, Filler, StreamInit, state_words};
use crate::distributions::{DistFill, Precision};
use crate::generators::GeneratorKind;
use crate::pricing::Mode;
use crate::{Error, Result};

/// Default threads per block.
pub const DEFAULT_BLOCK: u32 = 256;

/// Default threads per block of the fills of a generator that fills a stream with a warp
/// (MT19937): 16 warps, so that a warp's staged stores cover runs of 16 adjacent groups (256
/// bytes of u32). Two such blocks fit a multiprocessor's shared memory, as four of 256 do; on
/// an H100 (2026-11-24, the same kernel) u32 words went from 605 to 625 G/s with 4224 streams
/// and from 553 to 595 G/s with 8448.
pub const WARP_STREAM_FILL_BLOCK: u32 = 512;

/// Default threads per block of cuRAND's host-API layout for 4-byte values (see
/// `GpuExecutor::curand_host`).
const CURAND_FOUR_BYTE_BLOCK: u32 = 512;

/// A `#[repr(C)]` kernel-crate struct passed to a kernel by value.
#[repr(transparent)]
struct ByValue<T>(T);
// SAFETY: AsianBasketSteps is #[repr(C)], Copy, all fields plain f32/u32, and the PTX
// parameter is declared from the same definition (`.param .align 4 .b8 [32]`).
unsafe impl DeviceRepr for ByValue<AsianBasketSteps> {}
// SAFETY: CurandCall is #[repr(C)], Copy, five u64 fields, and the PTX parameter is declared
// from the same definition.
unsafe impl DeviceRepr for ByValue<warpmc_kernels::curand::CurandCall> {}
// SAFETY: as above: `DistParams` is `#[repr(C)]`, two u32 and two f64, no pointers.
unsafe impl DeviceRepr for ByValue<warpmc_kernels::dist::DistParams> {}
// SAFETY: as above: `Legs` is `#[repr(C)]`, three `PathSteps` (u32, f32 and f64 fields laid out
// without implicit padding, 88 bytes each), three f64 and two u32, no pointers.
unsafe impl DeviceRepr for ByValue<Legs> {}
// SAFETY: as above: one `PathSteps` (88 bytes, no implicit padding, no pointers).
unsafe impl DeviceRepr for ByValue<warpmc_kernels::instrument::PathSteps> {}
// SAFETY: as above: `BasketJob` is `#[repr(C)]`, six u32, no pointers.
unsafe impl DeviceRepr for ByValue<BasketJob> {}
// SAFETY: as above: `QmcParams` is `#[repr(C)]`, four u32, no pointers.
unsafe impl DeviceRepr for ByValue<QmcParams> {}

/// A launch of `grid` blocks of `block` threads, each with `per_thread` bytes of dynamic shared
/// memory.
const DIAG_F32: &str = "diag_dist_f32__philox4x32_10";
const DIAG_U32: &str = "diag_dist_u32__philox4x32_10";

/// What [`GpuExecutor::diag_dist`] measured.
#[derive(Clone, Debug)]
pub struct DiagRun {
    /// The fill's words.
    pub values: Vec<u32>,
    /// Attempts of every lane's rejection loops, summed.
    pub lane_attempts: u64,
    /// Iterations of those loops executed by warps, summed over the warps.
    pub warp_iterations: u64,
    /// Threads of the launch.
    pub threads: u64,
}

fn config_block(grid: u32, per_thread: u32, block: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: per_thread * block }
}

fn gpu_err(what: &str) -> impl FnOnce(DriverError) -> Error + '_ {
    move |e| Error::Gpu(format!("{what}: {e:?}"))
}

/// The entry points of one generator (`gpu-kernels/src/gpu.rs`, `generator_kernels!`).
struct GeneratorKernels {
    asian_exact: CudaFunction,
    asian_fast: CudaFunction,
    /// `asian_basket_any_{exact,fast}`: the basket with the transform `normals` names.
    asian_any: [CudaFunction; 2],
    /// `instrument_{exact,fast}`: the one-asset instruments (`warpmc_kernels::instrument`).
    instrument: [CudaFunction; 2],
    /// `basket_{exact,fast}`: the `N`-asset basket (`warpmc_kernels::basket`).
    basket: [CudaFunction; 2],
    init: CudaFunction,
    fill_u32: CudaFunction,
    fill_uniform: CudaFunction,
    fill_uniform_f64: CudaFunction,
    fill_normal_exact: CudaFunction,
    fill_normal_fast: CudaFunction,
    /// Distribution fills (`dist_kernels_*!`): f32 exact, f32 fast, f64, and Poisson's `u32`.
    fill_dist: [CudaFunction; 3],
    fill_dist_u32: CudaFunction,
    /// Words per state (`size_of` the generator's state / 4); 1 (a lane's word) for a
    /// collective generator.
    state_words: usize,
    /// Lanes sharing a state: 1, or 32 for a collective generator (`Generator::LANES`).
    lanes: u32,
    /// Dynamic shared memory per thread of its Asian basket kernels.
    shared_per_thread: u32,
    /// Threads per stream of its `init` and fill kernels: 1, or 32 for a warp-stream generator
    /// (`Generator::THREADS_PER_STREAM`).
    threads_per_stream: u64,
    /// Dynamic shared memory per thread of its fill kernels.
    fill_shared_per_thread: u32,
    /// Threads per block of its fill kernels: the user's block, else [`DEFAULT_BLOCK`], or
    /// [`WARP_STREAM_FILL_BLOCK`] for a warp-stream generator (set in `GpuExecutor::new`).
    fill_block: u32,
    /// Threads per block of its distribution fills: the user's block, else [`DEFAULT_BLOCK`],
    /// at most what their registers allow (set in `GpuExecutor::new`).
    dist_block: u32,
    /// The largest block every distribution fill can launch with.
    dist_max: u32,
}

impl GeneratorKernels {
    fn load(module: &Arc<CudaModule>, g: GeneratorKind) -> Result<Self> {
        let f = |kernel: &str| {
            let name = format!("{kernel}__{}", g.kernel_suffix());
            module.load_function(&name).map_err(|e| Error::Gpu(format!("kernel {name}: {e:?}")))
        };
        Ok(Self {
            asian_exact: f("asian_basket_exact")?,
            asian_fast: f("asian_basket_fast")?,
            asian_any: [f("asian_basket_any_exact")?, f("asian_basket_any_fast")?],
            instrument: [f("instrument_exact")?, f("instrument_fast")?],
            basket: [f("basket_exact")?, f("basket_fast")?],
            init: f("init")?,
            fill_u32: f("fill_u32")?,
            fill_uniform: f("fill_uniform")?,
            fill_uniform_f64: f("fill_uniform_f64")?,
            fill_normal_exact: f("fill_normal_exact")?,
            fill_normal_fast: f("fill_normal_fast")?,
            fill_dist: [f("fill_dist_f32_exact")?, f("fill_dist_f32_fast")?, f("fill_dist_f64")?],
            fill_dist_u32: f("fill_dist_u32")?,
            state_words: with_generator!(g, G => if G::LANES == 1 { size_of::<G>() / 4 } else { 1 }),
            lanes: with_generator!(g, G => G::LANES),
            shared_per_thread: with_generator!(g, G => G::SHARED_BYTES_PER_THREAD),
            threads_per_stream: with_generator!(g, G => G::THREADS_PER_STREAM as u64),
            fill_shared_per_thread: with_generator!(g, G => G::FILL_SHARED_BYTES_PER_THREAD),
            fill_block: DEFAULT_BLOCK,
            dist_block: DEFAULT_BLOCK,
            dist_max: 1024,
        })
    }

    fn fills(&self) -> [&CudaFunction; 5] {
        [&self.fill_u32, &self.fill_uniform, &self.fill_uniform_f64, &self.fill_normal_exact, &self.fill_normal_fast]
    }

    /// Every kernel but the distribution fills (whose block is limited on its own:
    /// [`Self::dist_block`]).
    fn all(&self) -> impl Iterator<Item = &CudaFunction> {
        [
            &self.asian_exact,
            &self.asian_fast,
            &self.asian_any[0],
            &self.asian_any[1],
            &self.init,
            &self.fill_u32,
            &self.fill_uniform,
            &self.fill_uniform_f64,
            &self.fill_normal_exact,
            &self.fill_normal_fast,
        ]
        .into_iter()
    }

    fn dists(&self) -> impl Iterator<Item = &CudaFunction> {
        self.fill_dist.iter().chain([&self.fill_dist_u32])
    }
}

pub struct GpuExecutor {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    _module: Arc<CudaModule>,
    /// Users' integrand modules loaded so far: (length and hash of the PTX, kernel) and the kernel.
    user_modules: std::sync::Mutex<Vec<((usize, u64, String), CudaFunction)>>,
    /// The integrator's buffers, kept between iterations (grown when a job needs more).
    vegas_buffers: std::sync::Mutex<VegasBuffers>,
    /// One entry per generator, in `GeneratorKind::ALL`'s order.
    generators: Vec<GeneratorKernels>,
    asian_constant: CudaFunction,
    /// The instruments' constant-RNG baseline and the stored-path GARCH lookback (benchmark).
    instrument_constant: CudaFunction,
    garch_stored: CudaFunction,
    /// The basket's constant-RNG baseline, and the one-asset instruments on QMC points
    /// (`instrument_qmc_{exact,fast}`).
    basket_constant: CudaFunction,
    instrument_qmc: [CudaFunction; 2],
    /// The divergence diagnostics (`diag_dist_f32__philox4x32_10`, `diag_dist_u32__...`).
    diag: [CudaFunction; 2],
    /// The exhaustive inversion sweep (`inverse_cdf_sweep`).
    sweep: CudaFunction,
    name: String,
    sms: u32,
    /// Dynamic shared memory a block may take once a kernel opts in, bytes.
    shared_optin: u32,
    block: u32,
    /// Whether the user chose the block (`gpu_block`); else kernels may use their own default.
    block_chosen: bool,
    grid: Option<u32>,
    /// Wall time of loading the kernel module, milliseconds.
    module_load_ms: f64,
    /// What was loaded: machine code or PTX.
    module_kind: &'static str,
}

/// cudarc frees a device buffer (`cuMemFreeAsync`) in whatever context is current on the
/// dropping thread. With several executors dropped one after another, the current one is the
/// previous device's, already released: compute-sanitizer reported
/// `CUDA_ERROR_CONTEXT_IS_DESTROYED` for the integrator's kept buffers at exit under `--gpus
/// all`. Making this executor's context current before its fields drop frees each buffer in its
/// own context.
impl Drop for GpuExecutor {
    fn drop(&mut self) {
        // An error here cannot be reported; the fields' drops record theirs in the context.
        let _ = self.ctx.bind_to_thread();
    }
}

impl GpuExecutor {
    /// Open device `opts.gpu_device` and load the module. No driver or no device is
    /// [`Error::GpuUnavailable`].
    pub fn new(opts: &BackendOptions) -> Result<Self> {
        // SAFETY: only probes for the library; loads nothing into the process if absent.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::GpuUnavailable("the CUDA driver library (libcuda.so) was not found".into()));
        }
        let block = opts.gpu_block.unwrap_or(DEFAULT_BLOCK);
        if block == 0 || !block.is_multiple_of(32) || block > 1024 {
            return Err(Error::invalid("gpu_block", block, "a multiple of 32 in [32, 1024]"));
        }
        if opts.gpu_grid == Some(0) {
            return Err(Error::invalid("gpu_grid", 0, "[1, 2^31 - 1]"));
        }
        let ctx = CudaContext::new(opts.gpu_device)
            .map_err(|e| Error::GpuUnavailable(format!("cannot open CUDA device {}: {e:?}", opts.gpu_device)))?;
        let name = ctx.name().map_err(gpu_err("device name"))?;
        let sms = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(gpu_err("multiprocessor count"))? as u32;
        // Machine code assembled at build time where it fits the device (loads in
        // milliseconds), otherwise the PTX, which the driver compiles for the device here
        // (about a minute for the whole module: 60-65 s on an H100 on 2026-11-24; the driver
        // caches it between runs where its JIT cache is enabled). Developers can load another
        // build of the kernels (`WARPMC_PTX=path`, PTX or a cubin), e.g. to compare variants of
        // a kernel on a GPU machine without rebuilding the host.
        let cc = |a| ctx.attribute(a).map_err(gpu_err("compute capability"));
        let capability = (
            cc(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            cc(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        );
        let cubin = if capability == (9, 0) { crate::cubin_sm90() } else { None };
        let (image, module_kind) = match (std::env::var_os("WARPMC_PTX"), cubin) {
            (Some(path), _) => {
                let bytes = std::fs::read(&path)
                    .map_err(|e| Error::Gpu(format!("WARPMC_PTX={}: {e}", path.to_string_lossy())))?;
                // Machine code (an ELF cubin, e.g. from the project's ptxas) loads in
                // milliseconds where the whole module's PTX takes about a minute to JIT-compile.
                if bytes.starts_with(b"\x7fELF") {
                    (cudarc::nvrtc::Ptx::from_binary(bytes), "machine code from WARPMC_PTX")
                } else {
                    let src = String::from_utf8(bytes).map_err(|e| {
                        Error::Gpu(format!("WARPMC_PTX={}: neither a cubin nor PTX text: {e}", path.to_string_lossy()))
                    })?;
                    (cudarc::nvrtc::Ptx::from_src(src), "PTX from WARPMC_PTX, JIT-compiled")
                }
            }
            (None, Some(cubin)) => (cudarc::nvrtc::Ptx::from_binary(cubin), "sm_90 machine code built with the crate"),
            (None, None) => (cudarc::nvrtc::Ptx::from_src(crate::ptx()), "PTX, JIT-compiled by the driver"),
        };
        let load_start = std::time::Instant::now();
        let module = ctx.load_module(image).map_err(gpu_err("loading the kernel module"))?;
        let module_load_ms = load_start.elapsed().as_secs_f64() * 1e3;
        let asian_constant = module
            .load_function("asian_basket_constant_fast")
            .map_err(|e| Error::Gpu(format!("kernel asian_basket_constant_fast: {e:?}")))?;
        let load = |name: &str| module.load_function(name).map_err(|e| Error::Gpu(format!("kernel {name}: {e:?}")));
        let instrument_constant = load("instrument_constant_fast")?;
        let garch_stored = load("garch_stored_fast")?;
        let basket_constant = load("basket_constant_fast")?;
        let instrument_qmc = [load("instrument_qmc_exact")?, load("instrument_qmc_fast")?];
        let diag = [DIAG_F32, DIAG_U32]
            .map(|name| module.load_function(name).map_err(|e| Error::Gpu(format!("kernel {name}: {e:?}"))));
        let [d0, d1] = diag;
        let diag = [d0?, d1?];
        let sweep = module
            .load_function("inverse_cdf_sweep")
            .map_err(|e| Error::Gpu(format!("kernel inverse_cdf_sweep: {e:?}")))?;
        let mut generators =
            GeneratorKind::ALL.iter().map(|&g| GeneratorKernels::load(&module, g)).collect::<Result<Vec<_>>>()?;
        // The largest block every kernel can launch with (registers per thread bound it).
        let mut max_block = 1024;
        for f in generators.iter().flat_map(GeneratorKernels::all).chain([&asian_constant]) {
            let m = f
                .get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
                .map_err(gpu_err("kernel attributes"))?;
            max_block = max_block.min(m as u32 / 32 * 32);
        }
        if block > max_block {
            return Err(Error::invalid(
                "gpu_block",
                block,
                format!("a multiple of 32 in [32, {max_block}] (the kernels' register use limits the block size)"),
            ));
        }
        // The distribution fills hold whole rejection methods and take more registers (on an
        // H100 some allow only 384 threads a block): their own limit, so that they do not cap
        // every other kernel's block.
        let mut dist_max = 1024;
        for f in generators.iter().flat_map(GeneratorKernels::dists) {
            let m = f
                .get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
                .map_err(gpu_err("kernel attributes"))?;
            dist_max = dist_max.min(m as u32 / 32 * 32);
        }
        for k in &mut generators {
            k.dist_block = block.min(dist_max);
            k.dist_max = dist_max;
            k.fill_block = match opts.gpu_block {
                Some(b) => b,
                None if k.threads_per_stream == 32 => WARP_STREAM_FILL_BLOCK.min(max_block),
                None => block,
            };
        }
        // Dynamic shared memory above the default 48 KiB per block must be allowed per kernel
        // (MT19937's fill takes 221 bytes per thread, its ring and the store staging: 110.5 KiB
        // for its default block of 512).
        let shared_limit = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .map_err(gpu_err("shared memory per block"))? as u32;
        for (k, g) in generators.iter().zip(GeneratorKind::ALL) {
            for (fs, per_thread, block) in [
                (&k.fills()[..], k.fill_shared_per_thread, k.fill_block),
                (&[&k.asian_exact, &k.asian_fast, &k.asian_any[0], &k.asian_any[1]][..], k.shared_per_thread, block),
            ] {
                let bytes = per_thread * block;
                if bytes > shared_limit {
                    return Err(Error::invalid(
                        "gpu_block",
                        block,
                        format!(
                            "a multiple of 32 in [32, {}] (the {} kernels take {per_thread} bytes of shared memory per \
                             thread, the device allows {shared_limit} per block)",
                            shared_limit / per_thread / 32 * 32,
                            g
                        ),
                    ));
                }
                if bytes > 48 * 1024 {
                    for f in fs {
                        f.set_attribute(
                            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            bytes as i32,
                        )
                        .map_err(gpu_err("kernel shared memory"))?;
                    }
                }
            }
        }
        let stream = ctx.default_stream();
        Ok(Self {
            ctx,
            stream,
            _module: module,
            user_modules: std::sync::Mutex::new(Vec::new()),
            vegas_buffers: std::sync::Mutex::new(VegasBuffers::default()),
            generators,
            asian_constant,
            instrument_constant,
            garch_stored,
            basket_constant,
            instrument_qmc,
            diag,
            sweep,
            name,
            sms,
            shared_optin: shared_limit,
            block,
            block_chosen: opts.gpu_block.is_some(),
            grid: opts.gpu_grid,
            module_load_ms,
            module_kind,
        })
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn multiprocessors(&self) -> u32 {
        self.sms
    }

    /// Wall time of loading the kernel module when the backend opened, in ms.
    pub fn module_load_ms(&self) -> f64 {
        self.module_load_ms
    }

    /// What was loaded: machine code built with the crate, or PTX compiled by the driver.
    pub fn module_kind(&self) -> &'static str {
        self.module_kind
    }

    /// A kernel of the module by name, for launches written outside this file
    /// (`crate::wallace`).
    pub(crate) fn function(&self, name: &str) -> Result<CudaFunction> {
        self._module.load_function(name).map_err(|e| Error::Gpu(format!("kernel {name}: {e:?}")))
    }

    /// The user's grid (`gpu_grid`), if any.
    pub(crate) fn grid_override(&self) -> Option<u32> {
        self.grid
    }

    /// Grid for `work` independent items of `f`: the override, or enough resident blocks to fill
    /// every multiprocessor (occupancy), but no more blocks than the work needs.
    fn grid_for(&self, f: &CudaFunction, work: u64) -> Result<u32> {
        self.grid_for_shared(f, work, 0)
    }

    /// [`Self::grid_for`] for a launch with `per_thread` bytes of dynamic shared memory per thread.
    fn grid_for_shared(&self, f: &CudaFunction, work: u64, per_thread: u32) -> Result<u32> {
        self.grid_for_block(f, work, per_thread, self.block)
    }

    /// [`Self::grid_for_shared`] for blocks of `block` threads.
    fn grid_for_block(&self, f: &CudaFunction, work: u64, per_thread: u32, block: u32) -> Result<u32> {
        if let Some(g) = self.grid {
            return Ok(g);
        }
        let full = self.resident_blocks(f, per_thread, block)?;
        Ok(full.min(work.div_ceil(block as u64)).max(1) as u32)
    }

    /// Blocks of `block` threads (with `per_thread` bytes of dynamic shared memory each) of `f`
    /// that the device holds at once (occupancy, at least one per multiprocessor).
    fn resident_blocks(&self, f: &CudaFunction, per_thread: u32, block: u32) -> Result<u64> {
        let per_sm = f
            .occupancy_max_active_blocks_per_multiprocessor(block, (per_thread * block) as usize, None)
            .map_err(gpu_err("occupancy"))?;
        Ok(self.sms as u64 * per_sm.max(1) as u64)
    }

    /// Streams of `g` whose u32 fill runs at once on this device: one per resident thread of the
    /// fill kernel, or one per resident warp for a generator that fills a stream with a warp
    /// (its occupancy, with the launch shape and shared memory the fills use).
    pub fn resident_fill_streams(&self, g: GeneratorKind) -> Result<u64> {
        let k = self.kernels(g);
        let blocks = self.resident_blocks(&k.fill_u32, k.fill_shared_per_thread, k.fill_block)?;
        Ok(blocks * k.fill_block as u64 / k.threads_per_stream)
    }

    /// Grid for `lanes` lanes of `chunks` pieces each (`curand_host`): the override; else a whole
    /// number of threads per lane, as many as stay resident (and no more than the pieces), where
    /// that is a whole number of blocks; else one thread per piece up to full occupancy.
    fn curand_grid(&self, f: &CudaFunction, lanes: u64, chunks: u64, block: u32) -> Result<u32> {
        if let Some(g) = self.grid {
            return Ok(g);
        }
        let resident = self.resident_blocks(f, 0, block)? * block as u64;
        let per_lane = (resident / lanes).min(chunks);
        if per_lane >= 1 && (lanes * per_lane).is_multiple_of(block as u64) {
            return Ok((lanes * per_lane / block as u64) as u32);
        }
        self.grid_for_block(f, lanes * chunks, 0, block)
    }

    fn config(&self, grid: u32) -> LaunchConfig {
        self.config_shared(grid, 0)
    }

    /// A launch with `per_thread` bytes of dynamic shared memory for each thread.
    fn config_shared(&self, grid: u32, per_thread: u32) -> LaunchConfig {
        config_block(grid, per_thread, self.block)
    }

    /// Launch an Asian basket kernel over `paths` and sum the per-warp results (`shared`: dynamic
    /// shared memory per thread).
    fn asian(
        &self,
        f: &CudaFunction,
        p: &AsianBasketSteps,
        tail: AsianTail,
        paths: Range<u64>,
        shared: u32,
    ) -> Result<PairMoments> {
        let grid = self.grid_for_shared(f, paths.end - paths.start, shared)?;
        let warps = grid as usize * self.block as usize / 32;
        let mut out = self.stream.alloc_zeros::<u64>(warps * PairMoments::WORDS).map_err(gpu_err("alloc"))?;
        let arg = ByValue(*p);
        let (first, end) = (paths.start, paths.end);
        let mut b = self.stream.launch_builder(f);
        b.arg(&arg);
        match &tail {
            AsianTail::Seed(seed) => b.arg(seed),
            AsianTail::Constant(x0, dx) => b.arg(x0).arg(dx),
        };
        b.arg(&first).arg(&end).arg(&mut out);
        // SAFETY: argument list matches the kernel's signature; `out` holds WORDS words per warp
        // of the grid; the block size is a multiple of 32 (checked in `new`); the shared memory is
        // what the generator's kernels need.
        unsafe { b.launch(self.config_shared(grid, shared)) }.map_err(gpu_err("asian basket launch"))?;
        Ok(sum_warps(&self.stream.clone_dtoh(&out).map_err(gpu_err("copy back"))?))
    }

    fn kernels(&self, g: GeneratorKind) -> &GeneratorKernels {
        let i = GeneratorKind::ALL.iter().position(|&x| x == g).expect("every generator is in ALL");
        &self.generators[i]
    }

    /// The Asian kernel of generator `g` in `mode` for transform code `normals`: Box-Muller's
    /// own kernels, or those that take any transform.
    fn asian_function(&self, g: GeneratorKind, mode: Mode, normals: u32) -> &CudaFunction {
        let k = self.kernels(g);
        match (mode, normals == warpmc_kernels::dist::transform::BOX_MULLER) {
            (Mode::Exact, true) => &k.asian_exact,
            (Mode::Fast, true) => &k.asian_fast,
            (Mode::Exact, false) => &k.asian_any[0],
            (Mode::Fast, false) => &k.asian_any[1],
        }
    }

    fn fill_function(&self, g: GeneratorKind, kind: FillKind) -> &CudaFunction {
        let k = self.kernels(g);
        match kind {
            FillKind::Words => &k.fill_u32,
            FillKind::Uniforms => &k.fill_uniform,
            FillKind::UniformsF64 => &k.fill_uniform_f64,
            FillKind::Normals(Mode::Exact) => &k.fill_normal_exact,
            FillKind::Normals(Mode::Fast) => &k.fill_normal_fast,
            FillKind::Dist(d) => match (d.is_counts(), d.precision, d.mode) {
                (true, ..) => &k.fill_dist_u32,
                (false, Precision::F32, Mode::Exact) => &k.fill_dist[0],
                (false, Precision::F32, Mode::Fast) => &k.fill_dist[1],
                (false, Precision::F64, _) => &k.fill_dist[2],
            },
        }
    }

    /// Device memory for streams `first .. first + count` of generator `g`, laid out as its
    /// kernels keep them (not yet seeded: see [`Self::seed_streams`]).
    pub fn alloc_streams(&self, g: GeneratorKind, first: u64, count: u64) -> Result<DeviceStreams> {
        let k = self.kernels(g);
        let lanes_per_state = k.lanes as u64;
        let (pad, lanes) = if lanes_per_state == 1 {
            (0, count)
        } else {
            let pad = first % lanes_per_state;
            (pad, (pad + count).div_ceil(lanes_per_state) * lanes_per_state)
        };
        let words = self.stream.alloc_zeros::<u32>(k.state_words * lanes as usize).map_err(gpu_err("alloc states"))?;
        Ok(DeviceStreams { generator: g, words, first: first - pad, streams: count, pad, lanes })
    }

    /// Compute the states of `streams`' streams of `seed` with the generator's `init` kernel.
    pub fn seed_streams(&self, streams: &mut DeviceStreams, seed: u64) -> Result<()> {
        let k = self.kernels(streams.generator);
        let grid = self.grid_for(&k.init, streams.lanes * k.threads_per_stream)?;
        let mut b = self.stream.launch_builder(&k.init);
        b.arg(&mut streams.words).arg(&seed).arg(&streams.first).arg(&streams.lanes);
        // SAFETY: `words` holds `lanes` states of this generator (`alloc_streams`), aligned to
        // 32 lanes for a collective generator.
        unsafe { b.launch(self.config(grid)) }.map_err(gpu_err("stream init launch"))?;
        Ok(())
    }

    /// Device states for `init`: computed by the generator's `init` kernel for seeded streams,
    /// copied from the host for a raw state.
    pub fn init_states(&self, init: &StreamInit) -> Result<DeviceStreams> {
        match init {
            StreamInit::Explicit { generator, .. } => with_generator!(*generator, G => {
                let states = init.states::<G>()?;
                let words = state_words(&states);
                if G::LANES == 1 {
                    let words = self.stream.clone_htod(words).map_err(gpu_err("copy state"))?;
                    Ok(DeviceStreams { generator: *generator, words, first: 0, streams: 1, pad: 0, lanes: 1 })
                } else {
                    // A collective raw state is the warp's words, then the lane to draw.
                    let lanes = G::LANES as usize;
                    let (warp, lane) = words.split_at(lanes);
                    let words = self.stream.clone_htod(warp).map_err(gpu_err("copy state"))?;
                    Ok(DeviceStreams {
                        generator: *generator,
                        words,
                        first: 0,
                        streams: 1,
                        pad: lane[0] as u64,
                        lanes: lanes as u64,
                    })
                }
            }),
            &StreamInit::Seeded { generator, seed, first, count } => {
                let mut streams = self.alloc_streams(generator, first, count)?;
                self.seed_streams(&mut streams, seed)?;
                Ok(streams)
            }
        }
    }

    /// The divergence diagnostic: a distribution fill of `len` values over `streams` streams of
    /// philox4x32-10 seeded with `seed`, by the diagnostic build of its f32 exact (or Poisson)
    /// kernel, whose rejection loops also count the iterations each warp executes
    /// (`gpu-kernels`' `WarpTally`). The values are those of the production kernel (a test
    /// compares them).
    pub fn diag_dist(&self, d: DistFill, len: u64, seed: u64, streams: u64) -> Result<DiagRun> {
        if !(d.is_counts() || (d.precision == Precision::F32 && d.mode == Mode::Exact)) {
            return Err(Error::invalid("precision", d.describe(), "f32 exact mode or poisson for the diagnostic"));
        }
        let g = GeneratorKind::Philox4x32x10;
        let k = self.kernels(g);
        let f = &self.diag[d.is_counts() as usize];
        let mut st = self.alloc_streams(g, 0, streams)?;
        self.seed_streams(&mut st, seed)?;
        let mut out = self.stream.alloc_zeros::<u32>(len as usize).map_err(gpu_err("alloc diag output"))?;
        let block = k.dist_block;
        let grid = self.grid_for_block(f, streams, 0, block)?;
        let threads = grid as u64 * block as u64;
        let mut counts = self.stream.alloc_zeros::<u32>(2 * threads as usize).map_err(gpu_err("alloc diag counts"))?;
        let p = ByValue(d.params());
        let mut b = self.stream.launch_builder(f);
        b.arg(&mut out).arg(&len).arg(&mut st.words).arg(&st.streams).arg(&p).arg(&mut counts);
        // SAFETY: `out` holds `len` words (f32 or u32 values), `words` the streams' states,
        // `counts` two words per thread of the launch.
        unsafe { b.launch(config_block(grid, 0, block)) }.map_err(gpu_err("diag launch"))?;
        let values = self.stream.clone_dtoh(&out).map_err(gpu_err("copy diag output"))?;
        let c = self.stream.clone_dtoh(&counts).map_err(gpu_err("copy diag counts"))?;
        let lane_attempts = c.iter().step_by(2).map(|&x| x as u64).sum();
        let warp_iterations = c.iter().skip(1).step_by(2).map(|&x| x as u64).sum();
        Ok(DiagRun { values, lane_attempts, warp_iterations, threads })
    }

    /// Words `first .. first + count` (below `2^32`) through the inversion accuracy sweep
    /// ([`InversionSweep`]: `f32` inversion against the `f64` reference, naive inversion's
    /// infinities and moments), the threads' parts combined in thread order.
    pub fn inverse_cdf_sweep(&self, first: u64, count: u64) -> Result<InversionSweep> {
        if first.checked_add(count).is_none_or(|end| end > 1 << 32) {
            return Err(Error::invalid("count", count, "words below 2^32"));
        }
        const F: usize = InversionSweep::FIELDS;
        let grid = self.grid_for_block(&self.sweep, count, 0, self.block)?;
        let threads = grid as usize * self.block as usize;
        let mut out = self.stream.alloc_zeros::<f64>(F * threads).map_err(gpu_err("alloc sweep output"))?;
        let mut b = self.stream.launch_builder(&self.sweep);
        b.arg(&first).arg(&count).arg(&mut out);
        // SAFETY: `out` holds FIELDS f64s per thread of the launch.
        unsafe { b.launch(config_block(grid, 0, self.block)) }.map_err(gpu_err("sweep launch"))?;
        let parts = self.stream.clone_dtoh(&out).map_err(gpu_err("copy sweep output"))?;
        let mut total = InversionSweep::default();
        for part in parts.chunks_exact(F) {
            total.merge(&InversionSweep::from_array(part));
        }
        Ok(total)
    }

    /// Launch one fill block of `len` values into `out` (`len * kind.words_per_value()` words)
    /// from `streams`, advancing them.
    pub fn launch_fill(
        &self,
        kind: FillKind,
        out: &mut cudarc::driver::CudaViewMut<'_, u32>,
        len: u64,
        streams: &mut DeviceStreams,
    ) -> Result<()> {
        let g = streams.generator;
        let k = self.kernels(g);
        assert!(
            out.len() as u64 >= len * kind.words_per_value() as u64
                && streams.words.len() as u64 >= k.state_words as u64 * streams.lanes
        );
        let dist = match kind {
            FillKind::Dist(d) if crate::wallace::is_wallace(&d) => {
                return Err(Error::invalid(
                    "transform",
                    "wallace",
                    "a per-stream transform for a fill launch (Wallace's pools run through a filler: \
                     `Executor::filler`, crate::wallace)",
                ));
            }
            FillKind::Dist(d) => {
                if self.block_chosen && self.block > k.dist_max {
                    return Err(Error::invalid(
                        "gpu_block",
                        self.block,
                        format!(
                            "a multiple of 32 in [32, {}] for distribution fills (their register use limits the block)",
                            k.dist_max
                        ),
                    ));
                }
                if g == GeneratorKind::Adder && !d.fixed_words {
                    return Err(Error::invalid("generator", g, crate::distributions::ADDER_REJECTION));
                }
                if k.lanes > 1 && d.transform & warpmc_kernels::dist::transform::PRE_CACHE != 0 {
                    return Err(Error::invalid(
                        "generator",
                        g,
                        "a generator whose streams draw one word at a time for a pre-cached transform",
                    ));
                }
                // The distribution kernels store groups as 16-byte vectors (`gpu.rs`,
                // `fill_sampled_stores`).
                let (at, _guard) = out.device_ptr(&self.stream);
                if at % 16 != 0 {
                    return Err(Error::invalid(
                        "output buffer",
                        format!("{at:#x}"),
                        "a 16-byte aligned device address",
                    ));
                }
                Some(ByValue(d.params()))
            }
            _ => None,
        };
        let f = self.fill_function(g, kind);
        // Distribution fills give every stream one thread, MT19937's too (with no shared memory).
        let (threads_per_stream, shared, block) = if dist.is_some() {
            (1, if k.threads_per_stream > 1 { 0 } else { k.fill_shared_per_thread }, k.dist_block)
        } else {
            (k.threads_per_stream, k.fill_shared_per_thread, k.fill_block)
        };
        let grid = self.grid_for_block(f, streams.lanes * threads_per_stream, shared, block)?;
        let mut b = self.stream.launch_builder(f);
        b.arg(out).arg(&len).arg(&mut streams.words);
        if k.lanes == 1 {
            b.arg(&streams.streams);
        } else {
            b.arg(&streams.streams).arg(&streams.pad).arg(&streams.lanes);
        }
        if let Some(p) = &dist {
            b.arg(p);
        }
        // SAFETY: `out` holds at least `len` values and `words` the states (asserted); the
        // argument list is the kernel's (a collective generator's fill takes the lane layout
        // too); the shared memory is what the generator's fill kernels need (checked against the
        // device's limit in `new`).
        unsafe { b.launch(config_block(grid, shared, block)) }.map_err(gpu_err("fill launch"))?;
        Ok(())
    }

    /// One call of cuRAND's host-API layout (`crate::curand_host`) into device memory: the values
    /// of `layout.call` for generator `rng`, `out` holding exactly that many.
    ///
    /// Host work per call is a few microseconds: the lanes' starts go to the kernel by value
    /// (`InlineStarts`, a step function of a few entries) unless the history of calls has too
    /// many runs for that, where a table of one word per lane is copied (as every call once did:
    /// 512 KiB for Philox, with the table's computation about a millisecond a call).
    ///
    /// Each lane's rounds are cut into `chunks` pieces, and every piece begins with a jump of its
    /// lane (`CurandGenerator::at`: about 2000 words' worth of work for XORWOW, 500 for
    /// MRG32k3a, a counter addition for Philox). Pieces are made as short as the jumps allow
    /// (each at least 8 jumps long), but no fewer than about two warps per scheduler (256
    /// threads per SM) would take: short pieces keep the part of the output being written at
    /// any moment compact (the resident threads write whole rounds of the layout together),
    /// which the H100 rewards: Philox's f64 calls of 2^28 values ran at 147-160 G values/s with
    /// 1 to 64 pieces per lane (each thread's stores 2 MiB apart, a round of 65536 lanes) and at
    /// 262-280 G values/s with pieces of 2 rounds; calls of 2^26 values at 315-336 with pieces of
    /// one round (2026-11-24, BENCHMARKS.md). The grid is a whole number of
    /// threads per lane where the lanes fit in the resident threads, so a thread keeps one lane
    /// and pays the lane's set-up (its rounds, its start) once, not per piece.
    pub fn curand_host<V: crate::curand_host::CurandOutput + DeviceRepr>(
        &self,
        rng: crate::curand_host::CurandRng,
        layout: &crate::curand_host::CallLayout,
        out: &mut cudarc::driver::CudaViewMut<'_, V>,
    ) -> Result<()> {
        let call = layout.call;
        let n = call.end.saturating_sub(call.first);
        if out.len() as u64 != n || call.lanes == 0 || call.group != rng.group() {
            return Err(Error::Gpu(format!(
                "curand_host: {} output values for a call of {n}, groups of {} for {rng} (whose groups are {})",
                out.len(),
                call.group,
                rng.group()
            )));
        }
        if n == 0 {
            return Ok(());
        }
        let suffix = match rng {
            crate::curand_host::CurandRng::Xorwow => "xorwow",
            crate::curand_host::CurandRng::Mrg32k3a => "mrg32k3a_curand",
            crate::curand_host::CurandRng::Philox4x32_10 => "philox4x32_10",
        };
        let name = format!("curand_host_{}__{suffix}", V::NAME);
        let f = self._module.load_function(&name).map_err(|e| Error::Gpu(format!("kernel {name}: {e:?}")))?;
        // The starts by value where they fit; else a table of one word per lane.
        let inline = layout.starts.inline();
        let table = match inline {
            Some(_) => None,
            None => {
                let t = layout.starts.per_lane(call.lanes);
                Some(self.stream.clone_htod(&t).map_err(gpu_err("copy lane starts"))?)
            }
        };
        let inline = inline.unwrap_or([u64::MAX; 2 * warpmc_kernels::curand::INLINE_STARTS]);
        // Pieces per lane (see above). `rounds` bounds every lane's rounds in the call.
        let rounds = n.div_ceil(call.lanes * call.group) + 1;
        let words = rounds.saturating_mul(call.group * rng.words_per_value::<V>());
        let knee = self.sms as u64 * 256 / call.lanes;
        let long_enough = words / (8 * rng.lane_init_words()).max(1);
        let chunks = knee.max(long_enough).clamp(1, rounds);
        let rounds_per_chunk = rounds.div_ceil(chunks);
        let chunks = rounds.div_ceil(rounds_per_chunk);
        // Blocks of 512 for Philox's and MRG32k3a's 4-byte values unless the user chose a block:
        // on an H100 (2026-11-24, 2^28 Philox words, six runs) 0.96-0.99x cuRAND's host API
        // with blocks of 256, 1.00-1.03x with 512; MRG32k3a u32 226 -> 237 G/s. XORWOW's u32
        // fell from 610 to 447 G/s with 512, and f64 values were 5% slower: they keep 256.
        let wide =
            matches!(rng, crate::curand_host::CurandRng::Philox4x32_10 | crate::curand_host::CurandRng::Mrg32k3a);
        let block = match self.block_chosen {
            true => self.block,
            false if wide && size_of::<V>() == 4 => {
                let most = f
                    .get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
                    .map_err(gpu_err("kernel attributes"))? as u32;
                CURAND_FOUR_BYTE_BLOCK.min(most / 32 * 32)
            }
            false => self.block,
        };
        let grid = self.curand_grid(&f, call.lanes, chunks, block)?;
        let arg = ByValue(call);
        let null = 0u64;
        let mut b = self.stream.launch_builder(&f);
        b.arg(out).arg(&arg).arg(&inline);
        match &table {
            Some(t) => b.arg(t),
            None => b.arg(&null),
        };
        b.arg(&rounds_per_chunk).arg(&chunks);
        // SAFETY: `out` holds the call's `n` values (checked above); the starts are either
        // the by-value table with a null pointer or a table of one word per lane; the argument
        // list is the kernel's (`gpu-kernels/src/gpu.rs`, `curand_host`).
        unsafe { b.launch(config_block(grid, 0, block)) }.map_err(gpu_err("curand host-layout launch"))?;
        Ok(())
    }

    /// Milliseconds between two events recorded around `work` on the executor's stream.
    pub fn time_ms(&self, work: impl FnOnce() -> Result<()>) -> Result<f64> {
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.stream.record_event(flags).map_err(gpu_err("event"))?;
        work()?;
        let end = self.stream.record_event(flags).map_err(gpu_err("event"))?;
        Ok(start.elapsed_ms(&end).map_err(gpu_err("elapsed"))? as f64)
    }

    /// Time of the Asian kernel alone (no copy back), for the benchmark: generator `g` in
    /// `mode`, or the constant-RNG baseline when `mode` is `None`.
    pub fn time_asian(
        &self,
        p: &AsianBasketSteps,
        g: GeneratorKind,
        seed: u64,
        paths: u64,
        mode: Option<Mode>,
    ) -> Result<f64> {
        let f = match mode {
            Some(m) => self.asian_function(g, m, p.normals),
            None => &self.asian_constant,
        };
        let shared = if mode.is_some() { self.kernels(g).shared_per_thread } else { 0 };
        let grid = self.grid_for_shared(f, paths, shared)?;
        let warps = grid as usize * self.block as usize / 32;
        let mut out = self.stream.alloc_zeros::<u64>(warps * PairMoments::WORDS).map_err(gpu_err("alloc"))?;
        let arg = ByValue(*p);
        let (x0, dx, first) = (0.0f32, 0.0f32, 0u64);
        let ms = self.time_ms(|| {
            let mut b = self.stream.launch_builder(f);
            b.arg(&arg);
            if mode.is_some() {
                b.arg(&seed);
            } else {
                b.arg(&x0).arg(&dx);
            }
            b.arg(&first).arg(&paths).arg(&mut out);
            // SAFETY: as in `asian`.
            unsafe { b.launch(self.config_shared(grid, shared)) }.map_err(gpu_err("asian basket launch"))?;
            Ok(())
        })?;
        Ok(ms)
    }
}

impl GpuExecutor {
    /// Launch the instrument kernel of `generator` in `mode` over samples `paths` of `seed`, and
    /// return the per-warp words; with `timing`, the kernel's time in milliseconds (events around
    /// the launch alone) is written there.
    fn launch_instrument(
        &self,
        legs: &Legs,
        generator: GeneratorKind,
        seed: u64,
        paths: Range<u64>,
        mode: Mode,
        timing: Option<&mut f64>,
    ) -> Result<Vec<u64>> {
        let k = self.kernels(generator);
        let f = &k.instrument[matches!(mode, Mode::Fast) as usize];
        let shared = k.shared_per_thread;
        let block = self.block_for(f)?;
        let grid = self.grid_for_block(f, paths.end - paths.start, shared, block)?;
        let warps = grid as usize * block as usize / 32;
        let mut out = self.stream.alloc_zeros::<u64>(warps * PairMoments::WORDS).map_err(gpu_err("alloc"))?;
        let arg = ByValue(*legs);
        let (first, end) = (paths.start, paths.end);
        let launch = |out: &mut CudaSlice<u64>| -> Result<()> {
            let mut b = self.stream.launch_builder(f);
            b.arg(&arg).arg(&seed).arg(&first).arg(&end).arg(out);
            // SAFETY: the argument list matches `instrument_{exact,fast}` (`gpu.rs`,
            // `instrument_kernels!`); `out` holds WORDS words per warp of the grid; the block is a
            // multiple of 32 threads (checked in `new`); the shared memory is what the generator's
            // path kernels need (a collective generator's lane words).
            unsafe { b.launch(config_block(grid, shared, block)) }.map_err(gpu_err("instrument launch"))?;
            Ok(())
        };
        match timing {
            Some(ms) => *ms = self.time_ms(|| launch(&mut out))?,
            None => launch(&mut out)?,
        }
        self.stream.clone_dtoh(&out).map_err(gpu_err("copy back"))
    }

    /// Launch the basket kernel of `generator` in `mode` over samples `paths` of `seed` (the
    /// coefficient sets copied to the device), and return the per-warp words; with `timing`,
    /// the kernel's time in milliseconds.
    fn launch_basket(
        &self,
        job: &BasketJob,
        legs: &[BasketLeg],
        generator: GeneratorKind,
        seed: u64,
        paths: Range<u64>,
        mode: Mode,
        timing: Option<&mut f64>,
    ) -> Result<Vec<u64>> {
        let k = self.kernels(generator);
        let f = &k.basket[matches!(mode, Mode::Fast) as usize];
        let shared = k.shared_per_thread;
        let block = self.block_for(f)?;
        let grid = self.grid_for_block(f, paths.end - paths.start, shared, block)?;
        let warps = grid as usize * block as usize / 32;
        let mut out = self.stream.alloc_zeros::<u64>(warps * PairMoments::WORDS).map_err(gpu_err("alloc"))?;
        let coef = self.stream.clone_htod(leg_bytes(legs)).map_err(gpu_err("copy basket coefficients"))?;
        let arg = ByValue(*job);
        let (first, end) = (paths.start, paths.end);
        let launch = |out: &mut CudaSlice<u64>| -> Result<()> {
            let mut b = self.stream.launch_builder(f);
            b.arg(&arg).arg(&coef).arg(&seed).arg(&first).arg(&end).arg(out);
            // SAFETY: the argument list matches `basket_{exact,fast}` (`gpu.rs`, `basket_kernels!`);
            // `coef` holds `legs.len() == job.legs` coefficient sets (checked by `check_basket`);
            // `out` holds WORDS words per warp of the grid; the block is a multiple of 32; the
            // shared memory is what the generator's path kernels need.
            unsafe { b.launch(config_block(grid, shared, block)) }.map_err(gpu_err("basket launch"))?;
            Ok(())
        };
        match timing {
            Some(ms) => *ms = self.time_ms(|| launch(&mut out))?,
            None => launch(&mut out)?,
        }
        self.stream.clone_dtoh(&out).map_err(gpu_err("copy back"))
    }

    /// The basket's constant-RNG baseline (fast mode) over `paths` samples: its kernel time, ms,
    /// and its sums.
    pub fn time_basket_constant(&self, job: &BasketJob, legs: &[BasketLeg], paths: u64) -> Result<(f64, PairMoments)> {
        super::check_basket(job, legs, GeneratorKind::default())?;
        let f = &self.basket_constant;
        let block = self.block_for(f)?;
        let grid = self.grid_for_block(f, paths, 0, block)?;
        let warps = grid as usize * block as usize / 32;
        let mut out = self.stream.alloc_zeros::<u64>(warps * PairMoments::WORDS).map_err(gpu_err("alloc"))?;
        let coef = self.stream.clone_htod(leg_bytes(legs)).map_err(gpu_err("copy basket coefficients"))?;
        let arg = ByValue(*job);
        let (x0, dx, first) = (0.25f32, 1e-7f32, 0u64);
        let ms = self.time_ms(|| {
            let mut b = self.stream.launch_builder(f);
            b.arg(&arg).arg(&coef).arg(&x0).arg(&dx).arg(&first).arg(&paths).arg(&mut out);
            // SAFETY: the argument list matches `basket_constant_fast`; `coef` holds `job.legs`
            // sets; `out` holds WORDS words per warp of the grid.
            unsafe { b.launch(config_block(grid, 0, block)) }.map_err(gpu_err("basket baseline launch"))?;
            Ok(())
        })?;
        Ok((ms, sum_warps(&self.stream.clone_dtoh(&out).map_err(gpu_err("copy back"))?)))
    }

    /// The basket's kernel time over `paths` samples, ms, and its sums (the benchmark).
    #[allow(clippy::too_many_arguments)]
    pub fn time_basket(
        &self,
        job: &BasketJob,
        legs: &[BasketLeg],
        generator: GeneratorKind,
        seed: u64,
        paths: u64,
        mode: Mode,
    ) -> Result<(f64, PairMoments)> {
        super::check_basket(job, legs, generator)?;
        let mut ms = 0.0;
        let words = self.launch_basket(job, legs, generator, seed, 0..paths, mode, Some(&mut ms))?;
        Ok((ms, sum_warps(&words)))
    }

    /// Launch the QMC instrument kernel in `mode` over points `points` of one replicate, and
    /// return the per-warp words; with `timing`, the kernel's time in milliseconds.
    #[allow(clippy::too_many_arguments)]
    fn launch_qmc(
        &self,
        legs: &Legs,
        q: &QmcParams,
        directions: &[u32],
        keys: &[u32],
        points: Range<u64>,
        mode: Mode,
        timing: Option<&mut f64>,
    ) -> Result<Vec<u64>> {
        let f = &self.instrument_qmc[matches!(mode, Mode::Fast) as usize];
        let block = self.block_for(f)?;
        let grid = self.grid_for_block(f, points.end - points.start, 0, block)?;
        let warps = grid as usize * block as usize / 32;
        let mut out = self.stream.alloc_zeros::<u64>(warps * PairMoments::WORDS).map_err(gpu_err("alloc"))?;
        let dirs = self.stream.clone_htod(directions).map_err(gpu_err("copy direction numbers"))?;
        let keys = self.stream.clone_htod(keys).map_err(gpu_err("copy scrambling keys"))?;
        let (legs, q) = (ByValue(*legs), ByValue(*q));
        let (first, end) = (points.start, points.end);
        let launch = |out: &mut CudaSlice<u64>| -> Result<()> {
            let mut b = self.stream.launch_builder(f);
            b.arg(&legs).arg(&q).arg(&dirs).arg(&keys).arg(&first).arg(&end).arg(out);
            // SAFETY: the argument list matches `instrument_qmc_{exact,fast}`; `dirs` holds 32
            // words and `keys` one per dimension of `q.dims`, and `end <= 2^32` (checked by
            // `check_qmc`); `out` holds WORDS words per warp of the grid.
            unsafe { b.launch(config_block(grid, 0, block)) }.map_err(gpu_err("QMC instrument launch"))?;
            Ok(())
        };
        match timing {
            Some(ms) => *ms = self.time_ms(|| launch(&mut out))?,
            None => launch(&mut out)?,
        }
        self.stream.clone_dtoh(&out).map_err(gpu_err("copy back"))
    }

    /// The QMC instrument kernel's time over points `0..points` of one replicate, ms, and its
    /// sums (the benchmark).
    pub fn time_instrument_qmc(
        &self,
        legs: &Legs,
        q: &QmcParams,
        directions: &[u32],
        keys: &[u32],
        points: u64,
        mode: Mode,
    ) -> Result<(f64, PairMoments)> {
        super::check_qmc(legs, q, directions, keys, &(0..points))?;
        let mut ms = 0.0;
        let words = self.launch_qmc(legs, q, directions, keys, 0..points, mode, Some(&mut ms))?;
        Ok((ms, sum_warps(&words)))
    }

    /// The block the instrument kernels launch with: the executor's, or less where their
    /// registers allow less (the sums do not depend on the launch shape, so a smaller block
    /// changes nothing but speed; the distribution fills do the same).
    fn block_for(&self, f: &CudaFunction) -> Result<u32> {
        let max = f
            .get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
            .map_err(gpu_err("kernel attributes"))? as u32
            / 32
            * 32;
        Ok(self.block.min(max.max(32)))
    }

    /// The instruments' constant-RNG baseline (fast mode, `normal::ConstantNormals` in place of
    /// generator and transform) over `paths` samples: its kernel time, ms, and its sums.
    pub fn time_instrument_constant(&self, legs: &Legs, paths: u64) -> Result<(f64, PairMoments)> {
        let f = &self.instrument_constant;
        let block = self.block_for(f)?;
        let grid = self.grid_for_block(f, paths, 0, block)?;
        let warps = grid as usize * block as usize / 32;
        let mut out = self.stream.alloc_zeros::<u64>(warps * PairMoments::WORDS).map_err(gpu_err("alloc"))?;
        let arg = ByValue(*legs);
        let (x0, dx, first) = (0.25f32, 1e-7f32, 0u64);
        let ms = self.time_ms(|| {
            let mut b = self.stream.launch_builder(f);
            b.arg(&arg).arg(&x0).arg(&dx).arg(&first).arg(&paths).arg(&mut out);
            // SAFETY: the argument list matches `instrument_constant_fast`; `out` holds WORDS words
            // per warp of the grid.
            unsafe { b.launch(config_block(grid, 0, block)) }.map_err(gpu_err("instrument baseline launch"))?;
            Ok(())
        })?;
        Ok((ms, sum_warps(&self.stream.clone_dtoh(&out).map_err(gpu_err("copy back"))?)))
    }

    /// The fast GARCH lookback (Philox, Box-Muller) with its path kept in global memory instead
    /// of replayed (`garch_stored_fast`): kernel time, ms, and the sums (equal to the replaying
    /// kernel's bit for bit). The scratch takes `4 (steps - 1)` bytes per thread of the grid.
    pub fn time_garch_stored(&self, legs: &Legs, seed: u64, paths: u64) -> Result<(f64, PairMoments)> {
        let p = legs.legs[0];
        let f = &self.garch_stored;
        let block = self.block_for(f)?;
        let grid = self.grid_for_block(f, paths, 0, block)?;
        let threads = grid as usize * block as usize;
        let mut out = self.stream.alloc_zeros::<u64>(threads / 32 * PairMoments::WORDS).map_err(gpu_err("alloc"))?;
        let mut scratch = self
            .stream
            .alloc_zeros::<f32>((p.steps.max(2) as usize - 1) * threads)
            .map_err(gpu_err("alloc the path scratch"))?;
        let arg = ByValue(p);
        let first = 0u64;
        let ms = self.time_ms(|| {
            let mut b = self.stream.launch_builder(f);
            b.arg(&arg).arg(&seed).arg(&first).arg(&paths).arg(&mut out).arg(&mut scratch);
            // SAFETY: the argument list matches `garch_stored_fast`; `out` holds WORDS words per
            // warp and `scratch` (steps - 1) values per thread of the grid.
            unsafe { b.launch(config_block(grid, 0, block)) }.map_err(gpu_err("stored GARCH launch"))?;
            Ok(())
        })?;
        Ok((ms, sum_warps(&self.stream.clone_dtoh(&out).map_err(gpu_err("copy back"))?)))
    }

    /// Time of the instrument kernel alone (no copy back), ms, and its sums, for the benchmark.
    pub fn time_instrument(
        &self,
        legs: &Legs,
        generator: GeneratorKind,
        seed: u64,
        paths: u64,
        mode: Mode,
    ) -> Result<(f64, PairMoments)> {
        super::check_legs(legs, generator)?;
        let mut ms = 0.0;
        let words = self.launch_instrument(legs, generator, seed, 0..paths, mode, Some(&mut ms))?;
        Ok((ms, sum_warps(&words)))
    }
}

/// The total of per-warp `PairMoments` words.
/// Basket coefficient sets as the bytes the kernels read through their `*const BasketLeg`.
fn leg_bytes(legs: &[BasketLeg]) -> &[u8] {
    // SAFETY: `BasketLeg` is `#[repr(C)]` and `Copy`, made of f32 and f64 arrays and f64 fields
    // laid out without padding (its f32 part is 2496 bytes, a multiple of 8), so every byte is
    // initialised; a byte view of initialised memory is always valid.
    unsafe { std::slice::from_raw_parts(legs.as_ptr().cast::<u8>(), std::mem::size_of_val(legs)) }
}

fn sum_warps(words: &[u64]) -> PairMoments {
    let mut total = PairMoments::ZERO;
    for w in words.chunks_exact(PairMoments::WORDS) {
        total.merge(&PairMoments::from_words(w.try_into().unwrap()));
    }
    total
}

enum AsianTail {
    Seed(u64),
    Constant(f32, f32),
}

impl Executor for GpuExecutor {
    fn kind(&self) -> &'static str {
        "gpu"
    }

    fn description(&self) -> String {
        format!("{} ({} SMs)", self.name, self.sms)
    }

    fn module_note(&self) -> Option<String> {
        Some(format!("kernels: {}, loaded in {:.0} ms", self.module_kind, self.module_load_ms))
    }

    fn batch_paths(&self, steps: u32) -> u64 {
        // About 2^34 steps per launch: a few hundred milliseconds on an H100.
        ((1u64 << 34) / steps.max(1) as u64).max(1 << 16)
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
        let shared = self.kernels(generator).shared_per_thread;
        self.asian(self.asian_function(generator, mode, p.normals), p, AsianTail::Seed(seed), paths, shared)
    }

    fn asian_basket_constant(&self, p: &AsianBasketSteps, paths: Range<u64>) -> Result<PairMoments> {
        self.asian(&self.asian_constant, p, AsianTail::Constant(0.0, 0.0), paths, 0)
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
        Ok(sum_warps(&self.launch_instrument(legs, generator, seed, paths, mode, None)?))
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
        Ok(sum_warps(&self.launch_basket(job, legs, generator, seed, paths, mode, None)?))
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
        Ok(sum_warps(&self.launch_qmc(legs, q, directions, keys, points, mode, None)?))
    }

    fn filler(&self, kind: FillKind, init: &StreamInit) -> Result<Box<dyn Filler + '_>> {
        if let FillKind::Dist(d) = kind
            && crate::wallace::is_wallace(&d)
        {
            return crate::wallace::gpu_filler(self, d, crate::wallace::default_passes(), init);
        }
        let states = self.init_states(init)?;
        Ok(Box::new(GpuFiller { exec: self, kind, states, out: None }))
    }

    fn as_gpu(&self) -> Option<&GpuExecutor> {
        Some(self)
    }
}

/// A generator's streams on the device, as its kernels keep them: `streams` states, or for a
/// collective generator one word per lane of `lanes` lanes aligned to whole warp states, the
/// requested streams starting `pad` lanes in.
pub struct DeviceStreams {
    pub generator: GeneratorKind,
    /// The state words.
    pub words: CudaSlice<u32>,
    /// The stream of the first state (for a collective generator, of the first lane, a multiple
    /// of 32).
    pub first: u64,
    /// How many streams were asked for.
    pub streams: u64,
    /// Lanes before the first requested stream (collective generators; else 0).
    pub pad: u64,
    /// States (or lanes) held: `streams`, or a multiple of 32 covering `pad + streams`.
    pub lanes: u64,
}

struct GpuFiller<'a> {
    exec: &'a GpuExecutor,
    kind: FillKind,
    states: DeviceStreams,
    out: Option<CudaSlice<u32>>,
}

impl Filler for GpuFiller<'_> {
    fn set_kind(&mut self, kind: FillKind) {
        self.kind = kind;
    }

    fn fill(&mut self, out: &mut [u32]) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        let len = out.len();
        if self.out.as_ref().is_none_or(|d| d.len() < len) {
            self.out = Some(self.exec.stream.alloc_zeros::<u32>(len).map_err(gpu_err("alloc"))?);
        }
        let dev = self.out.as_mut().unwrap();
        let values = (len / self.kind.words_per_value()) as u64;
        self.exec.launch_fill(self.kind, &mut dev.slice_mut(..len), values, &mut self.states)?;
        self.exec.stream.memcpy_dtoh(&dev.slice(0..len), out).map_err(gpu_err("copy back"))?;
        self.exec.stream.synchronize().map_err(gpu_err("synchronize"))
    }
}

// SAFETY: `VegasJob` is `#[repr(C)]`, `Copy`, four u64 then six 32-bit fields, no pointers; the
// PTX parameter is declared from the same definition.
unsafe impl DeviceRepr for ByValue<warpmc_kernels::vegas::VegasJob> {}

/// A built-in integrand's parameters as the kernels read them from device memory: the bytes of
/// the `#[repr(C)]` block, field by field (two u32, two f64, two arrays of f64: no padding).
/// The kernels take the block by pointer: by value, each thread would copy all 536 bytes to its
/// own local memory, which then crowds the L1 cache that the points' own arrays use.
fn params_bytes(p: &warpmc_kernels::vegas::IntegrandParams) -> Vec<u8> {
    let mut b = Vec::with_capacity(core::mem::size_of::<warpmc_kernels::vegas::IntegrandParams>());
    b.extend_from_slice(&p.family.to_ne_bytes());
    b.extend_from_slice(&p.dim.to_ne_bytes());
    for v in [p.c, p.scale].iter().chain(&p.a).chain(&p.u) {
        b.extend_from_slice(&v.to_ne_bytes());
    }
    b
}

impl GpuExecutor {
    /// [`Self::vegas`] with a user's compiled integrand: its module loaded (once per executor and
    /// module text), its kernel launched with the parameter block copied to the device.
    #[allow(clippy::too_many_arguments)]
    pub fn vegas_compiled(
        &self,
        job: &warpmc_kernels::vegas::VegasJob,
        c: &crate::integrate::CompiledIntegrand<'_>,
        generator: GeneratorKind,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
    ) -> Result<warpmc_kernels::vegas::VegasSums> {
        self.vegas_compiled_into(job, c, generator, edges, offsets, range, None)
    }

    /// [`Self::vegas_compiled`], the hypercubes of `into` written straight to its slice.
    #[allow(clippy::too_many_arguments)]
    fn vegas_compiled_into(
        &self,
        job: &warpmc_kernels::vegas::VegasJob,
        c: &crate::integrate::CompiledIntegrand<'_>,
        generator: GeneratorKind,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
        into: Option<CubesInto<'_>>,
    ) -> Result<warpmc_kernels::vegas::VegasSums> {
        // `integrand_kernel!(NAME, ..)`'s kernel `NAME` (Philox4x32-10), or `NAME__<suffix>`
        // for a generator listed in it.
        let kernel = if generator == GeneratorKind::Philox4x32x10 {
            c.kernel.to_string()
        } else {
            format!("{}__{}", c.kernel, generator.kernel_suffix())
        };
        if c.dim != job.dim {
            return Err(Error::invalid("dim", job.dim, format!("the compiled integrand's dimension {}", c.dim)));
        }
        if !ptx_defines_entry(c.ptx, &kernel) {
            // Refused before loading: the driver would compile the whole module first, and
            // report the missing kernel as a failed CUDA call.
            return Err(if generator == GeneratorKind::Philox4x32x10 {
                Error::invalid("kernel", c.kernel, "a kernel of the module (it defines no such entry)".to_string())
            } else {
                Error::invalid(
                    "generator",
                    generator.name(),
                    format!(
                        "a generator the module's integrand_kernel! lists: it has no kernel {kernel} (add `{}: <type>` to the list)",
                        generator.kernel_suffix()
                    ),
                )
            });
        }
        self.ctx.bind_to_thread().map_err(gpu_err("binding the device's context"))?;
        let f = {
            let mut cache = self.user_modules.lock().unwrap();
            let key = (c.ptx.len(), fnv(c.ptx.as_bytes()), kernel.clone());
            match cache.iter().find(|(k, _)| *k == key) {
                Some((_, f)) => f.clone(),
                None => {
                    let module = self
                        .ctx
                        .load_module(cudarc::nvrtc::Ptx::from_src(c.ptx))
                        .map_err(|e| Error::Gpu(format!("loading the integrand's module: {e:?}")))?;
                    let f = module.load_function(&kernel).map_err(|e| {
                        if generator == GeneratorKind::Philox4x32x10 {
                            Error::invalid("kernel", c.kernel, format!("a kernel of the module ({e:?})"))
                        } else {
                            Error::invalid(
                                "generator",
                                generator.name(),
                                format!(
                                    "a generator the module's integrand_kernel! lists: it has no kernel {kernel} (add `{}: <type>` to the list)",
                                    generator.kernel_suffix()
                                ),
                            )
                        }
                    })?;
                    cache.push((key, f.clone()));
                    f
                }
            }
        };
        let params = self.stream.clone_htod(c.params).map_err(gpu_err("copy integrand parameters"))?;
        self.vegas_launch(&f, generator, job, &params, edges, offsets, range, None, into)
    }
}

/// Where the sums of a launch's last hypercubes go: hypercubes `from ..` (to the last one the
/// range's points touch) into `dest`, `CUBE_WORDS` words each, instead of into the returned part.
pub struct CubesInto<'a> {
    pub from: u64,
    pub dest: &'a mut [u64],
}

/// FNV-1a of `bytes` (the module cache's key).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Blocks of a VEGAS launch, in multiples of those the device holds at once. With one wave,
/// each thread's share of points is long, a block's warps end at different times, and the
/// early ones wait at the barrier before the bins' flush while their multiprocessor runs
/// short of warps; with several, a multiprocessor starts a new block as each ends. More blocks
/// also flush more block copies of the bins to the same words of global memory, so the gain
/// stops: on an H200 (2026-11-28, d = 8, 2^26 points, the kernels of then) 3 to 6 waves ran
/// the kernel 8-14% faster than one, 8 and 16 slower than 6 (BENCHMARKS.md).
const VEGAS_WAVES: u64 = 4;

/// Largest dynamic shared memory a launch takes without opting in: above it, a VEGAS kernel's
/// block copy of the bins needs `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` set first.
const DEFAULT_SHARED_LIMIT: usize = 48 * 1024;

impl GpuExecutor {
    /// One VEGAS iteration's points `range` with the built-in integrand `params` (the kernel
    /// `vegas__<generator>`), and their exact sums; with `timing`, the kernel's time, ms.
    #[allow(clippy::too_many_arguments)]
    pub fn vegas(
        &self,
        job: &warpmc_kernels::vegas::VegasJob,
        params: &warpmc_kernels::vegas::IntegrandParams,
        generator: GeneratorKind,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
        timing: Option<&mut f64>,
    ) -> Result<warpmc_kernels::vegas::VegasSums> {
        self.vegas_into(job, params, generator, edges, offsets, range, timing, None)
    }

    /// [`Self::vegas`], the hypercubes of `into` written straight to its slice.
    #[allow(clippy::too_many_arguments)]
    fn vegas_into(
        &self,
        job: &warpmc_kernels::vegas::VegasJob,
        params: &warpmc_kernels::vegas::IntegrandParams,
        generator: GeneratorKind,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
        timing: Option<&mut f64>,
        into: Option<CubesInto<'_>>,
    ) -> Result<warpmc_kernels::vegas::VegasSums> {
        if params.dim != job.dim {
            return Err(Error::invalid("dim", params.dim, format!("the job's dimension {}", job.dim)));
        }
        let name = format!("vegas__{}", generator.kernel_suffix());
        let f = self
            ._module
            .load_function(&name)
            .map_err(|e| Error::Gpu(format!("loading the kernel {name}: {e:?}")))?;
        let params = self.stream.clone_htod(&params_bytes(params)).map_err(gpu_err("copy integrand parameters"))?;
        self.vegas_launch(&f, generator, job, &params, edges, offsets, range, timing, into)
    }

    /// Launch a VEGAS kernel (`vegas__<gen>` or a user's `integrand_kernel!`) over `range`;
    /// `generator` is the kernel's (a collective one's warps keep their states in the block's
    /// shared memory, before the bins, and take whole tiles of points).
    #[allow(clippy::too_many_arguments)]
    fn vegas_launch(
        &self,
        f: &CudaFunction,
        generator: GeneratorKind,
        job: &warpmc_kernels::vegas::VegasJob,
        params: &CudaSlice<u8>,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
        timing: Option<&mut f64>,
        into: Option<CubesInto<'_>>,
    ) -> Result<warpmc_kernels::vegas::VegasSums> {
        use warpmc_kernels::vegas::{BIN_WORDS, CUBE_WORDS, SHARED_BIN_BYTES, STAT_WORDS, VegasSums, cube_of};
        let part = crate::integrate::check_job(job, edges, offsets, &range)?;
        // Several devices run from threads of their own (`integrate::run_split`): the driver
        // calls below that take no stream (occupancy) need this device's context current here.
        self.ctx.bind_to_thread().map_err(gpu_err("binding the device's context"))?;
        let bin_words = job.dim as usize * job.bins as usize * BIN_WORDS;
        // The hypercubes this range's points fall in (contiguous: the plan is in order). Only
        // they are zeroed and copied back, so that each of N devices moves 1/N of the sums.
        let first_cube = cube_of(offsets, range.start);
        if range.is_empty() {
            if into.as_ref().is_some_and(|i| !i.dest.is_empty()) {
                return Err(Error::Gpu("hypercube sums asked of an empty range of points".into()));
            }
            return Ok(VegasSums { first_cube, cubes: Vec::new(), bins: vec![0; bin_words], stats: [0; STAT_WORDS] });
        }
        let end_cube = crate::integrate::touched_end(offsets, &range);
        // The words of the returned part: all of the range's hypercubes, or those before `into`.
        let keep = match &into {
            None => (end_cube - first_cube) as usize * CUBE_WORDS,
            Some(i) => crate::integrate::dest_offset(i.from, i.dest.len(), first_cube..end_cube)?,
        };
        let cube_words = (first_cube as usize * CUBE_WORDS)..(end_cube as usize * CUBE_WORDS);
        let block = self.block;
        // A collective generator's warps: their states first in shared memory (the bins after),
        // and one warp per tile of points at most.
        let lane_bytes = self.kernels(generator).shared_per_thread as usize * block as usize;
        let bin_bytes = job.dim as usize * job.bins as usize * SHARED_BIN_BYTES;
        // The bins in shared memory whenever the block's copy fits what the device lets a block
        // opt in to (227 KiB on an H100 or H200: 32 dimensions x 128 bins is 64 KiB, x 256 bins
        // 128 KiB); above that (32 x 512), in global memory. At 48 KiB, the limit without opting
        // in, the oscillatory family at d = 32 x 128 bins ran at 15% of the plain kernel's rate
        // with its adds in global memory (BENCHMARKS.md).
        let shared_bins = lane_bytes + bin_bytes <= self.shared_optin as usize;
        let shared = lane_bytes + if shared_bins { bin_bytes } else { 0 };
        if shared > DEFAULT_SHARED_LIMIT {
            // Per function, so a user's module's kernel is opted in as the built-in ones are.
            f.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared as i32)
                .map_err(gpu_err("kernel shared memory"))?;
        }
        let threads_wanted = if generator.lanes() > 1 {
            use warpmc_kernels::vegas::TILE_POINTS;
            32 * ((range.end - 1) / TILE_POINTS + 1 - range.start / TILE_POINTS)
        } else {
            range.end - range.start
        };
        let grid = match self.grid {
            Some(g) => g,
            None => {
                let per_sm = f
                    .occupancy_max_active_blocks_per_multiprocessor(block, shared, None)
                    .map_err(gpu_err("occupancy"))?;
                let full = self.sms as u64 * per_sm.max(1) as u64 * VEGAS_WAVES;
                full.min(threads_wanted.div_ceil(block as u64)).max(1) as u32
            }
        };
        let mut guard = self.vegas_buffers.lock().unwrap();
        let buf = &mut *guard;
        let back_words = cube_words.len() + bin_words + STAT_WORDS;
        let stream = &self.stream;
        grow(stream, &mut buf.cubes, job.cubes as usize * CUBE_WORDS)?;
        grow(stream, &mut buf.bins, bin_words)?;
        grow(stream, &mut buf.stats, STAT_WORDS)?;
        grow(stream, &mut buf.edges, edges.len())?;
        grow(stream, &mut buf.offsets, offsets.len())?;
        let (Some(d_cubes), Some(d_bins), Some(d_stats), Some(d_edges), Some(d_offsets)) =
            (&mut buf.cubes, &mut buf.bins, &mut buf.stats, &mut buf.edges, &mut buf.offsets)
        else {
            return Err(Error::Gpu("the integrator's buffers were not allocated".into()));
        };
        stream.memset_zeros(&mut d_cubes.slice_mut(cube_words.clone())).map_err(gpu_err("zero"))?;
        stream.memset_zeros(&mut d_bins.slice_mut(..bin_words)).map_err(gpu_err("zero"))?;
        stream.memset_zeros(&mut d_stats.slice_mut(..STAT_WORDS)).map_err(gpu_err("zero"))?;
        stream.memcpy_htod(edges, &mut d_edges.slice_mut(..edges.len())).map_err(gpu_err("copy grid"))?;
        // The plan: only the part this range reads (`check_job`), so that each of N devices
        // copies 1/N of it (a million hypercubes' offsets are 8 MB from pageable memory every
        // iteration); before it zeros and after it `u64::MAX`, so that the device's copy does not
        // decrease and the kernel's search (`vegas::cube_of`) finds each point's hypercube in it.
        if part.start > 0 {
            stream.memset_zeros(&mut d_offsets.slice_mut(..part.start)).map_err(gpu_err("zero"))?;
        }
        stream.memcpy_htod(&offsets[part.clone()], &mut d_offsets.slice_mut(part.clone())).map_err(gpu_err("copy plan"))?;
        if part.end < offsets.len() {
            let mut after = d_offsets.slice_mut(part.end..offsets.len());
            let bytes = after.len() * std::mem::size_of::<u64>();
            let (at, _record) = after.device_ptr_mut(stream);
            // SAFETY: `at` is the device address of `after`, `bytes` long, in this context; the
            // set is ordered on `stream` (`_record` orders later uses of the buffer after it).
            unsafe { cudarc::driver::result::memset_d8_async(at, 0xff, bytes, stream.cu_stream()) }
                .map_err(gpu_err("plan end"))?;
        }
        let job_arg = ByValue(*job);
        let flag = shared_bins as u32;
        let (first, end) = (range.start, range.end);
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: shared as u32 };
        let mut launch = || -> Result<()> {
            let mut b = stream.launch_builder(f);
            b.arg(&job_arg)
                .arg(params)
                .arg(&*d_edges)
                .arg(&*d_offsets)
                .arg(&mut *d_cubes)
                .arg(&mut *d_bins)
                .arg(&mut *d_stats)
                .arg(&flag)
                .arg(&first)
                .arg(&end);
            // SAFETY: the argument list matches `vegas__<gen>` (`gpu.rs`, `vegas_points`);
            // `check_job` checked the lengths of the grid and the plan and the range, and the
            // part of the plan the range reads, copied between zeros and `u64::MAX`; the
            // buffers hold at least those lengths (`grow`); `cubes`, `bins` and `stats` hold the
            // words documented there, zeroed where this range's points add to them; the block
            // has the generator's shared bytes per thread (a collective generator's warp states)
            // and after them `SHARED_BIN_BYTES` per bin when `flag` is set; the block is a
            // multiple of 32; `params` holds one parameter block of the kernel's integrand.
            unsafe { b.launch(cfg) }.map_err(gpu_err("vegas launch"))?;
            Ok(())
        };
        match timing {
            Some(ms) => *ms = self.time_ms(&mut launch)?,
            None => launch()?,
        }
        // Back through page-locked memory (a plain slice of it: the copies synchronise). A run's
        // first launch allocates it here, after the launch, while the kernel runs (page-locking
        // tens of MiB takes the host tens of milliseconds).
        if buf.back.as_ref().is_none_or(|b| b.len() < back_words) {
            buf.back = None; // free the old one first
            // SAFETY: the buffer is written by the copies below before it is read.
            buf.back = Some(
                unsafe { self.ctx.alloc_pinned_with_flags::<u64>(back_words.next_power_of_two(), 0) }
                    .map_err(gpu_err("page-locked buffer"))?,
            );
        }
        let Some(back) = &mut buf.back else {
            return Err(Error::Gpu("the integrator's page-locked buffer was not allocated".into()));
        };
        let host = back.as_mut_slice().map_err(gpu_err("page-locked buffer"))?;
        let (h_cubes, rest) = host.split_at_mut(cube_words.len());
        let (h_bins, rest) = rest.split_at_mut(bin_words);
        stream.memcpy_dtoh(&d_cubes.slice(cube_words), h_cubes).map_err(gpu_err("copy back"))?;
        stream.memcpy_dtoh(&d_bins.slice(..bin_words), h_bins).map_err(gpu_err("copy back"))?;
        stream.memcpy_dtoh(&d_stats.slice(..STAT_WORDS), &mut rest[..STAT_WORDS]).map_err(gpu_err("copy back"))?;
        stream.synchronize().map_err(gpu_err("synchronize"))?;
        if let Some(i) = into {
            copy_in_pieces(i.dest, &h_cubes[keep..]);
        }
        Ok(VegasSums {
            first_cube,
            cubes: h_cubes[..keep].to_vec(),
            bins: h_bins.to_vec(),
            stats: [rest[0], rest[1], rest[2]],
        })
    }
}

/// Whether PTX text defines the kernel `name` (a line `.entry name(`, after any `.visible` or
/// `.weak`).
fn ptx_defines_entry(ptx: &str, name: &str) -> bool {
    ptx.lines().any(|l| {
        let l = l.trim_start();
        let l = l.strip_prefix(".visible").or_else(|| l.strip_prefix(".weak")).unwrap_or(l).trim_start();
        l.strip_prefix(".entry").is_some_and(|rest| {
            let rest = rest.trim_start();
            rest.strip_prefix(name).is_some_and(|after| after.trim_start().starts_with('(') || after.trim().is_empty())
        })
    })
}

/// `dest.copy_from_slice(src)` in 1 MiB pieces on rayon's workers: a million hypercubes' sums
/// are tens of MiB, several times one core's copying speed.
fn copy_in_pieces(dest: &mut [u64], src: &[u64]) {
    use rayon::prelude::*;
    const PIECE: usize = 1 << 17;
    assert_eq!(dest.len(), src.len(), "copy_in_pieces: lengths differ");
    dest.par_chunks_mut(PIECE).zip(src.par_chunks(PIECE)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// The integrator's device buffers and the page-locked buffer its sums come back through, kept
/// by an executor between iterations: allocating, freeing (which synchronises the device) and
/// copying through pageable memory every iteration cost each device tens of milliseconds.
#[derive(Default)]
struct VegasBuffers {
    cubes: Option<CudaSlice<u64>>,
    bins: Option<CudaSlice<u64>>,
    stats: Option<CudaSlice<u64>>,
    edges: Option<CudaSlice<f64>>,
    offsets: Option<CudaSlice<u64>>,
    back: Option<cudarc::driver::PinnedHostSlice<u64>>,
}

/// Make `buf` hold at least `len` elements (a new allocation when it is smaller; its contents
/// are not kept).
fn grow<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    buf: &mut Option<CudaSlice<T>>,
    len: usize,
) -> Result<()> {
    if buf.as_ref().is_none_or(|b| b.len() < len) {
        *buf = None; // free the old one first
        *buf = Some(stream.alloc_zeros::<T>(len.max(1)).map_err(gpu_err("alloc"))?);
    }
    Ok(())
}

impl crate::integrate::VegasRunner for GpuExecutor {
    fn describe(&self) -> String {
        self.description()
    }

    fn run(
        &self,
        job: &warpmc_kernels::vegas::VegasJob,
        integrand: &crate::integrate::Integrand<'_>,
        generator: GeneratorKind,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
    ) -> Result<warpmc_kernels::vegas::VegasSums> {
        self.integrand_into(job, integrand, generator, edges, offsets, range, None)
    }

    fn run_into(
        &self,
        job: &warpmc_kernels::vegas::VegasJob,
        integrand: &crate::integrate::Integrand<'_>,
        generator: GeneratorKind,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
        from: u64,
        dest: &mut [u64],
    ) -> Result<warpmc_kernels::vegas::VegasSums> {
        // Straight from the page-locked buffer into `dest`: no copy of the part in between.
        self.integrand_into(job, integrand, generator, edges, offsets, range, Some(CubesInto { from, dest }))
    }
}

impl GpuExecutor {
    /// The runner's work for either integrand the GPU takes, the hypercubes of `into` (if any)
    /// written straight to its slice.
    #[allow(clippy::too_many_arguments)]
    fn integrand_into(
        &self,
        job: &warpmc_kernels::vegas::VegasJob,
        integrand: &crate::integrate::Integrand<'_>,
        generator: GeneratorKind,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
        into: Option<CubesInto<'_>>,
    ) -> Result<warpmc_kernels::vegas::VegasSums> {
        match integrand {
            crate::integrate::Integrand::Builtin(p) => {
                self.vegas_into(job, p, generator, edges, offsets, range, None, into)
            }
            crate::integrate::Integrand::Compiled(c) => {
                self.vegas_compiled_into(job, c, generator, edges, offsets, range, into)
            }
            crate::integrate::Integrand::Closure(_) => Err(closure_on_gpu()),
        }
    }
}

fn closure_on_gpu() -> Error {
    Error::invalid(
        "backend",
        "gpu",
        "cpu for a Rust closure integrand (on the GPU: a built-in integrand or a compiled integrand module)",
    )
}

impl GpuExecutor {
    /// The benchmark's baseline: `points` points of `job`'s seed at plain uniform coordinates
    /// (`vegas_plain__philox4x32_10`: no strata, grid or bins); the kernel's time, ms, and
    /// `(Σv, Σv²)` as f64 (in units of `2^scale_exp`), and the count of values out of the
    /// fixed-point range (left out of the sums).
    ///
    /// The launch has `waves` times the blocks the device holds at once (fewer where the points
    /// run out; the `gpu_grid` option overrides it), so that the baseline can be timed at its
    /// fastest launch.
    pub fn time_vegas_plain(
        &self,
        job: &warpmc_kernels::vegas::VegasJob,
        params: &warpmc_kernels::vegas::IntegrandParams,
        points: u64,
        waves: u32,
    ) -> Result<(f64, f64, f64, u64)> {
        if params.dim != job.dim || job.dim == 0 || job.dim as usize > warpmc_kernels::vegas::MAX_DIM {
            return Err(Error::invalid("dim", params.dim, "the job's dimension, in [1, 32]"));
        }
        self.ctx.bind_to_thread().map_err(gpu_err("binding the device's context"))?;
        let f = self.function("vegas_plain__philox4x32_10")?;
        let block = self.block;
        let grid = match self.grid {
            Some(g) => g,
            None => {
                let full = self.resident_blocks(&f, 0, block)? * waves.max(1) as u64;
                full.min(points.div_ceil(block as u64)).max(1) as u32
            }
        };
        let mut sums = self.stream.alloc_zeros::<u64>(7).map_err(gpu_err("alloc"))?;
        let params_arg = self.stream.clone_htod(&params_bytes(params)).map_err(gpu_err("copy integrand parameters"))?;
        let job_arg = ByValue(*job);
        let (first, end) = (0u64, points);
        let ms = self.time_ms(|| {
            let mut b = self.stream.launch_builder(&f);
            b.arg(&job_arg).arg(&params_arg).arg(&mut sums).arg(&first).arg(&end);
            // SAFETY: the argument list matches `vegas_plain__philox4x32_10`; `sums` holds 7 words
            // and `params_arg` one parameter block.
            unsafe { b.launch(config_block(grid, 0, block)) }.map_err(gpu_err("vegas baseline launch"))?;
            Ok(())
        })?;
        let w = self.stream.clone_dtoh(&sums).map_err(gpu_err("copy back"))?;
        let s = |i: usize| warpmc_kernels::accum::ExactSum { w: [w[i], w[i + 1], w[i + 2]] }.to_f64();
        Ok((ms, s(0), s(3), w[6]))
    }
}

#[cfg(test)]
mod tests {
    use core::mem::{offset_of, size_of};
    use warpmc_kernels::vegas::{IntegrandParams, MAX_DIM};

    #[test]
    fn a_kernel_is_found_by_its_entry_line_only() {
        let ptx = ".version 8.7\n.target sm_90\n\n.visible .entry ridge_vegas(\n\t.param .u64 a\n)\n{\n}\n\
                   .entry ridge_vegas__mrg32k3a (\n)\n{\n}\n.visible .func ridge_vegas__xorwow(\n)\n{\n}\n";
        assert!(super::ptx_defines_entry(ptx, "ridge_vegas"));
        assert!(super::ptx_defines_entry(ptx, "ridge_vegas__mrg32k3a"));
        // A function is not a kernel; a prefix of a name is not the name.
        assert!(!super::ptx_defines_entry(ptx, "ridge_vegas__xorwow"));
        assert!(!super::ptx_defines_entry(ptx, "ridge_vega"));
        assert!(!super::ptx_defines_entry(ptx, "ridge_vegas__warp"));
    }

    /// The bytes the kernels read are the `#[repr(C)]` block's: every field at its offset.
    #[test]
    fn params_bytes_are_the_kernels_block() {
        let mut p = IntegrandParams { family: 3, dim: 7, c: 0.25, scale: -1.5, a: [0.0; MAX_DIM], u: [0.0; MAX_DIM] };
        for i in 0..MAX_DIM {
            p.a[i] = i as f64 + 0.5;
            p.u[i] = -(i as f64) / 3.0;
        }
        let b = super::params_bytes(&p);
        assert_eq!(b.len(), size_of::<IntegrandParams>());
        let at = |o: usize, n: usize| &b[o..o + n];
        assert_eq!(at(offset_of!(IntegrandParams, family), 4), 3u32.to_ne_bytes());
        assert_eq!(at(offset_of!(IntegrandParams, dim), 4), 7u32.to_ne_bytes());
        assert_eq!(at(offset_of!(IntegrandParams, c), 8), 0.25f64.to_ne_bytes());
        assert_eq!(at(offset_of!(IntegrandParams, scale), 8), (-1.5f64).to_ne_bytes());
        for i in 0..MAX_DIM {
            assert_eq!(at(offset_of!(IntegrandParams, a) + 8 * i, 8), p.a[i].to_ne_bytes());
            assert_eq!(at(offset_of!(IntegrandParams, u) + 8 * i, 8), p.u[i].to_ne_bytes());
        }
    }
}
