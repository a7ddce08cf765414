//! Bulk generation in cuRAND's host-API vocabulary: create a generator, set its seed, offset and
//! ordering, and generate `u32` words, uniform `f32` or uniform `f64` (53 random bits) into host
//! memory on either backend, or into device memory on the GPU.
//!
//! | cuRAND | warpmc |
//! | --- | --- |
//! | `curandCreateGenerator(&g, type)` | [`BulkGenerator::new`]`(exec, generator)` |
//! | `curandSetPseudoRandomGeneratorSeed(g, seed)` | [`BulkGenerator::set_seed`] |
//! | `curandSetGeneratorOffset(g, offset)` | [`BulkGenerator::set_offset`] |
//! | `curandSetGeneratorOrdering(g, ordering)` | [`BulkGenerator::set_ordering`] |
//! | `curandGenerate(g, out, n)` | [`BulkGenerator::generate`] (host) or [`BulkGenerator::generate_device`] (device) with `u32` |
//! | `curandGenerateUniform(g, out, n)` | the same with `f32` |
//! | `curandGenerateUniformDouble(g, out, n)` | the same with `f64` |
//!
//! **Orderings.** [`Ordering::Streams`]`(S)` (the default, with `S = 65536`) is warpmc's layout for
//! every generator: streams `0 .. S` of the seed interleaved in groups of four values, the layout
//! of `warpmc generate --streams S` (value `i` is value `4 (i / 4 / S) + i % 4` of stream
//! `(i / 4) % S`). Successive calls of one kind continue the sequence (split calls equal one
//! call); a call of another kind starts at the next row of `4 S` values, dropping the rest of the
//! row. The offset drops the first `offset` values of the first call's kind.
//!
//! [`Ordering::CurandLegacy`] and [`Ordering::CurandDefault`] are cuRAND's
//! `CURAND_ORDERING_PSEUDO_LEGACY` and `_DEFAULT`, for the generators cuRAND has: `xorwow`,
//! `mrg32k3a-curand` (cuRAND's MRG32k3a) and `philox4x32-10`. The values are cuRAND's, bit for
//! bit, on both backends ([`crate::curand_host`] says how, and what was checked against cuRAND
//! itself), including offsets, successive calls and mixed kinds.
//!
//! ```
//! use warpmc::backend::{self, BackendKind, BackendOptions};
//! use warpmc::bulk::{BulkGenerator, Ordering};
//! use warpmc::generators::GeneratorKind;
//!
//! let exec = backend::open(&BackendOptions { kind: BackendKind::Cpu, ..Default::default() })?;
//! let mut g = BulkGenerator::new(exec.as_ref(), GeneratorKind::Xorwow);
//! g.set_seed(0);
//! g.set_ordering(Ordering::CurandLegacy)?;
//! let mut words = [0u32; 2];
//! g.generate(&mut words)?;
//! assert_eq!(words, [3179217846, 3955638199]); // cuRAND's first two XORWOW words for seed 0
//! # Ok::<(), warpmc::Error>(())
//! ```

use crate::backend::{Executor, FillKind, Filler, StreamInit};
use crate::curand_host::{CurandHost, CurandOrdering, CurandOutput, CurandRng};
use crate::generators::GeneratorKind;
use crate::{Error, Result};

/// How the values of the streams are laid out (`curandSetGeneratorOrdering`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ordering {
    /// warpmc's layout: this many streams interleaved in groups of four values.
    Streams(u64),
    /// cuRAND's `CURAND_ORDERING_PSEUDO_LEGACY` (xorwow, mrg32k3a-curand, philox4x32-10).
    CurandLegacy,
    /// cuRAND's `CURAND_ORDERING_PSEUDO_DEFAULT` (xorwow, mrg32k3a-curand, philox4x32-10).
    CurandDefault,
}

/// The default ordering's stream count: enough threads to fill a large GPU.
pub const DEFAULT_STREAMS: u64 = 1 << 16;

impl Default for Ordering {
    fn default() -> Self {
        Ordering::Streams(DEFAULT_STREAMS)
    }
}

/// What device memory needs of a value (nothing without the `gpu` feature).
#[cfg(feature = "gpu")]
pub trait DeviceValue: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits {}
#[cfg(feature = "gpu")]
impl<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits> DeviceValue for T {}
/// What device memory needs of a value (nothing without the `gpu` feature).
#[cfg(not(feature = "gpu"))]
pub trait DeviceValue {}
#[cfg(not(feature = "gpu"))]
impl<T> DeviceValue for T {}

/// A value bulk generation produces: `u32`, `f32` or `f64`.
pub trait BulkValue: CurandOutput + DeviceValue {
    /// The fill that makes it.
    const KIND: FillKind;
    /// The value from its words (one, or two for `f64`, low word first).
    fn from_words(w: &[u32]) -> Self;
    /// Its words, as [`Self::from_words`] reads them.
    fn push_words(&self, out: &mut Vec<u32>);
}

impl BulkValue for u32 {
    const KIND: FillKind = FillKind::Words;
    fn from_words(w: &[u32]) -> Self {
        w[0]
    }
    fn push_words(&self, out: &mut Vec<u32>) {
        out.push(*self);
    }
}

impl BulkValue for f32 {
    const KIND: FillKind = FillKind::Uniforms;
    fn from_words(w: &[u32]) -> Self {
        f32::from_bits(w[0])
    }
    fn push_words(&self, out: &mut Vec<u32>) {
        out.push(self.to_bits());
    }
}

impl BulkValue for f64 {
    const KIND: FillKind = FillKind::UniformsF64;
    fn from_words(w: &[u32]) -> Self {
        f64::from_bits(u64::from(w[0]) | (u64::from(w[1]) << 32))
    }
    fn push_words(&self, out: &mut Vec<u32>) {
        let b = self.to_bits();
        out.extend([b as u32, (b >> 32) as u32]);
    }
}

/// A bulk generator on one backend (see the module docs).
pub struct BulkGenerator<'e> {
    exec: &'e dyn Executor,
    generator: GeneratorKind,
    seed: u64,
    offset: u64,
    ordering: Ordering,
    engine: Option<Engine<'e>>,
}

enum Engine<'e> {
    Curand(CurandHost),
    Host(Rows<HostRows<'e>>),
    #[cfg(feature = "gpu")]
    Device(Rows<device::DeviceRows<'e>>),
}

impl<'e> BulkGenerator<'e> {
    /// A generator of `generator` on `exec`, seed 0, offset 0, the default ordering
    /// (`curandCreateGenerator`).
    pub fn new(exec: &'e dyn Executor, generator: GeneratorKind) -> Self {
        Self { exec, generator, seed: 0, offset: 0, ordering: Ordering::default(), engine: None }
    }

    /// `curandSetPseudoRandomGeneratorSeed`: restarts the sequence.
    pub fn set_seed(&mut self, seed: u64) {
        self.seed = seed;
        self.engine = None;
    }

    /// `curandSetGeneratorOffset`: the next call starts `offset` values into the sequence
    /// (restarting it).
    pub fn set_offset(&mut self, offset: u64) {
        self.offset = offset;
        self.engine = None;
    }

    /// `curandSetGeneratorOrdering`: restarts the sequence. cuRAND's orderings exist for the
    /// generators cuRAND has; for the others they are an error naming the ones that have them.
    pub fn set_ordering(&mut self, ordering: Ordering) -> Result<()> {
        match ordering {
            Ordering::Streams(s) if !(1..=crate::generate::STREAMS_MAX).contains(&s) => {
                return Err(Error::invalid("streams", s, "[1, 2^26]"));
            }
            Ordering::CurandLegacy | Ordering::CurandDefault if curand_rng(self.generator).is_none() => {
                return Err(Error::invalid(
                    "ordering",
                    format!("{ordering:?} for {}", self.generator),
                    "a cuRAND ordering only for xorwow, mrg32k3a-curand or philox4x32-10 (the generators cuRAND has)",
                ));
            }
            _ => {}
        }
        self.ordering = ordering;
        self.engine = None;
        Ok(())
    }

    /// The generator.
    pub fn generator(&self) -> GeneratorKind {
        self.generator
    }

    /// The ordering.
    pub fn ordering(&self) -> Ordering {
        self.ordering
    }

    fn curand_engine(&self) -> Option<CurandHost> {
        let rng = curand_rng(self.generator)?;
        let ordering = match self.ordering {
            Ordering::CurandLegacy => CurandOrdering::Legacy,
            Ordering::CurandDefault => CurandOrdering::Default,
            Ordering::Streams(_) => return None,
        };
        Some(CurandHost::new(rng, ordering, self.seed, self.offset))
    }

    fn streams(&self) -> u64 {
        match self.ordering {
            Ordering::Streams(s) => s,
            _ => unreachable!("a cuRAND ordering has its own engine"),
        }
    }

    /// The next `out.len()` values into host memory (`curandGenerate`, `...Uniform`,
    /// `...UniformDouble`, by the type of `out`).
    pub fn generate<V: BulkValue>(&mut self, out: &mut [V]) -> Result<()> {
        if self.engine.is_none() {
            self.engine = Some(match self.curand_engine() {
                Some(c) => Engine::Curand(c),
                None => {
                    let init = StreamInit::Seeded {
                        generator: self.generator,
                        seed: self.seed,
                        first: 0,
                        count: self.streams(),
                    };
                    let filler = self.exec.filler(V::KIND, &init)?;
                    Engine::Host(Rows::new(HostRows { filler, row: Vec::new() }, self.streams(), self.offset))
                }
            });
        }
        match self.engine.as_mut().expect("set above") {
            Engine::Curand(c) => match self.exec.kind() {
                #[cfg(feature = "gpu")]
                "gpu" => {
                    let gpu = self.exec.as_gpu().expect("a GPU executor");
                    let mut dev = gpu.stream().alloc_zeros::<V>(out.len()).map_err(gpu_err)?;
                    c.generate_device(gpu, &mut dev.slice_mut(..))?;
                    gpu.stream().memcpy_dtoh(&dev, out).map_err(gpu_err)?;
                    Ok(())
                }
                _ => {
                    c.generate(out);
                    Ok(())
                }
            },
            Engine::Host(rows) => {
                let mut words = vec![0u32; out.len() * V::KIND.words_per_value()];
                rows.take(V::KIND, &mut HostOut(&mut words))?;
                for (o, w) in out.iter_mut().zip(words.chunks_exact(V::KIND.words_per_value())) {
                    *o = V::from_words(w);
                }
                Ok(())
            }
            #[cfg(feature = "gpu")]
            Engine::Device(_) => Err(host_and_device()),
        }
    }

    /// The next `out.len()` values into device memory, on the GPU backend.
    #[cfg(feature = "gpu")]
    pub fn generate_device<V: BulkValue>(&mut self, out: &mut cudarc::driver::CudaSlice<V>) -> Result<()> {
        let gpu = self.exec.as_gpu().ok_or_else(|| {
            Error::GpuUnavailable("generate_device writes device memory: open the GPU backend".into())
        })?;
        if self.engine.is_none() {
            self.engine = Some(match self.curand_engine() {
                Some(c) => Engine::Curand(c),
                None => Engine::Device(Rows::new(
                    device::DeviceRows::new(gpu, self.generator, self.seed, self.streams())?,
                    self.streams(),
                    self.offset,
                )),
            });
        }
        match self.engine.as_mut().expect("set above") {
            Engine::Curand(c) => c.generate_device(gpu, &mut out.slice_mut(..)),
            Engine::Device(rows) => {
                let wpv = V::KIND.words_per_value();
                // SAFETY: `V` is u32, f32 or f64: plain data of `wpv` 32-bit words each.
                let mut words = unsafe { out.transmute_mut::<u32>(out.len() * wpv) }
                    .ok_or_else(|| Error::Gpu("device buffer view".into()))?;
                rows.take(V::KIND, &mut device::DeviceOut(&mut words))
            }
            Engine::Host(_) => Err(host_and_device()),
        }
    }
}

#[cfg(feature = "gpu")]
fn host_and_device() -> Error {
    Error::invalid(
        "ordering",
        "streams",
        "one kind of memory per generator with the streams ordering: this one already wrote to the other \
         (create another generator)",
    )
}

#[cfg(feature = "gpu")]
fn gpu_err(e: cudarc::driver::DriverError) -> Error {
    Error::Gpu(format!("bulk generation: {e:?}"))
}

/// The cuRAND generator a warpmc generator is, if any.
pub fn curand_rng(g: GeneratorKind) -> Option<CurandRng> {
    match g {
        GeneratorKind::Xorwow => Some(CurandRng::Xorwow),
        GeneratorKind::Mrg32k3aCurand => Some(CurandRng::Mrg32k3a),
        GeneratorKind::Philox4x32x10 => Some(CurandRng::Philox4x32_10),
        _ => None,
    }
}

/// Where rows land: a run of 32-bit words (host or device memory).
trait Out {
    /// Words in all.
    fn len(&self) -> usize;
}

/// Fills whole rows of the streams layout of one kind, into an output or into its own row buffer.
trait RowSource<O: Out> {
    /// Fill `values` values (whole rows) of `kind` into `out` at word `at`.
    fn fill_into(&mut self, kind: FillKind, out: &mut O, at: usize, values: usize) -> Result<()>;
    /// Fill one row of `kind` into the row buffer.
    fn fill_row(&mut self, kind: FillKind, values: usize) -> Result<()>;
    /// Copy `words` words of the row buffer from word `from` into `out` at word `at`.
    fn copy_row(&mut self, from: usize, out: &mut O, at: usize, words: usize) -> Result<()>;
}

/// The streams layout served in calls of any size: whole rows go straight to the output, a part
/// row through the row buffer.
struct Rows<S> {
    source: S,
    row_values: usize,
    /// The kind of the row in the buffer, and how many of its values are taken.
    row_kind: Option<FillKind>,
    row_taken: usize,
    /// Values still to drop before the first value handed out (the offset).
    skip: u64,
}

impl<S> Rows<S> {
    fn new(source: S, streams: u64, offset: u64) -> Self {
        Self { source, row_values: 4 * streams as usize, row_kind: None, row_taken: 0, skip: offset }
    }

    fn take<O: Out>(&mut self, kind: FillKind, out: &mut O) -> Result<()>
    where
        S: RowSource<O>,
    {
        let wpv = kind.words_per_value();
        if self.row_kind != Some(kind) {
            // Another kind starts at the next row.
            self.row_kind = None;
        }
        // The offset: whole rows dropped by filling the row buffer, then part of a row.
        while self.skip > 0 {
            self.source.fill_row(kind, self.row_values)?;
            self.row_kind = Some(kind);
            let drop = (self.skip as usize).min(self.row_values);
            self.row_taken = drop;
            self.skip -= drop as u64;
        }
        let total = out.len() / wpv;
        let mut at = 0usize;
        if self.row_kind == Some(kind) {
            let n = (self.row_values - self.row_taken).min(total);
            self.source.copy_row(self.row_taken * wpv, out, 0, n * wpv)?;
            self.row_taken += n;
            at = n;
        }
        let whole = (total - at) / self.row_values * self.row_values;
        if whole > 0 {
            self.source.fill_into(kind, out, at * wpv, whole)?;
            at += whole;
        }
        if at < total {
            self.source.fill_row(kind, self.row_values)?;
            let n = total - at;
            self.source.copy_row(0, out, at * wpv, n * wpv)?;
            self.row_kind = Some(kind);
            self.row_taken = n;
        }
        Ok(())
    }
}

/// Host memory.
struct HostOut<'a>(&'a mut [u32]);

impl Out for HostOut<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }
}

/// A backend's filler (CPU, or the GPU with a copy back) and a host row buffer.
struct HostRows<'e> {
    filler: Box<dyn Filler + 'e>,
    row: Vec<u32>,
}

impl RowSource<HostOut<'_>> for HostRows<'_> {
    fn fill_into(&mut self, kind: FillKind, out: &mut HostOut<'_>, at: usize, values: usize) -> Result<()> {
        self.filler.set_kind(kind);
        self.filler.fill(&mut out.0[at..at + values * kind.words_per_value()])
    }

    fn fill_row(&mut self, kind: FillKind, values: usize) -> Result<()> {
        self.filler.set_kind(kind);
        self.row.resize(values * kind.words_per_value(), 0);
        self.filler.fill(&mut self.row)
    }

    fn copy_row(&mut self, from: usize, out: &mut HostOut<'_>, at: usize, words: usize) -> Result<()> {
        out.0[at..at + words].copy_from_slice(&self.row[from..from + words]);
        Ok(())
    }
}

#[cfg(feature = "gpu")]
mod device {
    use cudarc::driver::{CudaSlice, CudaViewMut};

    use super::*;
    use crate::backend::gpu::{DeviceStreams, GpuExecutor};

    /// Device memory.
    pub struct DeviceOut<'a, 'b>(pub &'a mut CudaViewMut<'b, u32>);

    impl Out for DeviceOut<'_, '_> {
        fn len(&self) -> usize {
            self.0.len()
        }
    }

    /// The GPU's streams and a device row buffer.
    pub struct DeviceRows<'e> {
        gpu: &'e GpuExecutor,
        streams: DeviceStreams,
        row: Option<CudaSlice<u32>>,
    }

    impl<'e> DeviceRows<'e> {
        pub fn new(gpu: &'e GpuExecutor, generator: GeneratorKind, seed: u64, count: u64) -> Result<Self> {
            let init = StreamInit::Seeded { generator, seed, first: 0, count };
            Ok(Self { gpu, streams: gpu.init_states(&init)?, row: None })
        }
    }

    impl RowSource<DeviceOut<'_, '_>> for DeviceRows<'_> {
        fn fill_into(&mut self, kind: FillKind, out: &mut DeviceOut<'_, '_>, at: usize, values: usize) -> Result<()> {
            let wpv = kind.words_per_value();
            let mut view = out.0.slice_mut(at..at + values * wpv);
            self.gpu.launch_fill(kind, &mut view, values as u64, &mut self.streams)
        }

        fn fill_row(&mut self, kind: FillKind, values: usize) -> Result<()> {
            let words = values * kind.words_per_value();
            if self.row.as_ref().is_none_or(|r| r.len() < words) {
                self.row = Some(self.gpu.stream().alloc_zeros::<u32>(words).map_err(gpu_err)?);
            }
            let row = self.row.as_mut().expect("allocated above");
            let mut view = row.slice_mut(..words);
            self.gpu.launch_fill(kind, &mut view, values as u64, &mut self.streams)
        }

        fn copy_row(&mut self, from: usize, out: &mut DeviceOut<'_, '_>, at: usize, words: usize) -> Result<()> {
            let row = self.row.as_ref().expect("a row was filled before it is copied");
            let src = row.slice(from..from + words);
            let mut dst = out.0.slice_mut(at..at + words);
            self.gpu.stream().memcpy_dtod(&src, &mut dst).map_err(gpu_err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::CpuExecutor;
    use crate::generate::generate_words;

    fn words_of<V: BulkValue>(v: &[V]) -> Vec<u32> {
        let mut w = Vec::new();
        v.iter().for_each(|x| x.push_words(&mut w));
        w
    }

    /// The streams ordering is `generate --streams S`'s layout, in calls of any size, with the
    /// offset dropping values.
    #[test]
    fn streams_ordering_in_split_calls() {
        let cpu = CpuExecutor::new(Some(2)).unwrap();
        for g in [GeneratorKind::Philox4x32x10, GeneratorKind::HybridTaus, GeneratorKind::Warp] {
            let s = 5;
            let init = StreamInit::Seeded { generator: g, seed: 9, first: 0, count: s };
            let whole = generate_words(&cpu, FillKind::Words, &init, 1000).unwrap();
            for offset in [0u64, 3, 20, 47] {
                let mut b = BulkGenerator::new(&cpu, g);
                b.set_seed(9);
                b.set_offset(offset);
                b.set_ordering(Ordering::Streams(s)).unwrap();
                let mut got = Vec::new();
                for n in [1usize, 7, 20, 3, 100, 41] {
                    let mut out = vec![0u32; n];
                    b.generate(&mut out).unwrap();
                    got.extend(out);
                }
                let o = offset as usize;
                assert_eq!(got, whole[o..o + got.len()], "{g}, offset {offset}");
            }
            // Doubles: their own layout, two words each.
            let d = generate_words(&cpu, FillKind::UniformsF64, &init, 60).unwrap();
            let mut b = BulkGenerator::new(&cpu, g);
            b.set_seed(9);
            b.set_ordering(Ordering::Streams(s)).unwrap();
            let (mut x, mut y) = (vec![0f64; 13], vec![0f64; 47]);
            b.generate(&mut x).unwrap();
            b.generate(&mut y).unwrap();
            assert_eq!([words_of(&x), words_of(&y)].concat(), d, "{g} f64");
        }
    }

    /// cuRAND orderings through the bulk API are `curand_host`'s; other generators refuse them.
    #[test]
    fn curand_orderings() {
        let cpu = CpuExecutor::new(Some(2)).unwrap();
        let mut b = BulkGenerator::new(&cpu, GeneratorKind::Philox4x32x10);
        b.set_seed(1234);
        b.set_ordering(Ordering::CurandLegacy).unwrap();
        let mut w = [0u32; 8];
        b.generate(&mut w).unwrap();
        assert_eq!(w, [546353992, 3665621163, 1140953199, 3419031310, 3507855656, 1392278645, 3354607383, 253049307]);
        let mut b = BulkGenerator::new(&cpu, GeneratorKind::HybridTaus);
        let e = b.set_ordering(Ordering::CurandLegacy).unwrap_err();
        assert!(e.to_string().contains("xorwow, mrg32k3a-curand or philox4x32-10"), "{e}");
        assert!(b.set_ordering(Ordering::Streams(0)).is_err());
    }
}
