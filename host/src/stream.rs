//! Streaming generation: the blocks of a fill, produced ahead of the consumer.
//!
//! A [`BlockStream`] hands out the values of one fill ([`FillKind`] from [`StreamInit`]'s
//! streams, the interleaved layout of [`warpmc_kernels::fill`]) block after block, in order,
//! while the backend already produces the next blocks:
//!
//! - on the GPU, `buffers` slots, each a device buffer, a page-locked host buffer and a CUDA
//!   stream of its own for the copy: the fills run one after another on the executor's stream
//!   (each advances the generator states the next one starts from), an event marks each fill's
//!   end, the slot's copy stream waits for it and copies the block to its host buffer, and the
//!   consumer waits for that copy's event only. While the consumer reads block `k`, the GPU fills
//!   and copies blocks `k + 1 .. k + buffers - 1`; when it asks for the next block, block `k`'s
//!   slot is queued again for block `k + buffers`. Fill and copy overlap each other as well as
//!   the host.
//! - on the CPU (and for Wallace's pool transform on the GPU, whose fill is not a single
//!   launch), a producer thread runs the ordinary [`crate::backend::Filler`] on the executor's
//!   workers into `buffers` recycled host buffers, passed over channels.
//!
//! The values are those of the direct fill ([`crate::generate::generate_words`]) for the same
//! kind and streams, bit for bit, whatever the block size, the number of buffers or the backend:
//! the producer is the same filler, called with whole rows (`4 × streams` values) per block.
//!
//! Dropping a stream stops its producer: the thread is told to stop and joined, the GPU's queued
//! work (at most `buffers` blocks) is waited for and the buffers freed. A consumer that fails
//! simply drops the stream.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use warpmc_kernels::fill::GROUP;

use crate::backend::{Executor, FillKind, StreamInit};
use crate::{Error, Result};

#[cfg(not(target_endian = "little"))]
compile_error!("BlockStream::current_bytes hands out the words' memory as little-endian bytes");

/// Default values per block: 4 Mi (16 MiB of `u32`).
pub const DEFAULT_BLOCK: u64 = 1 << 22;
/// Largest block, in values.
pub const BLOCK_MAX: u64 = 1 << 28;
/// Default number of buffers.
pub const DEFAULT_BUFFERS: usize = 4;
/// Most buffers.
pub const BUFFERS_MAX: usize = 64;
/// Most bytes of buffers in all (on the GPU, as much again in device memory).
pub const MEMORY_MAX: u64 = 8 << 30;

/// What to stream.
#[derive(Clone, Debug)]
pub struct StreamSpec {
    pub kind: FillKind,
    pub init: StreamInit,
    /// Values in all, at least 1; `None`: without end (the consumer stops by dropping the
    /// stream).
    pub count: Option<u64>,
    /// Values per block, in [1, 2^28], rounded up to whole rows of the layout
    /// ([`StreamSpec::block_values`]).
    pub block: u64,
    /// Buffers, in [2, 64]: the consumer holds one block while the others are produced.
    pub buffers: usize,
}

impl StreamSpec {
    /// `count` values of `kind` from `init` with the default block and buffers.
    pub fn new(kind: FillKind, init: StreamInit, count: Option<u64>) -> Self {
        StreamSpec { kind, init, count, block: DEFAULT_BLOCK, buffers: DEFAULT_BUFFERS }
    }

    /// Values per block as produced: `block` rounded up to a multiple of `4 × streams` (the
    /// layout's row; the fill keeps its streams' places only between whole rows). The last
    /// block of a finite stream may be shorter.
    pub fn block_values(&self) -> u64 {
        let row = GROUP as u64 * self.init.streams();
        self.block.div_ceil(row) * row
    }

    pub fn validate(&self) -> Result<()> {
        if self.count == Some(0) {
            return Err(Error::invalid("count", 0, "[1, 2^64 - 1], or no end"));
        }
        if !(1..=BLOCK_MAX).contains(&self.block) {
            return Err(Error::invalid("block", self.block, "[1, 2^28] values"));
        }
        if self.block_values() > BLOCK_MAX {
            return Err(Error::invalid(
                "block",
                self.block,
                format!("[1, 2^28] values after rounding up to whole rows of 4 x {} streams", self.init.streams()),
            ));
        }
        if !(2..=BUFFERS_MAX).contains(&self.buffers) {
            return Err(Error::invalid("buffers", self.buffers, "[2, 64]"));
        }
        let bytes = self.block_values() * 4 * self.kind.words_per_value() as u64 * self.buffers as u64;
        if bytes > MEMORY_MAX {
            return Err(Error::invalid(
                "buffers",
                format!("{} blocks of {} values ({} MiB in all)", self.buffers, self.block_values(), bytes >> 20),
                "at most 8 GiB of buffers in all: fewer buffers or a smaller block",
            ));
        }
        Ok(())
    }
}

/// How a stream produces its blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Producer {
    /// A thread running the backend's filler into recycled host buffers.
    Thread,
    /// The GPU's fill stream and one copy stream per page-locked buffer.
    GpuPipeline,
}

/// Blocks of a fill, in order, produced ahead (see the module's documentation). A lending
/// iterator: [`BlockStream::next_block`] borrows the block until the next call.
pub struct BlockStream {
    wpv: usize,
    produced: Arc<AtomicU64>,
    inner: Inner,
}

enum Inner {
    Thread(ThreadProducer),
    #[cfg(feature = "gpu")]
    Gpu(gpu::Pipeline),
}

impl BlockStream {
    /// Start producing `spec`'s blocks on `exec`. Errors in the spec, and on the GPU errors of
    /// the first launches, come back here; a later failure comes back from the block it hits.
    pub fn open(exec: Arc<dyn Executor>, spec: &StreamSpec) -> Result<Self> {
        spec.validate()?;
        let wpv = spec.kind.words_per_value();
        let produced = Arc::new(AtomicU64::new(0));
        #[cfg(feature = "gpu")]
        if exec.as_gpu().is_some() && !is_pool_fill(spec.kind) {
            let p = gpu::Pipeline::open(exec, spec, produced.clone())?;
            return Ok(BlockStream { wpv, produced, inner: Inner::Gpu(p) });
        }
        let p = ThreadProducer::start(exec, spec, produced.clone());
        Ok(BlockStream { wpv, produced, inner: Inner::Thread(p) })
    }

    /// How this stream produces its blocks.
    pub fn producer(&self) -> Producer {
        match self.inner {
            Inner::Thread(_) => Producer::Thread,
            #[cfg(feature = "gpu")]
            Inner::Gpu(_) => Producer::GpuPipeline,
        }
    }

    /// 32-bit words per value (2 for `f64`).
    pub fn words_per_value(&self) -> usize {
        self.wpv
    }

    /// The count of blocks the producer has started (shared: it can be read after the stream is
    /// dropped, to see that production stopped).
    pub fn produced_counter(&self) -> Arc<AtomicU64> {
        self.produced.clone()
    }

    /// Release the block held and wait for the next: `Ok(false)` at the end of a finite stream.
    pub fn advance(&mut self) -> Result<bool> {
        match &mut self.inner {
            Inner::Thread(p) => p.advance(),
            #[cfg(feature = "gpu")]
            Inner::Gpu(p) => p.advance(),
        }
    }

    /// The block [`BlockStream::advance`] last reached (empty before the first and after the
    /// last): `words_per_value()` words per value.
    pub fn current(&self) -> &[u32] {
        match &self.inner {
            Inner::Thread(p) => p.current(),
            #[cfg(feature = "gpu")]
            Inner::Gpu(p) => p.current(),
        }
    }

    /// The current block's bytes: each word little-endian, as `warpmc generate --format binary`
    /// writes them.
    pub fn current_bytes(&self) -> &[u8] {
        let w = self.current();
        // SAFETY: a `u32` slice is valid as `4 len` initialised bytes (alignment 1); on a
        // little-endian target (checked at compile time above) they are the words' LE bytes.
        unsafe { std::slice::from_raw_parts(w.as_ptr().cast::<u8>(), std::mem::size_of_val(w)) }
    }

    /// The next block, `None` at the end: `while let Some(block) = s.next_block() { ... }`.
    pub fn next_block(&mut self) -> Option<Result<&[u32]>> {
        match self.advance() {
            Ok(true) => Some(Ok(self.current())),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// Hand every block to `f` in order; the first error (the stream's or `f`'s) stops it.
    pub fn for_each_block(mut self, mut f: impl FnMut(&[u32]) -> Result<()>) -> Result<()> {
        while self.advance()? {
            f(self.current())?;
        }
        Ok(())
    }

    /// The stream as a [`Read`] source of its bytes (little-endian words).
    pub fn into_reader(self) -> StreamReader {
        StreamReader { stream: self, pos: 0, done: false }
    }
}

/// Wallace's pool transform: its GPU fill is a pass over pools, not one fill launch, so it is
/// streamed by a thread running its filler.
#[cfg(feature = "gpu")]
fn is_pool_fill(kind: FillKind) -> bool {
    matches!(kind, FillKind::Dist(d) if crate::wallace::is_wallace(&d))
}

/// A stream's bytes as [`Read`]: `io::copy(&mut reader, &mut out)`.
pub struct StreamReader {
    stream: BlockStream,
    pos: usize,
    done: bool,
}

impl StreamReader {
    /// The stream, for its counters.
    pub fn stream(&self) -> &BlockStream {
        &self.stream
    }
}

impl Read for StreamReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            let cur = self.stream.current_bytes();
            if self.pos < cur.len() {
                let n = out.len().min(cur.len() - self.pos);
                out[..n].copy_from_slice(&cur[self.pos..self.pos + n]);
                self.pos += n;
                return Ok(n);
            }
            if self.done || out.is_empty() {
                return Ok(0);
            }
            match self.stream.advance() {
                Ok(true) => self.pos = 0,
                Ok(false) => self.done = true,
                Err(e) => return Err(io::Error::other(e)),
            }
        }
    }
}

/// A finished block from the producer thread: the buffer and how many of its words are the
/// block's.
type Filled = Result<(Vec<u32>, usize)>;

struct ThreadProducer {
    /// `None` once dropped (to unblock the thread).
    full: Option<mpsc::Receiver<Filled>>,
    free: Option<mpsc::Sender<Vec<u32>>>,
    current: Option<(Vec<u32>, usize)>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl ThreadProducer {
    fn start(exec: Arc<dyn Executor>, spec: &StreamSpec, produced: Arc<AtomicU64>) -> Self {
        let (full_tx, full_rx) = mpsc::channel::<Filled>();
        let (free_tx, free_rx) = mpsc::channel::<Vec<u32>>();
        for _ in 0..spec.buffers {
            free_tx.send(Vec::new()).expect("the receiver is alive");
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (kind, init, count, block) = (spec.kind, spec.init.clone(), spec.count, spec.block_values());
        let wpv = kind.words_per_value();
        let thread_stop = stop.clone();
        let handle = std::thread::Builder::new()
            .name("warpmc-stream".into())
            .spawn(move || {
                let mut filler = match exec.filler(kind, &init) {
                    Ok(f) => f,
                    Err(e) => {
                        let _ = full_tx.send(Err(e));
                        return;
                    }
                };
                let mut left = count;
                loop {
                    let n = match left {
                        Some(0) => return,
                        Some(l) => block.min(l),
                        None => block,
                    };
                    // A dropped consumer closes `free`: the thread ends here or at the send.
                    let Ok(mut buf) = free_rx.recv() else { return };
                    if thread_stop.load(AtomicOrdering::Acquire) {
                        return;
                    }
                    let words = n as usize * wpv;
                    if buf.len() < words {
                        buf.resize(block as usize * wpv, 0);
                    }
                    produced.fetch_add(1, AtomicOrdering::AcqRel);
                    if let Err(e) = filler.fill(&mut buf[..words]) {
                        let _ = full_tx.send(Err(e));
                        return;
                    }
                    if full_tx.send(Ok((buf, words))).is_err() {
                        return;
                    }
                    if let Some(l) = &mut left {
                        *l -= n;
                    }
                }
            })
            .expect("spawning the stream's producer thread");
        ThreadProducer { full: Some(full_rx), free: Some(free_tx), current: None, stop, handle: Some(handle) }
    }

    fn advance(&mut self) -> Result<bool> {
        if let Some((buf, _)) = self.current.take()
            && let Some(free) = &self.free
        {
            // The thread may have ended (finite stream): the buffer is then simply dropped.
            let _ = free.send(buf);
        }
        let Some(full) = &self.full else { return Ok(false) };
        match full.recv() {
            Ok(Ok(block)) => {
                self.current = Some(block);
                Ok(true)
            }
            Ok(Err(e)) => {
                self.full = None;
                Err(e)
            }
            Err(mpsc::RecvError) => {
                self.full = None;
                // Every block was handed out, unless the thread panicked.
                match self.handle.take().map(JoinHandle::join) {
                    Some(Err(_)) => Err(Error::io(
                        "the stream's producer thread",
                        io::Error::other("it panicked (a bug: please report it)"),
                    )),
                    _ => Ok(false),
                }
            }
        }
    }

    fn current(&self) -> &[u32] {
        self.current.as_ref().map_or(&[], |(b, n)| &b[..*n])
    }
}

impl Drop for ThreadProducer {
    fn drop(&mut self) {
        self.stop.store(true, AtomicOrdering::Release);
        // Closing both channels wakes the thread wherever it waits; it finishes at most the
        // block it is filling.
        self.free = None;
        self.full = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(feature = "gpu")]
mod gpu {
    use std::collections::VecDeque;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

    use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, PinnedHostSlice};

    use super::StreamSpec;
    use crate::backend::gpu::DeviceStreams;
    use crate::backend::{Executor, FillKind};
    use crate::{Error, Result};

    fn err(what: &'static str) -> impl FnOnce(cudarc::driver::DriverError) -> Error {
        move |e| Error::Gpu(format!("stream {what}: {e:?}"))
    }

    struct Slot {
        dev: CudaSlice<u32>,
        host: PinnedHostSlice<u32>,
        copy: Arc<CudaStream>,
        filled: CudaEvent,
        /// Words of the block now in the slot.
        words: usize,
    }

    pub(super) struct Pipeline {
        /// Keeps the executor (and its context) alive; the GPU executor is `exec.as_gpu()`.
        exec: Arc<dyn Executor>,
        kind: FillKind,
        states: DeviceStreams,
        slots: Vec<Slot>,
        /// Slots launched and not yet handed out, in block order.
        queue: VecDeque<usize>,
        /// The slot the consumer holds, with its host buffer's address and the block's words
        /// (taken once its copy completed, so that `current` does not wait on an event per call).
        current: Option<(usize, *const u32, usize)>,
        block: u64,
        left: Option<u64>,
        produced: Arc<AtomicU64>,
    }

    impl Pipeline {
        pub(super) fn open(exec: Arc<dyn Executor>, spec: &StreamSpec, produced: Arc<AtomicU64>) -> Result<Self> {
            let gpu = exec.as_gpu().expect("a GPU executor");
            let states = gpu.init_states(&spec.init)?;
            let block = spec.block_values();
            let words = block as usize * spec.kind.words_per_value();
            let ctx = gpu.stream().context().clone();
            let mut slots = Vec::with_capacity(spec.buffers);
            for _ in 0..spec.buffers {
                let dev = gpu.stream().alloc_zeros::<u32>(words).map_err(err("device buffer"))?;
                // Page-locked, cached (not write-combined: the host reads these buffers).
                // SAFETY: the buffer is written by a copy before any read: `current` hands out
                // only a slot whose copy's event has completed.
                let host = unsafe { ctx.alloc_pinned_with_flags::<u32>(words, 0) }.map_err(err("pinned buffer"))?;
                let copy = ctx.new_stream().map_err(err("copy stream"))?;
                let filled = ctx.new_event(None).map_err(err("event"))?;
                slots.push(Slot { dev, host, copy, filled, words: 0 });
            }
            let mut p = Pipeline {
                exec,
                kind: spec.kind,
                states,
                slots,
                queue: VecDeque::new(),
                current: None,
                block,
                left: spec.count,
                produced,
            };
            for i in 0..p.slots.len() {
                p.launch(i)?;
            }
            Ok(p)
        }

        /// Queue the next block into slot `i`: its fill on the executor's stream, then its copy
        /// on the slot's stream. Nothing when the stream has no values left.
        fn launch(&mut self, i: usize) -> Result<()> {
            let n = match self.left {
                Some(0) => return Ok(()),
                Some(l) => self.block.min(l),
                None => self.block,
            };
            let gpu = self.exec.as_gpu().expect("a GPU executor");
            let fill = gpu.stream();
            let slot = &mut self.slots[i];
            let words = n as usize * self.kind.words_per_value();
            // The slot's previous copy has finished reading the device buffer (the consumer
            // waited for it); the wait keeps the order explicit.
            fill.join(&slot.copy).map_err(err("wait for the copy"))?;
            gpu.launch_fill(self.kind, &mut slot.dev.slice_mut(..words), n, &mut self.states)?;
            slot.filled.record(fill).map_err(err("record"))?;
            slot.copy.wait(&slot.filled).map_err(err("wait for the fill"))?;
            // The whole buffer (the last block may use less of it): cudarc copies the host
            // slice's length.
            slot.copy.memcpy_dtoh(&slot.dev, &mut slot.host).map_err(err("copy"))?;
            slot.words = words;
            self.queue.push_back(i);
            self.produced.fetch_add(1, AtomicOrdering::AcqRel);
            if let Some(l) = &mut self.left {
                *l -= n;
            }
            Ok(())
        }

        pub(super) fn advance(&mut self) -> Result<bool> {
            if let Some((i, ..)) = self.current.take() {
                self.launch(i)?;
            }
            let Some(i) = self.queue.pop_front() else { return Ok(false) };
            // Waits for the slot's copy (the pinned buffer's event).
            let ptr = self.slots[i].host.as_ptr().map_err(err("wait for a block"))?;
            self.current = Some((i, ptr, self.slots[i].words));
            Ok(true)
        }

        pub(super) fn current(&self) -> &[u32] {
            let Some((_, ptr, words)) = self.current else { return &[] };
            // SAFETY: `ptr` is the slot's page-locked buffer of at least `words` words, whose copy
            // completed in `advance`; nothing writes it again before the next `advance` (which
            // needs `&mut self`, so this borrow has ended), and the buffer lives as long as
            // `self`.
            unsafe { std::slice::from_raw_parts(ptr, words) }
        }
    }

    // SAFETY: the raw pointer in `current` points into a `PinnedHostSlice` the pipeline owns
    // (itself `Send`); the rest of the fields are `Send`.
    unsafe impl Send for Pipeline {}

    impl Drop for Pipeline {
        fn drop(&mut self) {
            // At most `buffers` blocks are queued: let them finish before the buffers go.
            if let Some(gpu) = self.exec.as_gpu() {
                let _ = gpu.stream().synchronize();
            }
            for s in &self.slots {
                let _ = s.copy.synchronize();
            }
        }
    }

}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::backend::cpu::CpuExecutor;
    use crate::distributions::{DistKind, DistSpec, Transform};
    use crate::generate::generate_words;
    use crate::generators::GeneratorKind;
    use crate::pricing::Mode;

    fn cpu(threads: usize) -> Arc<dyn Executor> {
        Arc::new(CpuExecutor::new(Some(threads)).unwrap())
    }

    fn seeded(generator: GeneratorKind, first: u64, count: u64) -> StreamInit {
        StreamInit::Seeded { generator, seed: 7, first, count }
    }

    fn dist(t: Transform) -> FillKind {
        FillKind::Dist(DistSpec { transform: Some(t), ..DistSpec::new(DistKind::Normal) }.with_mode(Mode::Exact).fill())
    }

    fn streamed(exec: &Arc<dyn Executor>, spec: &StreamSpec) -> Vec<u32> {
        let mut s = BlockStream::open(exec.clone(), spec).unwrap();
        let mut out = Vec::new();
        while let Some(b) = s.next_block() {
            out.extend_from_slice(b.unwrap());
        }
        out
    }

    #[test]
    fn streamed_values_equal_the_direct_fill_for_any_block_and_buffers() {
        let cases = [
            (FillKind::Words, seeded(GeneratorKind::Philox4x32x10, 3, 1)),
            (FillKind::Words, seeded(GeneratorKind::WarpShfl, 37, 7)),
            (FillKind::UniformsF64, seeded(GeneratorKind::Mt19937, 0, 3)),
            (FillKind::Normals(Mode::Exact), seeded(GeneratorKind::HybridTaus, 5, 5)),
            (dist(Transform::Polar), seeded(GeneratorKind::LcgPrime, 0, 9)),
            (dist(Transform::Wallace), seeded(GeneratorKind::Philox4x32x10, 0, 4)),
        ];
        let count = 10_007u64;
        for threads in [1, 2] {
            let exec = cpu(threads);
            for (kind, init) in &cases {
                let want = generate_words(exec.as_ref(), *kind, init, count as usize).unwrap();
                for (block, buffers) in [(1, 2), (1000, 3), (4096, 8), (1 << 16, 2)] {
                    let spec = StreamSpec { kind: *kind, init: init.clone(), count: Some(count), block, buffers };
                    let got = streamed(&exec, &spec);
                    assert!(got == want, "{kind:?} {init:?} block {block} buffers {buffers} threads {threads}");
                }
            }
        }
    }

    #[test]
    fn the_reader_gives_the_words_little_endian_bytes_in_any_read_sizes() {
        let exec = cpu(2);
        let init = seeded(GeneratorKind::Xorwow, 0, 3);
        let want: Vec<u8> = generate_words(exec.as_ref(), FillKind::Words, &init, 5003)
            .unwrap()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let spec = StreamSpec { kind: FillKind::Words, init, count: Some(5003), block: 120, buffers: 3 };
        let mut r = BlockStream::open(exec.clone(), &spec).unwrap().into_reader();
        let (mut got, mut chunk) = (Vec::new(), [0u8; 7]);
        loop {
            let n = r.read(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&chunk[..n]);
        }
        assert_eq!(got, want);
        let mut all = Vec::new();
        let spec = StreamSpec { block: 1 << 12, ..spec };
        io::copy(&mut BlockStream::open(exec, &spec).unwrap().into_reader(), &mut all).unwrap();
        assert_eq!(all, want);
    }

    /// The producer's count of started blocks, once it has had time to go on if it were going to.
    fn settled(c: &AtomicU64) -> u64 {
        let a = c.load(AtomicOrdering::Acquire);
        std::thread::sleep(Duration::from_millis(200));
        let b = c.load(AtomicOrdering::Acquire);
        assert_eq!(a, b, "the producer went on after the stream was dropped");
        b
    }

    #[test]
    fn dropping_an_endless_stream_stops_its_producer() {
        let exec = cpu(2);
        let spec = StreamSpec {
            kind: FillKind::Words,
            init: seeded(GeneratorKind::Philox4x32x10, 0, 64),
            count: None,
            block: 1 << 14,
            buffers: 3,
        };
        let mut s = BlockStream::open(exec, &spec).unwrap();
        let counter = s.produced_counter();
        for _ in 0..5 {
            assert!(s.advance().unwrap());
            assert_eq!(s.current().len(), 1 << 14);
        }
        drop(s); // joins the thread
        let n = settled(&counter);
        // Five handed out, at most `buffers` more started ahead.
        assert!((5..=5 + 3).contains(&n), "{n} blocks started");
    }

    #[test]
    fn a_failing_consumer_stops_the_producer_with_its_own_error() {
        let exec = cpu(2);
        let spec = StreamSpec {
            kind: dist(Transform::Polar),
            init: seeded(GeneratorKind::LcgPrime, 0, 16),
            count: None,
            block: 1 << 12,
            buffers: 4,
        };
        let s = BlockStream::open(exec.clone(), &spec).unwrap();
        let counter = s.produced_counter();
        let mut seen = 0;
        let r = s.for_each_block(|_| {
            seen += 1;
            if seen == 3 { Err(Error::invalid("consumer", "block 3", "a test's failure")) } else { Ok(()) }
        });
        assert!(matches!(r, Err(Error::InvalidParameter { field: "consumer", .. })), "{r:?}");
        let n = settled(&counter);
        assert!((3..=3 + 4).contains(&n), "{n} blocks started");
        // A reader's consumer failing the same way (a write error in io::copy).
        struct Fails(usize);
        impl io::Write for Fails {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"));
                }
                self.0 -= 1;
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let s = BlockStream::open(exec, &spec).unwrap();
        let counter = s.produced_counter();
        let mut r = s.into_reader();
        let e = io::copy(&mut r, &mut Fails(10)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
        drop(r);
        let n = settled(&counter);
        assert!(n <= 10 + 4, "{n} blocks started");
    }

    #[test]
    fn the_end_of_a_finite_stream_is_none_and_stays_none() {
        let exec = cpu(1);
        let spec =
            StreamSpec::new(FillKind::Uniforms, seeded(GeneratorKind::Taus88, 0, 2), Some(9)).clone();
        let mut s = BlockStream::open(exec, &spec).unwrap();
        assert_eq!(s.next_block().unwrap().unwrap().len(), 9);
        assert!(s.next_block().is_none());
        assert!(s.next_block().is_none());
        assert!(s.current().is_empty());
    }

    #[test]
    fn bad_specs_are_errors_naming_the_field() {
        let exec = cpu(1);
        let good = StreamSpec::new(FillKind::Words, seeded(GeneratorKind::Philox4x32x10, 0, 1), Some(10));
        for (spec, field, allowed) in [
            (StreamSpec { count: Some(0), ..good.clone() }, "count", "[1, 2^64 - 1]"),
            (StreamSpec { block: 0, ..good.clone() }, "block", "[1, 2^28]"),
            (StreamSpec { block: BLOCK_MAX + 1, ..good.clone() }, "block", "[1, 2^28]"),
            (StreamSpec { buffers: 1, ..good.clone() }, "buffers", "[2, 64]"),
            (StreamSpec { buffers: 65, ..good.clone() }, "buffers", "[2, 64]"),
            (StreamSpec { block: 1 << 28, buffers: 9, ..good.clone() }, "buffers", "at most 8 GiB"),
        ] {
            match BlockStream::open(exec.clone(), &spec) {
                Err(Error::InvalidParameter { field: f, allowed: a, .. }) => {
                    assert_eq!(f, field);
                    assert!(a.contains(allowed), "{a}");
                }
                Err(e) => panic!("{field}: {e}"),
                Ok(_) => panic!("{field}: accepted"),
            }
        }
        // A generator's own refusal (a rejection transform it cannot drive) comes back from the
        // first block, not as a panic.
        let spec = StreamSpec::new(dist(Transform::Polar), seeded(GeneratorKind::Adder, 0, 1), Some(10));
        let mut s = BlockStream::open(exec, &spec).unwrap();
        assert!(matches!(s.next_block(), Some(Err(_))));
    }
}

/// A stream can be moved to another thread (a consumer thread of the caller's).
#[allow(dead_code)]
fn streams_are_send(s: BlockStream) -> impl Send {
    s
}
