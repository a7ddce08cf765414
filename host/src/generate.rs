//! `warpmc generate`: a generator's output, as text or raw binary, on any backend.
//!
//! The values are those of [`warpmc_kernels::fill`]'s layout: with one stream (the default)
//! simply that stream; with `streams = S`, groups of four values of streams `first .. first+S`
//! interleaved. The same spec gives the same values on the CPU and the GPU.

use std::io::Write;
use std::sync::Arc;

use warpmc_kernels::fill::GROUP;

use crate::backend::{Executor, FillKind, StreamInit};
use crate::bulk::{BulkGenerator, BulkValue, Ordering};
use crate::curand_host::CurandOrdering;
use crate::distributions::{DistFill, DistKind, DistSpec, Transform};
use crate::generators::GeneratorKind;
use crate::pricing::Mode;
use crate::stream::{BlockStream, StreamSpec};
use crate::{Error, Result};

/// What to output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Distribution {
    /// Raw 32-bit words.
    U32,
    /// `f32` in (0, 1]: `z * 2^-32 + 2^-33`.
    Uniform,
    /// Normal values (`--transform`, `--mean`, `--sd`; `--mode` picks exact or fast math).
    Normal,
    /// Log-normal: `exp(mean + sd N)`.
    Lognormal,
    /// Exponential of rate `--lambda` (default 1).
    Exponential,
    /// Gamma of shape `--shape`, scale 1.
    Gamma,
    /// Poisson counts (`u32`) of mean `--lambda`.
    Poisson,
}

impl Distribution {
    /// The distribution of [`crate::distributions`] (`None` for words and uniforms).
    pub fn dist_kind(self) -> Option<DistKind> {
        match self {
            Distribution::U32 | Distribution::Uniform => None,
            Distribution::Normal => Some(DistKind::Normal),
            Distribution::Lognormal => Some(DistKind::Lognormal),
            Distribution::Exponential => Some(DistKind::Exponential),
            Distribution::Gamma => Some(DistKind::Gamma),
            Distribution::Poisson => Some(DistKind::Poisson),
        }
    }
}

/// cuRAND's host-API layout for `generate` (`--ordering curand-legacy|curand-default`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CurandLayout {
    pub ordering: CurandOrdering,
    /// `curandSetGeneratorOffset`.
    pub offset: u64,
}

/// Floating-point precision of uniforms and distributions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// `f32`: one word per value.
    #[default]
    F32,
    /// `f64` with 53 random bits: two consecutive words of a stream per value.
    F64,
}

/// Output encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One value per line: decimal words, floats in the shortest form that reads back exactly.
    Text,
    /// Little-endian values (4 bytes, 8 for `f64`), no separators (for `dieharder -g 200`
    /// and the like).
    Binary,
}

/// Largest number of interleaved streams.
pub const STREAMS_MAX: u64 = 1 << 26;
/// Largest count of values in one call.
pub const COUNT_MAX: u64 = 1 << 50;

/// A generate job. The generator is the one `init` names.
#[derive(Clone, Debug)]
pub struct GenerateSpec {
    pub distribution: Distribution,
    /// The transform, mean, sd, shape and lambda of a distribution (`dist.kind` is ignored:
    /// `distribution` names it).
    pub dist: DistSpec,
    /// `None`: warpmc's layout of `init`'s streams. `Some`: cuRAND's host-API layout of a
    /// cuRAND generator (`init` must then be seeded streams starting at stream 0).
    pub curand: Option<CurandLayout>,
    /// `f64` is available for uniforms.
    pub precision: Precision,
    pub mode: Mode,
    /// Values to write, in [1, 2^50]; `None`: without end (until the reader closes the pipe).
    pub count: Option<u64>,
    pub init: StreamInit,
    pub format: Format,
    /// Values per block of the stream ([`crate::stream::StreamSpec::block`]).
    pub block: u64,
    /// Buffers of the stream ([`crate::stream::StreamSpec::buffers`]).
    pub buffers: usize,
}

impl GenerateSpec {
    /// Streams `first .. first + streams` of `seed`.
    pub fn seeded(generator: GeneratorKind, seed: u64, first: u64, streams: u64) -> StreamInit {
        StreamInit::Seeded { generator, seed, first, count: streams }
    }

    /// One stream from a raw state (`--state`, the definition's word order), rejected with an
    /// error naming the constraint if the generator cannot run from it.
    pub fn explicit(generator: GeneratorKind, words: &[u32]) -> Result<StreamInit> {
        let n = generator.raw_state_words();
        if words.len() != n {
            return Err(Error::invalid(
                "state",
                words.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
                format!("exactly {n} words for {generator} ({})", generator.raw_state()),
            ));
        }
        generator.check_raw_state(words)?;
        Ok(StreamInit::Explicit { generator, words: words.to_vec() })
    }

    pub fn validate(&self) -> Result<()> {
        if self.precision == Precision::F64 && self.distribution == Distribution::U32 {
            return Err(Error::invalid("precision", "f64", "f32 for --distribution u32 (words have no precision)"));
        }
        match self.dist_spec() {
            Some(d) => {
                d.validate()?;
                d.check_generator(self.init.generator())?;
            }
            None => {
                let d = &self.dist;
                if d.transform.is_some() || d.mean != 0.0 || d.sd != 1.0 || d.shape.is_some() || d.lambda.is_some() {
                    return Err(Error::invalid(
                        "distribution",
                        format!("{:?}", self.distribution).to_lowercase(),
                        "normal, lognormal, exponential, gamma or poisson with --transform, --mean, --sd, --shape or --lambda",
                    ));
                }
            }
        }
        if let Some(c) = &self.curand {
            let generator = self.init.generator();
            if crate::bulk::curand_rng(generator).is_none() {
                return Err(Error::invalid(
                    "ordering",
                    format!("{:?} for {generator}", c.ordering),
                    "streams, or a cuRAND ordering with xorwow, mrg32k3a-curand or philox4x32-10 (the generators \
                     cuRAND has)",
                ));
            }
            if self.dist_spec().is_some() {
                return Err(Error::invalid(
                    "ordering",
                    "a cuRAND ordering with a distribution",
                    "streams for distributions (cuRAND's own transforms are not reproduced)",
                ));
            }
            if !matches!(self.init, StreamInit::Seeded { first: 0, count: 1, .. }) {
                return Err(Error::invalid(
                    "ordering",
                    "a cuRAND ordering with --stream, --streams or --state",
                    "streams for those (cuRAND's layout fixes its own subsequences)",
                ));
            }
        }
        if let Some(count) = self.count
            && !(1..=COUNT_MAX).contains(&count)
        {
            return Err(Error::invalid("count", count, "[1, 2^50], or inf"));
        }
        if let &StreamInit::Seeded { first, count, .. } = &self.init {
            if !(1..=STREAMS_MAX).contains(&count) {
                return Err(Error::invalid("streams", count, "[1, 2^26]"));
            }
            if first.checked_add(count).is_none() {
                return Err(Error::invalid("stream", first, format!("[0, 2^64 - {count}]")));
            }
        }
        Ok(())
    }

    /// The distribution with its parameters, precision and mode (`None` for words and
    /// uniforms).
    pub fn dist_spec(&self) -> Option<DistSpec> {
        let kind = self.distribution.dist_kind()?;
        Some(DistSpec { kind, precision: self.precision, mode: self.mode, ..self.dist })
    }

    /// What the fill produces. Standard normal `f32` by Box-Muller is the foundation's fill
    /// (the same values as the general one, by a kernel tuned for it).
    pub fn kind(&self) -> FillKind {
        match (self.distribution, self.precision) {
            (Distribution::U32, _) => FillKind::Words,
            (Distribution::Uniform, Precision::F32) => FillKind::Uniforms,
            (Distribution::Uniform, Precision::F64) => FillKind::UniformsF64,
            _ => {
                let d = self.dist_spec().expect("a distribution");
                let standard_box_muller = d.kind == DistKind::Normal
                    && d.transform() == Some(Transform::BoxMuller)
                    && d.precision == Precision::F32
                    && d.mean == 0.0
                    && d.sd == 1.0;
                if standard_box_muller { FillKind::Normals(self.mode) } else { FillKind::Dist(d.fill()) }
            }
        }
    }
}

/// Values per block: a whole number of rows of the interleaved layout, about 4 Mi values.
fn block_len(streams: u64) -> u64 {
    let row = GROUP as u64 * streams;
    (1u64 << 22).div_ceil(row) * row
}

/// Produce the spec's values on `exec`, one block at a time, in order (`f` gets each block's
/// words, `kind.words_per_value()` per value): warpmc's layout through a [`BlockStream`], which
/// produces the next blocks while `f` consumes one; cuRAND's layout through the bulk generator.
fn for_each_spec_block(
    exec: &Arc<dyn Executor>,
    spec: &GenerateSpec,
    mut f: impl FnMut(&[u32], &[u8]) -> Result<()>,
) -> Result<()> {
    match spec.curand {
        None => {
            let s = StreamSpec {
                kind: spec.kind(),
                init: spec.init.clone(),
                count: spec.count,
                block: spec.block,
                buffers: spec.buffers,
            };
            let mut stream = BlockStream::open(exec.clone(), &s)?;
            while stream.advance()? {
                f(stream.current(), stream.current_bytes())?;
            }
            Ok(())
        }
        Some(c) => {
            let mut g = BulkGenerator::new(exec.as_ref(), spec.init.generator());
            if let StreamInit::Seeded { seed, .. } = spec.init {
                g.set_seed(seed);
            }
            g.set_offset(c.offset);
            g.set_ordering(match c.ordering {
                CurandOrdering::Legacy => Ordering::CurandLegacy,
                CurandOrdering::Default => Ordering::CurandDefault,
            })?;
            // Without end: 2^64 values, more than any reader takes.
            let count = spec.count.unwrap_or(u64::MAX);
            let mut bytes = Vec::new();
            let mut each = |words: &[u32]| {
                bytes.clear();
                bytes.extend(words.iter().flat_map(|w| w.to_le_bytes()));
                f(words, &bytes)
            };
            match spec.kind() {
                FillKind::Words => bulk_blocks::<u32>(&mut g, count, &mut each),
                FillKind::Uniforms => bulk_blocks::<f32>(&mut g, count, &mut each),
                FillKind::UniformsF64 => bulk_blocks::<f64>(&mut g, count, &mut each),
                FillKind::Normals(_) | FillKind::Dist(_) => {
                    unreachable!("validate refuses distributions with a cuRAND ordering")
                }
            }
        }
    }
}

/// `count` values of `V` from a bulk generator, in blocks of about 4 Mi values.
fn bulk_blocks<V: BulkValue>(
    g: &mut BulkGenerator<'_>,
    count: u64,
    mut f: impl FnMut(&[u32]) -> Result<()>,
) -> Result<()> {
    let block = (1u64 << 22).min(count) as usize;
    let mut values = vec![V::default(); block];
    let mut words = Vec::with_capacity(block * V::KIND.words_per_value());
    let mut left = count;
    while left > 0 {
        let n = (block as u64).min(left) as usize;
        g.generate(&mut values[..n])?;
        words.clear();
        values[..n].iter().for_each(|v| v.push_words(&mut words));
        f(&words)?;
        left -= n as u64;
    }
    Ok(())
}

/// Produce `count` values of `kind` from `init` on `exec`, one block at a time (`f` gets each
/// block's words, `kind.words_per_value()` per value).
fn for_each_block(
    exec: &dyn Executor,
    kind: FillKind,
    init: &StreamInit,
    count: u64,
    mut f: impl FnMut(&[u32]) -> Result<()>,
) -> Result<()> {
    let mut filler = exec.filler(kind, init)?;
    let block = block_len(init.streams());
    let wpv = kind.words_per_value();
    let mut buf = vec![0u32; block.min(count) as usize * wpv];
    let mut left = count;
    while left > 0 {
        let n = block.min(left) as usize * wpv;
        filler.fill(&mut buf[..n])?;
        f(&buf[..n])?;
        left -= (n / wpv) as u64;
    }
    Ok(())
}

/// What [`generate`]'s I/O errors say it was doing (the caller knows the destination's name).
const WRITING: &str = "cannot write the generated values";

/// Generate the spec's values on `exec` into `out`, the backend producing the next blocks while
/// one is written (see [`crate::stream`]); `progress` is told the values written so far after
/// each block.
pub fn generate(
    exec: &Arc<dyn Executor>,
    spec: &GenerateSpec,
    out: &mut dyn Write,
    mut progress: impl FnMut(u64),
) -> Result<()> {
    spec.validate()?;
    let mut text = String::new();
    let (wpv, mut written) = (spec.kind().words_per_value() as u64, 0u64);
    for_each_spec_block(exec, spec, |words, bytes| {
        match spec.format {
            Format::Binary => out.write_all(bytes).map_err(|e| Error::io(WRITING, e))?,
            Format::Text => {
                use std::fmt::Write as _;
                text.clear();
                match spec.kind() {
                    FillKind::Words => words.iter().try_for_each(|w| writeln!(text, "{w}")),
                    FillKind::Dist(d) if d.is_counts() => words.iter().try_for_each(|w| writeln!(text, "{w}")),
                    FillKind::UniformsF64 | FillKind::Dist(DistFill { precision: Precision::F64, .. }) => {
                        words.chunks_exact(2).try_for_each(|p| {
                            writeln!(text, "{}", f64::from_bits(u64::from(p[0]) | (u64::from(p[1]) << 32)))
                        })
                    }
                    _ => words.iter().try_for_each(|&w| writeln!(text, "{}", f32::from_bits(w))),
                }
                .expect("writing to a String");
                out.write_all(text.as_bytes()).map_err(|e| Error::io(WRITING, e))?;
            }
        }
        written += words.len() as u64 / wpv;
        progress(written);
        Ok(())
    })?;
    out.flush().map_err(|e| Error::io(WRITING, e))?;
    Ok(())
}

/// The first `count` values of `kind` from `init`, in memory, as 32-bit words
/// (`kind.words_per_value()` per value): for tests and embedding.
pub fn generate_words(exec: &dyn Executor, kind: FillKind, init: &StreamInit, count: usize) -> Result<Vec<u32>> {
    let mut out = Vec::with_capacity(count * kind.words_per_value());
    for_each_block(exec, kind, init, count as u64, |words| {
        out.extend_from_slice(words);
        Ok(())
    })?;
    Ok(out)
}
