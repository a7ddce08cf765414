//! Distributions as users choose them: a distribution, a transform, a precision, a mode and
//! parameters, validated here, then passed to the kernels as a
//! [`warpmc_kernels::dist::DistParams`] (see that module for what each combination computes).

use warpmc_kernels::dist::{DistParams, kind, transform};

use crate::generators::GeneratorKind;
use crate::pricing::Mode;
use crate::{Error, Result};

/// A distribution of `warpmc generate --distribution` beyond raw words and uniforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DistKind {
    /// Normal with `--mean` and `--sd` (default standard).
    Normal,
    /// `exp(mean + sd N)`.
    Lognormal,
    /// Exponential of rate `--lambda` (default 1).
    Exponential,
    /// Gamma of shape `--shape`, scale 1 (Marsaglia and Tsang).
    Gamma,
    /// Poisson counts of mean `--lambda` (`u32`).
    Poisson,
}

/// How uniforms become the distribution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transform {
    /// Box-Muller: branch-free, two words per pair in f32.
    #[default]
    BoxMuller,
    /// Inversion of the normal CDF (Wichura's AS241), reflected in integer form.
    Inversion,
    /// `u 2^-32` then inversion: kept to show the defects the reflection fixes.
    InversionNaive,
    /// Marsaglia's polar method (rejection).
    Polar,
    /// Marsaglia and Tsang's Ziggurat (rejection).
    Ziggurat,
    /// Wallace's pool method (GPU Gems 3 ch. 37): f32 normals from pools of 2048, one per
    /// stream (normal and lognormal; `crate::wallace`).
    Wallace,
}

impl Transform {
    pub fn name(self) -> &'static str {
        match self {
            Transform::BoxMuller => "box-muller",
            Transform::Inversion => "inversion",
            Transform::InversionNaive => "inversion-naive",
            Transform::Polar => "polar",
            Transform::Ziggurat => "ziggurat",
            Transform::Wallace => "wallace",
        }
    }

    /// The kernels' code ([`transform`]).
    pub fn code(self) -> u32 {
        match self {
            Transform::BoxMuller => transform::BOX_MULLER,
            Transform::Inversion => transform::INVERSION,
            Transform::InversionNaive => transform::INVERSION_NAIVE,
            Transform::Polar => transform::POLAR,
            Transform::Ziggurat => transform::ZIGGURAT,
            Transform::Wallace => transform::WALLACE,
        }
    }
}

impl DistKind {
    pub fn name(self) -> &'static str {
        match self {
            DistKind::Normal => "normal",
            DistKind::Lognormal => "lognormal",
            DistKind::Exponential => "exponential",
            DistKind::Gamma => "gamma",
            DistKind::Poisson => "poisson",
        }
    }

    /// The transforms this distribution takes, the first the default.
    pub fn transforms(self) -> &'static [Transform] {
        use Transform::*;
        match self {
            DistKind::Normal | DistKind::Lognormal => &[BoxMuller, Inversion, InversionNaive, Polar, Ziggurat],
            DistKind::Exponential => &[Inversion, Ziggurat],
            DistKind::Gamma => &[BoxMuller, Ziggurat],
            DistKind::Poisson => &[],
        }
    }
}

/// Largest Poisson mean, 2^31 (`warpmc_kernels::poisson::LAMBDA_MAX`): the counts are `u32`,
/// and at this mean a count of 2^32 or more has a probability below e^-8e8.
pub const LAMBDA_MAX: f64 = warpmc_kernels::poisson::LAMBDA_MAX;
/// Largest gamma shape: `d = shape - 1/3` and its products stay exact enough in `f32`.
pub const SHAPE_MAX: f64 = 1.0e9;

/// Floating-point precision of the values.
pub use crate::generate::Precision;

/// A distribution with its transform, precision, mode and parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistSpec {
    pub kind: DistKind,
    /// `None`: the distribution's default.
    pub transform: Option<Transform>,
    pub precision: Precision,
    pub mode: Mode,
    pub mean: f64,
    pub sd: f64,
    pub shape: Option<f64>,
    pub lambda: Option<f64>,
    /// Thomas's warp pre-caching for a rejection transform (`--pre-cache`: polar normals and
    /// gamma): each lane of a warp of 32 streams keeps a candidate accepted while the warp
    /// waited for its slowest lane ([`warpmc_kernels::dist::WarpSampler`]).
    pub pre_cache: bool,
}

impl DistSpec {
    /// The standard form of `kind` with its default transform, in `f32` exact mode.
    pub fn new(kind: DistKind) -> Self {
        Self {
            kind,
            transform: None,
            precision: Precision::F32,
            mode: Mode::Exact,
            mean: 0.0,
            sd: 1.0,
            shape: None,
            lambda: None,
            pre_cache: false,
        }
    }

    pub fn with_transform(mut self, t: Transform) -> Self {
        self.transform = Some(t);
        self
    }

    pub fn with_precision(mut self, p: Precision) -> Self {
        self.precision = p;
        self
    }

    pub fn with_mode(mut self, m: Mode) -> Self {
        self.mode = m;
        self
    }

    pub fn with_pre_cache(mut self, on: bool) -> Self {
        self.pre_cache = on;
        self
    }

    /// Whether this distribution and transform have a pre-cached form: polar normals (and
    /// log-normals) and gamma.
    pub fn can_pre_cache(&self) -> bool {
        match self.kind {
            DistKind::Normal | DistKind::Lognormal => self.transform() == Some(Transform::Polar),
            DistKind::Gamma => true,
            _ => false,
        }
    }

    /// The transform that runs (the default where none was given; none for Poisson).
    pub fn transform(&self) -> Option<Transform> {
        self.transform.or(self.kind.transforms().first().copied())
    }

    /// Check every field; the error names the flag and its range.
    pub fn validate(&self) -> Result<()> {
        let allowed = self.kind.transforms();
        // Wallace's pools are not a per-stream sampler: outside `transforms()` (which the sweeps
        // of every sampler iterate), allowed for the normal and the log-normal.
        let pool = matches!(self.kind, DistKind::Normal | DistKind::Lognormal);
        if let Some(t) = self.transform
            && !allowed.contains(&t)
            && !(t == Transform::Wallace && pool)
        {
            let list = if allowed.is_empty() {
                "none (poisson has its own methods)".to_string()
            } else {
                let mut names: Vec<_> = allowed.iter().map(|t| t.name()).collect();
                if pool {
                    names.push(Transform::Wallace.name());
                }
                names.join(", ")
            };
            return Err(Error::invalid("transform", t.name(), format!("for {}: {list}", self.kind.name())));
        }
        let finite = |flag: &'static str, v: f64| -> Result<()> {
            if v.is_finite() { Ok(()) } else { Err(Error::invalid(flag, v, "a finite number")) }
        };
        match self.kind {
            DistKind::Normal | DistKind::Lognormal => {
                finite("mean", self.mean)?;
                if !(self.sd > 0.0 && self.sd.is_finite()) {
                    return Err(Error::invalid("sd", self.sd, "(0, inf): a positive finite number"));
                }
            }
            DistKind::Exponential => {
                let l = self.lambda.unwrap_or(1.0);
                if !(l > 0.0 && l.is_finite()) {
                    return Err(Error::invalid("lambda", l, "(0, inf): the exponential's rate"));
                }
            }
            DistKind::Gamma => {
                let k =
                    self.shape.ok_or_else(|| Error::invalid("shape", "missing", "a shape in (0, 1e9] for gamma"))?;
                if !(k > 0.0 && k <= SHAPE_MAX) {
                    return Err(Error::invalid("shape", k, format!("(0, {SHAPE_MAX:e}]")));
                }
            }
            DistKind::Poisson => {
                let l = self
                    .lambda
                    .ok_or_else(|| Error::invalid("lambda", "missing", "a mean in [0, 2^31] for poisson"))?;
                if !(0.0..=LAMBDA_MAX).contains(&l) {
                    return Err(Error::invalid("lambda", l, "[0, 2^31]"));
                }
            }
        }
        if !matches!(self.kind, DistKind::Normal | DistKind::Lognormal) && (self.mean != 0.0 || self.sd != 1.0) {
            return Err(Error::invalid(
                "mean",
                self.mean,
                format!("--mean and --sd apply to normal and lognormal, not {}", self.kind.name()),
            ));
        }
        if self.shape.is_some() && self.kind != DistKind::Gamma {
            return Err(Error::invalid(
                "shape",
                self.shape.unwrap(),
                format!("--shape applies to gamma, not {}", self.kind.name()),
            ));
        }
        if self.pre_cache && !self.can_pre_cache() {
            return Err(Error::invalid(
                "pre-cache",
                format!("{} {}", self.kind.name(), self.transform().map_or("", Transform::name)),
                "normal or lognormal with --transform polar, or gamma: the rejection methods with a pre-cached form",
            ));
        }
        if self.transform == Some(Transform::Wallace) && self.precision != Precision::F32 {
            return Err(Error::invalid(
                "precision",
                "f64",
                "f32 for --transform wallace (an f32 pool method: f64 pools are not provided)",
            ));
        }
        if self.lambda.is_some() && !matches!(self.kind, DistKind::Exponential | DistKind::Poisson) {
            return Err(Error::invalid(
                "lambda",
                self.lambda.unwrap(),
                format!("--lambda applies to exponential and poisson, not {}", self.kind.name()),
            ));
        }
        Ok(())
    }

    /// Whether every value takes the same number of words (no rejection).
    pub fn fixed_words(&self) -> bool {
        match self.kind {
            DistKind::Gamma | DistKind::Poisson => false,
            _ => !matches!(self.transform(), Some(Transform::Polar | Transform::Ziggurat)),
        }
    }

    /// Check that `generator` can drive this distribution. Every transform runs on every
    /// generator (a collective generator's lanes run a rejection method through word buffers:
    /// `warpmc_kernels::buffered`), but pre-caching, whose lanes are 32 consecutive streams of
    /// the fill, does not combine with a collective generator's own warps.
    pub fn check_generator(&self, generator: GeneratorKind) -> Result<()> {
        if generator == GeneratorKind::Adder && !self.fixed_words() {
            return Err(Error::invalid("generator", generator.to_string(), ADDER_REJECTION));
        }
        if generator.lanes() > 1 && self.pre_cache {
            return Err(Error::invalid(
                "pre_cache",
                "on",
                format!(
                    "off with {generator}: its 32 lanes share one state and already run a rejection method in \
                     lockstep rounds through per-lane word buffers; pre-caching is for generators whose streams \
                     draw one word at a time"
                ),
            ));
        }
        Ok(())
    }

    /// 32-bit words per value in a filled buffer.
    pub fn words_per_value(&self) -> usize {
        if self.kind != DistKind::Poisson && self.precision == Precision::F64 { 2 } else { 1 }
    }

    /// The fill's run-time description (validate first).
    pub fn fill(&self) -> DistFill {
        let (k, a, b) = match self.kind {
            DistKind::Normal => (kind::NORMAL, self.mean, self.sd),
            DistKind::Lognormal => (kind::LOGNORMAL, self.mean, self.sd),
            DistKind::Exponential => (kind::EXPONENTIAL, self.lambda.unwrap_or(1.0), 0.0),
            DistKind::Gamma => (kind::GAMMA, self.shape.unwrap_or(1.0), 0.0),
            DistKind::Poisson => (kind::POISSON, self.lambda.unwrap_or(0.0), 0.0),
        };
        DistFill {
            kind: k,
            transform: self.transform().map_or(0, Transform::code)
                | if self.pre_cache { transform::PRE_CACHE } else { 0 },
            a: a.to_bits(),
            b: b.to_bits(),
            precision: if self.kind == DistKind::Poisson { Precision::F32 } else { self.precision },
            // f64 has one mode (exact), and Poisson computes in f64.
            mode: if self.kind == DistKind::Poisson || self.precision == Precision::F64 {
                Mode::Exact
            } else {
                self.mode
            },
            fixed_words: self.fixed_words(),
        }
    }
}

/// Why the `adder` counter does not drive a rejection method (distribution fills and the
/// Asian basket say the same).
pub const ADDER_REJECTION: &str = "a generator other than adder for a transform that rejects: adder is a \
    counter (the benchmark's speed control, not random), and a rejection method on consecutive integers can \
    reject for up to 2^31 words in a row (polar: every pair with |u| > 0.71)";

/// A distribution fill as the backends take it ([`crate::backend::FillKind::Dist`]): the
/// kernel's parameters, with the precision and mode that choose the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistFill {
    pub kind: u32,
    pub transform: u32,
    /// `DistParams::a` and `b` as bits (so that the fill kind is `Eq`).
    pub a: u64,
    pub b: u64,
    pub precision: Precision,
    pub mode: Mode,
    pub fixed_words: bool,
}

/// Every distribution, transform and precision in both modes (`f64` once: it has one mode),
/// with sample parameters: what the benchmark measures and the tests sweep.
pub fn every_spec() -> Vec<DistSpec> {
    let mut out = Vec::new();
    for kind in [DistKind::Normal, DistKind::Lognormal, DistKind::Exponential, DistKind::Gamma, DistKind::Poisson] {
        let transforms: Vec<Option<Transform>> =
            if kind == DistKind::Poisson { vec![None] } else { kind.transforms().iter().map(|&t| Some(t)).collect() };
        for t in transforms {
            for (precision, mode) in
                [(Precision::F32, Mode::Exact), (Precision::F32, Mode::Fast), (Precision::F64, Mode::Exact)]
            {
                if kind == DistKind::Poisson && (precision, mode) != (Precision::F32, Mode::Exact) {
                    continue; // counts: computed in f64, one mode
                }
                let mut d = DistSpec::new(kind).with_precision(precision).with_mode(mode);
                d.transform = t;
                match kind {
                    DistKind::Normal | DistKind::Lognormal => {}
                    DistKind::Exponential => d.lambda = Some(1.0),
                    DistKind::Gamma => d.shape = Some(2.0),
                    DistKind::Poisson => d.lambda = Some(100.0),
                }
                out.push(d);
                if d.can_pre_cache() {
                    out.push(d.with_pre_cache(true));
                }
            }
        }
    }
    out
}

impl DistFill {
    /// `"normal ziggurat f32 exact"`, `"poisson 100"` and the like.
    pub fn describe(&self) -> String {
        let dist = match self.kind {
            kind::NORMAL => "normal",
            kind::LOGNORMAL => "lognormal",
            kind::EXPONENTIAL => "exponential",
            kind::GAMMA => "gamma",
            _ => "poisson",
        };
        let a = f64::from_bits(self.a);
        if self.is_counts() {
            return format!("poisson (mean {a})");
        }
        let t = [
            Transform::BoxMuller,
            Transform::Inversion,
            Transform::InversionNaive,
            Transform::Polar,
            Transform::Ziggurat,
            Transform::Wallace,
        ]
        .into_iter()
        .find(|t| t.code() == self.transform & !transform::PRE_CACHE)
        .map_or("?", Transform::name);
        let cached = if self.transform & transform::PRE_CACHE != 0 { " pre-cached" } else { "" };
        let p = if self.precision == Precision::F64 { "f64" } else { "f32" };
        let m = if self.mode == Mode::Fast { "fast" } else { "exact" };
        let shape = if self.kind == kind::GAMMA { format!(" (shape {a})") } else { String::new() };
        format!("{dist}{shape} {t}{cached} {p} {m}")
    }

    pub fn params(&self) -> DistParams {
        DistParams { kind: self.kind, transform: self.transform, a: f64::from_bits(self.a), b: f64::from_bits(self.b) }
    }

    pub const fn is_counts(&self) -> bool {
        self.kind == kind::POISSON
    }

    pub const fn words_per_value(&self) -> usize {
        if !self.is_counts() && matches!(self.precision, Precision::F64) { 2 } else { 1 }
    }
}
