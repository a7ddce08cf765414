//! `warpmc demo pipeline`: the TI Monte Carlo example rebuilt on [`crate::stream`].
//!
//! TI's example (an ARM Cortex-A15 with DSP accelerators) generates normals by the polar method
//! from parallel LCG streams with distinct prime increments, and a host "simulation" counts
//! the positive and negative values. It reports nanoseconds per element with the ARM alone
//! (generation and consumption in turn: 99 ns) and with the DSPs generating the next block while
//! the ARM consumes the previous one (about 8 ns). Here the accelerator is the backend (the GPU,
//! or the CPU's worker threads), the generator `lcg-prime` (per-stream prime increments), the
//! transform polar, and the rows are:
//!
//! - host only: one host thread generates a block, then consumes it;
//! - serial: the backend fills a block (to host memory), then the host consumes it;
//! - overlapped: a [`BlockStream`] fills ahead while the host consumes;
//!
//! with each stage alone beside them (the backend's fill, on the GPU split into the kernel and
//! the page-locked copy; the consumption, from memory beyond the caches as the stream's fresh
//! blocks are; and the stream with a consumer that does nothing), so that the overlapped time
//! can be judged against the slowest stage. The overlapped row leaves out the stream's set-up
//! (its buffers and states, reported apart), as TI's loop does. Every row consumes the same
//! values; the consumers' tallies must agree, or the run is an error.

use std::sync::Arc;
use std::time::Instant;

use crate::backend::cpu::CpuExecutor;
use crate::backend::{Executor, FillKind, StreamInit};
use crate::distributions::{DistKind, DistSpec, Transform};
use crate::generators::GeneratorKind;
use crate::pricing::Mode;
use crate::stream::{BlockStream, StreamSpec};
use crate::{Error, Result};

/// What the host does with each normal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Consumer {
    /// Count positive, negative and zero values (the TI example's model).
    #[default]
    Sign,
    /// A 64-bin histogram over [-4, 4) with the tails counted apart, and the sum of squares in
    /// `f64`: several times the work per value.
    Histogram,
}

/// Bins of [`Consumer::Histogram`].
pub const BINS: usize = 64;

/// What the consumers saw.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Tally {
    pub positive: u64,
    pub negative: u64,
    pub zero: u64,
    /// [`Consumer::Histogram`] only: `BINS` bins over [-4, 4), then below and above.
    pub bins: Vec<u64>,
    /// [`Consumer::Histogram`] only: Σ x².
    pub sum_squares: f64,
}

impl Tally {
    fn new(c: Consumer) -> Self {
        Tally { bins: if c == Consumer::Histogram { vec![0; BINS + 2] } else { Vec::new() }, ..Default::default() }
    }

    /// Consume a block of `f32` normals (their bits).
    pub fn consume(&mut self, c: Consumer, words: &[u32]) {
        match c {
            Consumer::Sign => {
                let (mut pos, mut neg) = (0u64, 0u64);
                for &w in words {
                    let x = f32::from_bits(w);
                    pos += u64::from(x > 0.0);
                    neg += u64::from(x < 0.0);
                }
                self.positive += pos;
                self.negative += neg;
                self.zero += words.len() as u64 - pos - neg;
            }
            Consumer::Histogram => {
                let mut ss = 0.0f64;
                for &w in words {
                    let x = f32::from_bits(w);
                    self.positive += u64::from(x > 0.0);
                    self.negative += u64::from(x < 0.0);
                    self.zero += u64::from(x == 0.0);
                    let b = ((x + 4.0) * (BINS as f32 / 8.0)).floor();
                    let i = if b < 0.0 {
                        BINS
                    } else if b >= BINS as f32 {
                        BINS + 1
                    } else {
                        b as usize
                    };
                    self.bins[i] += 1;
                    ss += f64::from(x) * f64::from(x);
                }
                self.sum_squares += ss;
            }
        }
    }
}

/// A demo run.
#[derive(Clone, Debug)]
pub struct PipelineSpec {
    pub generator: GeneratorKind,
    pub transform: Transform,
    pub seed: u64,
    /// Parallel streams (the TI example's DSP work items).
    pub streams: u64,
    /// Normals per row.
    pub count: u64,
    /// Normals per block.
    pub block: u64,
    pub buffers: usize,
    pub consumer: Consumer,
}

impl Default for PipelineSpec {
    fn default() -> Self {
        PipelineSpec {
            generator: GeneratorKind::LcgPrime,
            transform: Transform::Polar,
            seed: 1,
            streams: 4096,
            count: 1 << 25,
            block: 1 << 20,
            buffers: 4,
            consumer: Consumer::Sign,
        }
    }
}

impl PipelineSpec {
    fn fill_kind(&self) -> FillKind {
        let d = DistSpec { transform: Some(self.transform), ..DistSpec::new(DistKind::Normal) }.with_mode(Mode::Exact);
        FillKind::Dist(d.fill())
    }

    fn init(&self) -> StreamInit {
        StreamInit::Seeded { generator: self.generator, seed: self.seed, first: 0, count: self.streams }
    }

    fn stream_spec(&self) -> StreamSpec {
        StreamSpec {
            kind: self.fill_kind(),
            init: self.init(),
            count: Some(self.count),
            block: self.block,
            buffers: self.buffers,
        }
    }

    pub fn validate(&self) -> Result<()> {
        if !(1..=1 << 20).contains(&self.streams) {
            return Err(Error::invalid("streams", self.streams, "[1, 2^20]"));
        }
        if !(1..=1 << 36).contains(&self.count) {
            return Err(Error::invalid("count", self.count, "[1, 2^36]"));
        }
        let d = DistSpec { transform: Some(self.transform), ..DistSpec::new(DistKind::Normal) };
        d.validate()?;
        d.check_generator(self.generator)?;
        self.stream_spec().validate()
    }
}

/// One row of the table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    pub what: String,
    pub seconds: f64,
    pub ns_per_element: f64,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct PipelineReport {
    pub backend: String,
    pub device: String,
    pub generator: GeneratorKind,
    pub transform: Transform,
    pub consumer: Consumer,
    pub streams: u64,
    pub elements: u64,
    pub block: u64,
    pub buffers: usize,
    /// Host only, serial, overlapped.
    pub rows: Vec<Row>,
    /// Each stage alone.
    pub stages: Vec<Row>,
    /// The overlapped time over the slowest stage's (1: perfect overlap).
    pub overlap_over_slowest: f64,
    /// Seconds to open the overlapped row's stream (its buffers and states), not in its row.
    pub stream_setup_seconds: f64,
    /// Page-locked device-to-host copy bandwidth, GB/s (GPU).
    pub copy_gb_per_s: Option<f64>,
    pub tally: Tally,
}

fn row(what: impl Into<String>, seconds: f64, n: u64) -> Row {
    Row { what: what.into(), seconds, ns_per_element: seconds * 1e9 / n as f64 }
}

/// Generate and consume `spec.count` normals each way on `exec`, and time each stage alone.
pub fn run(exec: Arc<dyn Executor>, spec: &PipelineSpec) -> Result<PipelineReport> {
    spec.validate()?;
    let (kind, init, c, n) = (spec.fill_kind(), spec.init(), spec.consumer, spec.count);
    let block = spec.stream_spec().block_values();
    let mut buf = vec![0u32; block as usize];

    // Host only: one thread generates, then consumes, block by block.
    let host = CpuExecutor::new(Some(1))?;
    let mut host_tally = Tally::new(c);
    let t = Instant::now();
    {
        let mut f = host.filler(kind, &init)?;
        let mut left = n;
        while left > 0 {
            let m = block.min(left) as usize;
            f.fill(&mut buf[..m])?;
            host_tally.consume(c, &buf[..m]);
            left -= m as u64;
        }
    }
    let host_only = t.elapsed().as_secs_f64();

    // Serial: the backend fills a block to host memory, then the host consumes it.
    let mut serial_tally = Tally::new(c);
    let mut fill_seconds = 0.0;
    let t = Instant::now();
    {
        let mut f = exec.filler(kind, &init)?;
        let mut left = n;
        while left > 0 {
            let m = block.min(left) as usize;
            let tf = Instant::now();
            f.fill(&mut buf[..m])?;
            fill_seconds += tf.elapsed().as_secs_f64();
            serial_tally.consume(c, &buf[..m]);
            left -= m as u64;
        }
    }
    let serial = t.elapsed().as_secs_f64();

    // Overlapped: the stream fills ahead. Its set-up (buffers, page-locked on the GPU; the
    // streams' states) is timed apart: the row is the steady pipeline, as TI's loop.
    let mut overlapped_tally = Tally::new(c);
    let t = Instant::now();
    let stream = BlockStream::open(exec.clone(), &spec.stream_spec())?;
    let setup = t.elapsed().as_secs_f64();
    let t = Instant::now();
    stream.for_each_block(|b| {
        overlapped_tally.consume(c, b);
        Ok(())
    })?;
    let overlapped = t.elapsed().as_secs_f64();

    // The producer alone: the same stream with a consumer that only touches each block's end.
    let mut stream = BlockStream::open(exec.clone(), &spec.stream_spec())?;
    let t = Instant::now();
    while stream.advance()? {
        std::hint::black_box(stream.current().last());
    }
    let producer_alone = t.elapsed().as_secs_f64();
    drop(stream);

    for (name, other) in [("host only", &host_tally), ("overlapped", &overlapped_tally)] {
        if other != &serial_tally {
            return Err(Error::OutOfRange(format!(
                "the {name} run consumed other values than the serial run (tallies {other:?} and {serial_tally:?}): \
                 the stream does not reproduce the fill"
            )));
        }
    }

    // Consumption alone, from memory as cold as the stream's fresh blocks: copies of the last
    // block across a ring of 256 MiB (more than a processor's caches), consumed in turn.
    let ring_blocks = ((256usize << 20) / (4 * buf.len())).clamp(1, n.div_ceil(block) as usize);
    let ring: Vec<u32> = (0..ring_blocks).flat_map(|_| buf.iter().copied()).collect();
    let mut scratch = Tally::new(c);
    let t = Instant::now();
    let (mut left, mut k) = (n, 0);
    while left > 0 {
        let m = block.min(left) as usize;
        let at = (k % ring_blocks) * buf.len();
        scratch.consume(c, std::hint::black_box(&ring[at..at + m]));
        left -= m as u64;
        k += 1;
    }
    let consume_alone = t.elapsed().as_secs_f64();
    drop(ring);

    let mut stages = Vec::new();
    #[cfg_attr(not(feature = "gpu"), allow(unused_mut))]
    let mut copy_gb_per_s = None;
    #[cfg(feature = "gpu")]
    if let Some(gpu) = exec.as_gpu() {
        let (kernel, copy) = gpu_stages(gpu, kind, &init, n, block)?;
        stages.push(row("GPU fill kernel alone", kernel, n));
        stages.push(row("page-locked device-to-host copy alone", copy, n));
        copy_gb_per_s = Some(n as f64 * 4.0 / copy / 1e9);
    }
    if stages.is_empty() {
        stages.push(row(format!("{} fill alone", exec.kind()), fill_seconds, n));
    } else {
        stages.push(row("GPU fill and copy to pageable memory (the serial row's fill)", fill_seconds, n));
    }
    stages.push(row("host consumption alone (from memory beyond the caches)", consume_alone, n));
    stages.push(row(format!("{} stream with an idle consumer (fill and copy overlapped)", exec.kind()), producer_alone, n));
    // The slowest stage the overlapped run must wait for: on the GPU the kernel, the page-locked
    // copy and the consumer run concurrently; on the CPU the fill and the consumer.
    let slowest = stages
        .iter()
        .filter(|s| !s.what.contains("pageable") && !s.what.contains("idle consumer"))
        .map(|s| s.seconds)
        .fold(0.0, f64::max);

    Ok(PipelineReport {
        backend: exec.kind().to_string(),
        device: exec.description(),
        generator: spec.generator,
        transform: spec.transform,
        consumer: c,
        streams: spec.streams,
        elements: n,
        block,
        buffers: spec.buffers,
        rows: vec![
            row("host only (one thread: generate, then consume)", host_only, n),
            row(format!("{} generation, then host consumption (serial)", exec.kind()), serial, n),
            row(format!("{} generation overlapped with host consumption (stream set-up apart)", exec.kind()), overlapped, n),
        ],
        stages,
        overlap_over_slowest: overlapped / slowest,
        stream_setup_seconds: setup,
        copy_gb_per_s,
        tally: serial_tally,
    })
}

/// Seconds for the fill kernels alone (into device memory) and for the page-locked copies
/// alone, of `n` values in blocks of `block`.
#[cfg(feature = "gpu")]
fn gpu_stages(
    gpu: &crate::backend::gpu::GpuExecutor,
    kind: FillKind,
    init: &StreamInit,
    n: u64,
    block: u64,
) -> Result<(f64, f64)> {
    let err = |what: &'static str| move |e: cudarc::driver::DriverError| Error::Gpu(format!("{what}: {e:?}"));
    let stream = gpu.stream();
    let mut states = gpu.init_states(init)?;
    let mut dev = stream.alloc_zeros::<u32>(block as usize).map_err(err("alloc"))?;
    stream.synchronize().map_err(err("synchronize"))?;
    let t = Instant::now();
    let mut left = n;
    while left > 0 {
        let m = block.min(left);
        gpu.launch_fill(kind, &mut dev.slice_mut(..m as usize), m, &mut states)?;
        left -= m;
    }
    stream.synchronize().map_err(err("synchronize"))?;
    let kernel = t.elapsed().as_secs_f64();
    // SAFETY: written by the copies below before anything reads it (nothing does).
    let mut host = unsafe { stream.context().alloc_pinned_with_flags::<u32>(block as usize, 0) }
        .map_err(err("pinned alloc"))?;
    stream.memcpy_dtoh(&dev, &mut host).map_err(err("copy"))?;
    stream.synchronize().map_err(err("synchronize"))?;
    let t = Instant::now();
    let mut left = n;
    while left > 0 {
        stream.memcpy_dtoh(&dev, &mut host).map_err(err("copy"))?;
        left -= block.min(left);
    }
    stream.synchronize().map_err(err("synchronize"))?;
    // Whole blocks were copied: scale to `n` values.
    let copies = n.div_ceil(block);
    let copy = t.elapsed().as_secs_f64() * n as f64 / (copies * block) as f64;
    Ok((kernel, copy))
}

impl std::fmt::Display for PipelineReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "warpmc demo pipeline: {} normals ({}, {}; {} streams), consumer {:?}, blocks of {} values, {} buffers",
            self.elements,
            self.generator,
            self.transform.name(),
            self.streams,
            self.consumer,
            self.block,
            self.buffers
        )?;
        writeln!(f, "backend {}: {}", self.backend, self.device)?;
        writeln!(f)?;
        writeln!(f, "| run | ns per element | seconds |")?;
        writeln!(f, "|---|---:|---:|")?;
        for r in &self.rows {
            writeln!(f, "| {} | {:.3} | {:.4} |", r.what, r.ns_per_element, r.seconds)?;
        }
        writeln!(f, "| **stages alone** | | |")?;
        for r in &self.stages {
            writeln!(f, "| {} | {:.3} | {:.4} |", r.what, r.ns_per_element, r.seconds)?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "overlapped / slowest stage: {:.3}; stream set-up {:.4} s{}",
            self.overlap_over_slowest,
            self.stream_setup_seconds,
            self.copy_gb_per_s.map_or(String::new(), |g| format!("; page-locked copy {g:.1} GB/s"))
        )?;
        writeln!(
            f,
            "count positive = {}  count negative = {}  zero {} (the same in every run)",
            self.tally.positive, self.tally.negative, self.tally.zero
        )
    }
}
