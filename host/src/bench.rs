//! `warpmc bench`: throughput of the generators and of the Asian basket, measured in one run
//! beside the references that make the numbers meaningful (cuRAND's host API, the device's own
//! copy and write bandwidth, the constant-RNG baseline) and the CPU backend.
//!
//! GPU timings are CUDA events around the kernel alone (states initialised and buffers
//! allocated beforehand), after one warm-up, the median of several repetitions. Results are JSON
//! (`--json-out`) and a Markdown table ([`BenchReport::markdown`]) for BENCHMARKS.md.
//! Never a test: timings on shared machines are not pass/fail material.

use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;
use warpmc_kernels::fill::{Group, Normals};
use warpmc_kernels::rng::{Generator, HybridTaus};
use warpmc_kernels::{Exact, Fast, MathMode};

use crate::Result;
use crate::backend::Executor;
use crate::backend::cpu::CpuExecutor;
use crate::generators::GeneratorKind;
use crate::pricing::{AsianBasket, Mode};

/// Sizes of one benchmark run.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct BenchSizes {
    /// Values per GPU fill (4 bytes each).
    pub gpu_values: u64,
    /// Paths per GPU Asian basket launch.
    pub gpu_paths: u64,
    /// Timed repetitions (median reported).
    pub reps: usize,
    /// Normals per CPU thread.
    pub cpu_values_per_thread: u64,
    /// Asian basket paths per CPU thread.
    pub cpu_paths_per_thread: u64,
    pub steps: u32,
}

impl BenchSizes {
    pub fn full() -> Self {
        Self {
            gpu_values: 1 << 28,
            gpu_paths: 1 << 21,
            reps: 10,
            cpu_values_per_thread: 1 << 24,
            cpu_paths_per_thread: 1 << 12,
            steps: 256,
        }
    }
    pub fn quick() -> Self {
        Self {
            gpu_values: 1 << 24,
            gpu_paths: 1 << 16,
            reps: 3,
            cpu_values_per_thread: 1 << 20,
            cpu_paths_per_thread: 1 << 8,
            steps: 256,
        }
    }
}

/// One throughput figure.
#[derive(Clone, Debug, Serialize)]
pub struct Rate {
    pub name: String,
    /// Values (or steps) per second.
    pub per_second: f64,
    /// Median time of one repetition, milliseconds.
    pub ms: f64,
    /// For fills: the fraction of the measured write bandwidth the output stream uses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fraction_of_write_bandwidth: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GpuBench {
    pub device: String,
    pub multiprocessors: u32,
    /// Loading the kernel module when the backend opened, milliseconds.
    pub module_load_ms: f64,
    /// What was loaded (machine code built with the crate, or PTX compiled by the driver).
    pub module_kind: String,
    /// PTX module size, bytes.
    pub ptx_bytes: usize,
    /// Device-to-device copy, bytes read plus bytes written per second.
    pub copy_bandwidth_bytes: f64,
    /// `cuMemsetD8` over the same buffer: bytes written per second.
    pub write_bandwidth_bytes: f64,
    /// warpmc's fills (values per second written to device memory).
    pub fills: Vec<Rate>,
    /// cuRAND host API, `curandGenerateNormal` into the same buffer size.
    pub curand_normals: Vec<Rate>,
    /// Why a cuRAND generator could not be measured, if so.
    pub curand_errors: Vec<String>,
    /// Our fast normals over cuRAND's fastest normals.
    pub speedup_fast_normals_vs_best_curand: Option<f64>,
    /// Computing 10^6 stream states on the GPU, per generator (states per second).
    pub stream_setup: Vec<Rate>,
    /// Asian basket, steps per second: the default generator fast and exact, the constant-RNG
    /// baseline, then every other generator in fast mode.
    pub asian: Vec<Rate>,
    /// Fast Asian basket time over constant-RNG time.
    pub asian_fast_over_constant: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct CpuBench {
    pub threads: usize,
    /// u32 words per second of each generator (generated in registers, summed).
    pub words: Vec<Rate>,
    /// Box-Muller normals per second (generated in registers, summed; not written out).
    pub normals: Vec<Rate>,
    /// Asian basket steps per second.
    pub asian: Vec<Rate>,
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    /// UTC time of the run.
    pub date: String,
    pub warpmc_version: &'static str,
    pub sizes: BenchSizes,
    pub gpu: Option<GpuBench>,
    /// Why the GPU part did not run, if it did not.
    pub gpu_skipped: Option<String>,
    pub cpu: Option<CpuBench>,
}

/// Which parts of the benchmark to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Parts {
    All,
    Gpu,
    Cpu,
}

/// Run the benchmark: the GPU part where a GPU opens, and the CPU part always.
pub fn run(sizes: BenchSizes, parts: Parts, log: &mut dyn FnMut(&str)) -> Result<BenchReport> {
    let date = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let (gpu, gpu_skipped) =
        if parts == Parts::Cpu { (None, Some("not asked for (--only cpu)".into())) } else { run_gpu(&sizes, log) };
    let cpu = if parts == Parts::Gpu {
        None
    } else {
        log("CPU: normals and Asian basket");
        Some(cpu_bench(&sizes)?)
    };
    Ok(BenchReport { date, warpmc_version: env!("CARGO_PKG_VERSION"), sizes, gpu, gpu_skipped, cpu })
}

#[cfg(feature = "gpu")]
fn run_gpu(sizes: &BenchSizes, log: &mut dyn FnMut(&str)) -> (Option<GpuBench>, Option<String>) {
    use crate::backend::{BackendKind, BackendOptions};
    let opts = BackendOptions { kind: BackendKind::Gpu, ..Default::default() };
    match crate::backend::gpu::GpuExecutor::new(&opts) {
        Err(e) => (None, Some(e.to_string())),
        Ok(exec) => match gpu::bench(&exec, sizes, log) {
            Ok(b) => (Some(b), None),
            Err(e) => (None, Some(format!("GPU benchmark failed: {e}"))),
        },
    }
}

#[cfg(not(feature = "gpu"))]
fn run_gpu(_: &BenchSizes, _: &mut dyn FnMut(&str)) -> (Option<GpuBench>, Option<String>) {
    (None, Some("built without the `gpu` feature".into()))
}

#[cfg(feature = "gpu")]
mod gpu {
    use cudarc::curand::sys::curandRngType_t;
    use cudarc::driver::DevicePtrMut;

    use super::*;
    use crate::Error;
    use crate::backend::gpu::GpuExecutor;
    use crate::backend::{FillKind, StreamInit};
    use crate::generators::GeneratorKind;

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    fn gpu_err(e: impl std::fmt::Debug) -> Error {
        Error::Gpu(format!("{e:?}"))
    }

    fn timed(exec: &GpuExecutor, reps: usize, mut work: impl FnMut() -> Result<()>) -> Result<f64> {
        work()?; // warm-up
        let mut t = Vec::with_capacity(reps);
        for _ in 0..reps {
            t.push(exec.time_ms(&mut work)?);
        }
        Ok(median(t))
    }

    pub(super) fn bench(exec: &GpuExecutor, s: &BenchSizes, log: &mut dyn FnMut(&str)) -> Result<GpuBench> {
        let stream = exec.stream().clone();
        let n = s.gpu_values as usize;
        let bytes = n as f64 * 4.0;
        let mut out = stream.alloc_zeros::<u32>(n).map_err(gpu_err)?;
        let other = stream.alloc_zeros::<u32>(n).map_err(gpu_err)?;

        log("GPU: copy and write bandwidth");
        let copy_ms = timed(exec, s.reps, || stream.memcpy_dtod(&other, &mut out).map_err(gpu_err))?;
        let write_ms = timed(exec, s.reps, || stream.memset_zeros(&mut out).map_err(gpu_err))?;
        let copy_bandwidth_bytes = 2.0 * bytes / (copy_ms * 1e-3);
        let write_bandwidth_bytes = bytes / (write_ms * 1e-3);
        drop(other);

        // One stream per resident thread: the generator layout of `warpmc generate --streams`.
        let streams = exec.multiprocessors() as u64 * 2048;
        let mut fills = Vec::new();
        let default = GeneratorKind::default();
        let mut cases = vec![
            (default, FillKind::Normals(Mode::Fast)),
            (default, FillKind::Normals(Mode::Exact)),
            (default, FillKind::Words),
            (default, FillKind::Uniforms),
        ];
        for &g in GeneratorKind::ALL.iter().filter(|&&g| g != default) {
            cases.push((g, FillKind::Words));
            cases.push((g, FillKind::Normals(Mode::Fast)));
        }
        for (g, kind) in cases {
            let name = match kind {
                FillKind::Words => format!("{g}, u32 words"),
                FillKind::Uniforms => format!("{g}, uniform f32"),
                FillKind::UniformsF64 => format!("{g}, uniform f64 (53 bits)"),
                FillKind::Normals(m) => format!("{g} + Box-Muller {}, f32 normals", m.name()),
            };
            log(&format!("GPU: {name}"));
            let init = StreamInit::Seeded { generator: g, seed: 1, first: 0, count: streams };
            let mut states = exec.init_states(&init)?;
            let ms = timed(exec, s.reps, || exec.launch_fill(kind, &mut out.slice_mut(..), n as u64, &mut states))?;
            let rate = n as f64 / (ms * 1e-3);
            fills.push(Rate {
                name,
                per_second: rate,
                ms,
                fraction_of_write_bandwidth: Some(rate * 4.0 / write_bandwidth_bytes),
            });
        }

        // Stream set-up: 10^6 states computed on the GPU from (seed, stream).
        let mut stream_setup = Vec::new();
        for &g in GeneratorKind::ALL {
            let count = 1_000_000u64;
            let mut states = exec.alloc_streams(g, 0, count)?;
            let ms = timed(exec, s.reps, || exec.seed_streams(&mut states, 1))?;
            stream_setup.push(Rate {
                name: format!("{g}, 10^6 streams"),
                per_second: count as f64 / (ms * 1e-3),
                ms,
                fraction_of_write_bandwidth: None,
            });
        }

        let mut curand_normals = Vec::new();
        let mut curand_errors = Vec::new();
        let mut outf = stream.alloc_zeros::<f32>(n).map_err(gpu_err)?;
        // SAFETY: probes for the library only.
        if !unsafe { cudarc::curand::sys::is_culib_present() } {
            curand_errors.push("libcurand was not found (set LD_LIBRARY_PATH to CUDA's lib64)".into());
        } else {
            for (name, kind) in [
                ("cuRAND XORWOW", curandRngType_t::CURAND_RNG_PSEUDO_XORWOW),
                ("cuRAND Philox4_32_10", curandRngType_t::CURAND_RNG_PSEUDO_PHILOX4_32_10),
                ("cuRAND MRG32k3a", curandRngType_t::CURAND_RNG_PSEUDO_MRG32K3A),
                ("cuRAND MT19937", curandRngType_t::CURAND_RNG_PSEUDO_MT19937),
                ("cuRAND MTGP32", curandRngType_t::CURAND_RNG_PSEUDO_MTGP32),
            ] {
                log(&format!("GPU: {name}"));
                match curand_normals_ms(exec, kind, &mut outf, s.reps) {
                    Ok(ms) => curand_normals.push(Rate {
                        name: name.into(),
                        per_second: n as f64 / (ms * 1e-3),
                        ms,
                        fraction_of_write_bandwidth: Some(n as f64 * 4.0 / (ms * 1e-3) / write_bandwidth_bytes),
                    }),
                    Err(e) => curand_errors.push(format!("{name}: {e}")),
                }
            }
        }
        drop(outf);
        drop(out);
        let best = curand_normals.iter().map(|r| r.per_second).fold(0.0, f64::max);
        let speedup = (best > 0.0).then(|| fills[0].per_second / best);

        let job = AsianBasket::default().kernel_job(s.steps).steps;
        let steps_total = s.gpu_paths as f64 * s.steps as f64;
        let mut asian = Vec::new();
        let mut asian_cases = vec![
            (format!("Asian basket, {default}, fast"), default, Some(Mode::Fast)),
            (format!("Asian basket, {default}, exact"), default, Some(Mode::Exact)),
            ("Asian basket, constant RNG (fast)".to_string(), default, None),
        ];
        for &g in GeneratorKind::ALL.iter().filter(|&&g| g != default) {
            asian_cases.push((format!("Asian basket, {g}, fast"), g, Some(Mode::Fast)));
        }
        for (name, g, mode) in asian_cases {
            log(&format!("GPU: {name}"));
            let mut t = Vec::new();
            exec.time_asian(&job, g, 1, s.gpu_paths, mode)?;
            for _ in 0..s.reps {
                t.push(exec.time_asian(&job, g, 1, s.gpu_paths, mode)?);
            }
            let ms = median(t);
            asian.push(Rate { name, per_second: steps_total / (ms * 1e-3), ms, fraction_of_write_bandwidth: None });
        }
        let asian_fast_over_constant = asian[0].ms / asian[2].ms;

        Ok(GpuBench {
            device: exec.name().to_string(),
            multiprocessors: exec.multiprocessors(),
            module_load_ms: exec.module_load_ms(),
            module_kind: exec.module_kind().to_string(),
            ptx_bytes: crate::ptx().len(),
            copy_bandwidth_bytes,
            write_bandwidth_bytes,
            fills,
            curand_normals,
            curand_errors,
            speedup_fast_normals_vs_best_curand: speedup,
            stream_setup,
            asian,
            asian_fast_over_constant,
        })
    }

    fn curand_normals_ms(
        exec: &GpuExecutor,
        kind: curandRngType_t,
        out: &mut cudarc::driver::CudaSlice<f32>,
        reps: usize,
    ) -> Result<f64> {
        use cudarc::curand::result as cr;
        let stream = exec.stream().clone();
        let generator = cr::create_generator_kind(kind).map_err(gpu_err)?;
        let n = out.len();
        let result = (|| {
            // SAFETY: `generator` is live until destroyed below; `out` holds `n` floats and outlives
            // every call; all work is on the executor's stream.
            unsafe {
                cr::set_stream(generator, stream.cu_stream() as _).map_err(gpu_err)?;
                cr::set_seed(generator, 1234).map_err(gpu_err)?;
            }
            timed(exec, reps, || {
                let (ptr, _sync) = out.device_ptr_mut(&stream);
                // SAFETY: as above.
                unsafe { cr::generate::normal_f32(generator, ptr as *mut f32, n, 0.0, 1.0) }.map_err(gpu_err)
            })
        })();
        // SAFETY: created above, destroyed once.
        unsafe { cr::destroy_generator(generator) }.map_err(gpu_err)?;
        result
    }
}

/// Normals per second on `threads` threads, generated and summed in registers.
fn cpu_normals<M: MathMode>(pool: &CpuExecutor, threads: usize, per_thread: u64) -> f64 {
    let start = Instant::now();
    let sink: f64 = pool.install(|| {
        (0..threads as u64)
            .into_par_iter()
            .map(|t| {
                let mut rng = HybridTaus::stream(7, t);
                let mut acc = 0.0f32;
                for _ in 0..per_thread / 4 {
                    let g = Normals::<M>::next_group(&mut rng);
                    acc += g[0] + g[1] + g[2] + g[3];
                }
                acc as f64
            })
            .sum()
    });
    std::hint::black_box(sink);
    (threads as u64 * per_thread) as f64 / start.elapsed().as_secs_f64()
}

/// Words per second of generator `G` on `threads` threads (one stream each), summed in registers.
fn cpu_words<G: Generator>(pool: &CpuExecutor, threads: usize, per_thread: u64) -> f64 {
    let start = Instant::now();
    let sink: u64 = pool.install(|| {
        (0..threads as u64)
            .into_par_iter()
            .map(|t| {
                let mut rng = G::stream(7, t);
                let mut acc = 0u32;
                for _ in 0..per_thread {
                    // Opaque to the optimiser: otherwise it sums a counter (`adder`) in closed
                    // form and reports trillions of words per second.
                    acc = std::hint::black_box(acc.wrapping_add(rng.next_u32()));
                }
                acc as u64
            })
            .sum()
    });
    std::hint::black_box(sink);
    (threads as u64 * per_thread) as f64 / start.elapsed().as_secs_f64()
}

fn cpu_bench(s: &BenchSizes) -> Result<CpuBench> {
    let all = CpuExecutor::new(None)?;
    let one = CpuExecutor::new(Some(1))?;
    let threads = all.threads();
    let mut normals = Vec::new();
    for (exec, t) in [(&one, 1usize), (&all, threads)] {
        for (mode, rate) in [
            ("fast", cpu_normals::<Fast>(exec, t, s.cpu_values_per_thread)),
            ("exact", cpu_normals::<Exact>(exec, t, s.cpu_values_per_thread)),
        ] {
            normals.push(Rate {
                name: format!("Box-Muller {mode}, {t} thread{}", if t == 1 { "" } else { "s" }),
                per_second: rate,
                ms: (t as u64 * s.cpu_values_per_thread) as f64 / rate * 1e3,
                fraction_of_write_bandwidth: None,
            });
        }
    }
    let mut words = Vec::new();
    for &g in GeneratorKind::ALL {
        for (exec, t) in [(&one, 1usize), (&all, threads)] {
            let n = s.cpu_values_per_thread * 4;
            let rate = with_generator!(g, G => cpu_words::<G>(exec, t, n));
            words.push(Rate {
                name: format!("{g}, u32 words, {t} thread{}", if t == 1 { "" } else { "s" }),
                per_second: rate,
                ms: (t as u64 * n) as f64 / rate * 1e3,
                fraction_of_write_bandwidth: None,
            });
        }
    }
    let job = AsianBasket::default().kernel_job(s.steps).steps;
    let mut asian = Vec::new();
    for (exec, t) in [(&one, 1usize), (&all, threads)] {
        let paths = s.cpu_paths_per_thread * t as u64;
        for (name, mode) in [("fast", Some(Mode::Fast)), ("exact", Some(Mode::Exact)), ("constant RNG (fast)", None)] {
            let start = Instant::now();
            match mode {
                Some(m) => exec.asian_basket(&job, GeneratorKind::default(), 1, 0..paths, m)?,
                None => exec.asian_basket_constant(&job, 0..paths)?,
            };
            let secs = start.elapsed().as_secs_f64();
            asian.push(Rate {
                name: format!("Asian basket {name}, {t} thread{}", if t == 1 { "" } else { "s" }),
                per_second: paths as f64 * s.steps as f64 / secs,
                ms: secs * 1e3,
                fraction_of_write_bandwidth: None,
            });
        }
    }
    Ok(CpuBench { threads, words, normals, asian })
}

fn si(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.1} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.1} M", x / 1e6)
    } else {
        format!("{:.0}", x)
    }
}

impl BenchReport {
    /// A Markdown section for BENCHMARKS.md.
    pub fn markdown(&self) -> String {
        let mut m = String::new();
        let device = self.gpu.as_ref().map(|g| g.device.as_str()).unwrap_or("CPU only");
        m += &format!("### {device}, {}\n\n", self.date);
        m += &format!("warpmc {}; sizes: {:?}\n\n", self.warpmc_version, self.sizes);
        if let Some(g) = &self.gpu {
            m += &format!(
                "GPU: {} ({} SMs). Device-to-device copy {:.0} GB/s (read + write); write bandwidth (memset) {:.0} GB/s = {} floats/s.\n\n",
                g.device,
                g.multiprocessors,
                g.copy_bandwidth_bytes / 1e9,
                g.write_bandwidth_bytes / 1e9,
                si(g.write_bandwidth_bytes / 4.0)
            );
            m += &format!(
                "Kernels: {} ({:.0} KiB of PTX), loaded in {:.0} ms when the backend opened.\n\n",
                g.module_kind,
                g.ptx_bytes as f64 / 1024.0,
                g.module_load_ms
            );
            m += "| generator (GPU, to device memory) | values/s | ms | of write bandwidth |\n|---|---:|---:|---:|\n";
            for r in g.fills.iter().chain(&g.curand_normals) {
                m += &format!(
                    "| {} | {} | {:.3} | {:.0}% |\n",
                    r.name,
                    si(r.per_second),
                    r.ms,
                    100.0 * r.fraction_of_write_bandwidth.unwrap_or(0.0)
                );
            }
            if let Some(x) = g.speedup_fast_normals_vs_best_curand {
                m += &format!("\nFast normals over cuRAND's fastest normals: **{x:.2}x**.\n");
            }
            for e in &g.curand_errors {
                m += &format!("\ncuRAND not measured: {e}\n");
            }
            m += "\n| stream set-up (GPU) | ms |\n|---|---:|\n";
            for r in &g.stream_setup {
                m += &format!("| {} | {:.3} |\n", r.name, r.ms);
            }
            m += "\n| Asian basket (GPU, 256 steps) | MSteps/s | ms |\n|---|---:|---:|\n";
            for r in &g.asian {
                m += &format!("| {} | {:.0} | {:.2} |\n", r.name, r.per_second / 1e6, r.ms);
            }
            m += &format!(
                "\nFast Asian basket time over constant-RNG time: **{:.2}x**.\n\n",
                g.asian_fast_over_constant
            );
        } else if let Some(why) = &self.gpu_skipped {
            m += &format!("GPU part not run: {why}\n\n");
        }
        if let Some(cpu) = &self.cpu {
            m += &format!("CPU ({} threads):\n\n| CPU | per second | ms |\n|---|---:|---:|\n", cpu.threads);
            for r in &cpu.words {
                m += &format!("| {} | {} | {:.1} |\n", r.name, si(r.per_second), r.ms);
            }
            for r in &cpu.normals {
                m += &format!("| {} (normals) | {} | {:.1} |\n", r.name, si(r.per_second), r.ms);
            }
            for r in &cpu.asian {
                m += &format!("| {} (steps) | {} | {:.1} |\n", r.name, si(r.per_second), r.ms);
            }
        }
        m
    }
}
