//! cuRAND's HOST API on the CPU: what `curandGenerate`, `curandGenerateUniform` and
//! `curandGenerateUniformDouble` write for `CURAND_RNG_PSEUDO_XORWOW`, `CURAND_RNG_PSEUDO_MRG32K3A`
//! and `CURAND_RNG_PSEUDO_PHILOX4_32_10` with `CURAND_ORDERING_PSEUDO_LEGACY` (and
//! `CURAND_ORDERING_PSEUDO_DEFAULT`), a seed and an offset, rebuilt from the device-API generators
//! of [`warpmc_kernels::rng`] ([`Xorwow`], [`Mrg32k3aCurand`], [`Philox4x32x10`], whose
//! `stream(seed, k)` is cuRAND's `curand_init(seed, k, 0)`).
//!
//! # The layout
//!
//! The host API interleaves `T` device-API subsequences ("lanes") in groups of `W` values: value
//! `m` of the host sequence (counted from 0, before any offset) comes from lane `(m / W) % T`,
//! i.e. from `curand_init(seed, (m / W) % T, 0)`, in that lane's group number `r = m / W / T`
//! (its round), as the group's value `j = m % W`:
//!
//! | generator | `T` (legacy) | `T` (default) | `W` | 32-bit words per value: u32, f32, f64 |
//! | --- | --- | --- | --- | --- |
//! | XORWOW | 4096 | 4096 | 1 | 1, 1, 2 |
//! | MRG32k3a | 4096 | 81920 | 1 | 1, 1, 1 (f32 and f64: one step, from `z`) |
//! | Philox4x32-10 | 65536 | 65536 | 4 | 1, 1, 2 |
//!
//! A value of `k` words takes `k` consecutive words of its lane: value `j` of a group that starts
//! at word `s` of the lane is made of words `s + j k .. s + j k + k` (a group of four Philox
//! doubles is thus two whole Philox blocks).
//!
//! # Offsets and successive calls
//!
//! Where each group starts is counted per lane, group by group:
//!
//! - the offset `O` (`curandSetGeneratorOffset`) is a number of values of the host sequence:
//!   output starts at value `O`. A lane's groups that lie wholly before `O` take one word per
//!   value (`W` words each), whatever kind of value is generated later;
//! - each later group takes `W k` words, `k` the words per value of the generation call that
//!   completes it (a group split between two calls counts as the second call's kind);
//! - a call continues at the value where the last call stopped, and the lanes where they stopped.
//!
//! For calls that all take one word per value (every u32 and f32 call, and every MRG32k3a call)
//! this is simply: output `i` of a fresh generator is value `O + i` of the host sequence, which is
//! word `r W + j` of its lane; split calls equal one call. It matters for doubles of XORWOW and
//! Philox, and for mixed calls: e.g. XORWOW doubles with offset 77 take words `1, 2` (not `2, 3`)
//! of lanes `0..77` in their first round, because those lanes each had one value (one word) below
//! the offset. [`CurandLegacy`] keeps the history of its calls (runs of equal words per value).
//! The rule is a description of what cuRAND does (found on a GPU, below), consistent with cuRAND
//! keeping one generator state (XORWOW) or one block counter (Philox) per lane that each call
//! moves on; cuRAND's documentation states only the value-index part.
//!
//! # Conversions
//!
//! - `curandGenerate`: the device API's `curand()` words: XORWOW's and Philox's 32-bit outputs, and
//!   for MRG32k3a `trunc(fl(z * MRG32K3A_BITS_NORM))` ([`Mrg32k3aCurand`]'s word, not uniform).
//! - `curandGenerateUniform` (f32): XORWOW and Philox `x * 2^-32 + 2^-33` in float arithmetic
//!   (`_curand_uniform` of `curand_uniform.h`: `x` rounded to float, an exact scaling, one rounded
//!   addition; in `(0, 1]`, large `x` round to 1.0); MRG32k3a `(float)(z * MRG32K3A_NORM)` from the
//!   combined value `z` in `[1, m1]` as a double (`curand_uniform(curandStateMRG32k3a_t *)`), not
//!   from the 32-bit word.
//! - `curandGenerateUniformDouble`: XORWOW and Philox `_curand_uniform_double_hq(x, y) =
//!   (x ^ (y << 21)) * 2^-53 + 2^-54` from two consecutive words `x`, `y` of one subsequence
//!   (53 random bits); MRG32k3a `z * MRG32K3A_NORM` in double (32 bits' worth, as the device API's
//!   `curand_uniform_double`).
//! - `MRG32K3A_NORM` is `2.3283065498378288e-10 = fl(1 / m1)` in the CUDA 13.0 header (older
//!   headers have `2.328306549295728e-10 = fl(1 / (m1 + 1))`, RngStreams' `norm`); cuRAND 10.4.0's
//!   host API uses `fl(1 / m1)` (its f32 and f64 outputs match it bit for bit, below).
//!
//! # Sources
//!
//! - cuRAND documentation, "Host API Overview", sections "Order" and "Generation Functions"
//!   (docs.nvidia.com/cuda/curand/host-api-overview.html, as stored in a public copy of the page):
//!   XORWOW legacy "result at offset n in global memory is from position
//!   `(n mod 4096)·2^67 + ⌊n/4096⌋` in the original XORWOW sequence", DEFAULT = BEST = LEGACY for
//!   XORWOW; MRG32k3a legacy `(n mod 4096)·2^76 + ⌊n/4096⌋`, DEFAULT = BEST
//!   `(n mod 81920)·2^76 + ⌊n/81920⌋`; Philox legacy "In host API there are 65536 different
//!   sequences. Each four values from one sequence are followed by four values from next
//!   sequence", DEFAULT = BEST = LEGACY; "For pseudorandom generators, multiple calls to
//!   generation functions will yield the same result as a single call with a large size";
//!   "Offset": "If offset = 100, the first random number generated will be the 100th in the
//!   sequence".
//! - NVIDIA's cuRANDDx examples (github.com/NVIDIA/CUDALibrarySamples, MathDx/cuRANDDx, which
//!   compare their output with the host API's): `xorwow_init_and_generate_thread_api.cu` seeds
//!   thread `t` with `curand_init(seed, (offset + t) % 4096, (offset + t) / 4096)` against
//!   `curandSetGeneratorOffset(offset)` (the offset shifts the whole interleaved sequence);
//!   `philox_random_bits_thread_api.cu` does the same per 4-word block with 65536 subsequences and
//!   a host offset of `4 * offset`; `mrg_two_distributions_thread_api.cu` matches
//!   `curandGenerateUniformDouble` with the device API's `curand_uniform_double` (`z * NORM`, one
//!   step per double) and notes that cuRAND uses one 32-bit value per MRG32k3a double.
//! - cuRAND's `curand_uniform.h` and `curand_kernel.h` (public copies of the CUDA headers): the
//!   conversions above and `CURAND_2POW32_INV = 2.3283064e-10f` (exactly 2^-32 as a float).
//! - An NVIDIA forum thread ("XORWOW Generator Understanding in CURAND", 2016) quotes the first ten
//!   `curandGenerate` words of XORWOW for seed 0: the first word of subsequences 0..9, pinned in
//!   the tests.
//! - rocRAND is *not* a source: its "cuRAND compatibility" page lists XORWOW, MRG32K3A and Philox
//!   as not producing cuRAND's sequences, and its XORWOW legacy ordering uses 131072 generators.
//!
//! # What was verified, and what was not
//!
//! Verified on an H100 against cuRAND 10.4.0 (CUDA 13.0), with `xtask/src/curand_host_check.cu`,
//! while this module was written (98 dumps, every value compared bit for bit, all identical):
//! for each generator, `(seed, offset, count)` = `(0, 0, 100000)`, `(1234, 0, 100000)`,
//! `(1234, 77, 100000)`, `(42, 5, 12295)`: `curandGenerate` with the legacy and the default
//! ordering, `curandGenerateUniform` and `curandGenerateUniformDouble` with the legacy ordering;
//! `(1234, 77)` as two calls (5 + 99995 and 4097 + 95903) for u32, f32 and f64; doubles with
//! offsets 10000, 4101 and 262147 (`(99, 262147)` for u32 too, 300000 values: past Philox's first
//! round of 262144); mixed calls (u32 then f64, f64 then u32, f32 then f64, with offsets 0 and
//! 77); and for Philox, doubles with offsets 5, 9 and 262165 over 600000 to 800000 values, a
//! split f64 call across a round, and u32/f64 mixes split inside a group of round 1.
//! Earlier evidence agrees: the forum's ten XORWOW words (an older cuRAND) are the tests' pins.
//!
//! Not verified: other cuRAND versions (the legacy layout is documented as fixed across releases;
//! the MRG32k3a norm changed once in the headers, see above, and a library built with the old one
//! would differ in f32/f64 low bits); more than two calls in a row and other mixes (the rule
//! above predicts them); offsets and positions near 2^64 (arithmetic here is in `u128`, lane
//! positions must stay below 2^64 words); MRG32k3a lanes `>= 2^51` (never used: `T <= 81920`);
//! the CPU generator of `curandCreateGeneratorHost` (documented to give the same sequence); the
//! default ordering for f32/f64 (only u32 was compared; the layout is the same); and the normal,
//! log-normal and Poisson functions (not implemented: cuRAND pairs values there).

use rayon::prelude::*;
use warpmc_kernels::rng::mrg32k3a_curand::Mrg32k3aCurand;
use warpmc_kernels::rng::{Philox4x32x10, Xorwow};

/// One of the three cuRAND pseudorandom generators this module reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CurandRng {
    /// `CURAND_RNG_PSEUDO_XORWOW` (cuRAND's default generator).
    Xorwow,
    /// `CURAND_RNG_PSEUDO_MRG32K3A`.
    Mrg32k3a,
    /// `CURAND_RNG_PSEUDO_PHILOX4_32_10`.
    Philox4x32_10,
}

impl CurandRng {
    /// All three, in the order above.
    pub const ALL: [CurandRng; 3] = [CurandRng::Xorwow, CurandRng::Mrg32k3a, CurandRng::Philox4x32_10];

    /// The name on the command line: `xorwow`, `mrg32k3a`, `philox4x32-10`.
    pub const fn name(self) -> &'static str {
        match self {
            CurandRng::Xorwow => "xorwow",
            CurandRng::Mrg32k3a => "mrg32k3a",
            CurandRng::Philox4x32_10 => "philox4x32-10",
        }
    }

    /// The generator of a [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.name() == name)
    }

    /// How many device-API subsequences the host API interleaves (`T` in the module docs).
    pub const fn subsequences(self, ordering: CurandOrdering) -> u64 {
        match (self, ordering) {
            (CurandRng::Xorwow, _) => 4096,
            (CurandRng::Mrg32k3a, CurandOrdering::Legacy) => 4096,
            (CurandRng::Mrg32k3a, CurandOrdering::Default) => 81920,
            (CurandRng::Philox4x32_10, _) => 65536,
        }
    }

    /// How many consecutive values of the host sequence come from one subsequence before the
    /// next subsequence's turn (`W` in the module docs).
    pub const fn group(self) -> u64 {
        match self {
            CurandRng::Philox4x32_10 => 4,
            CurandRng::Xorwow | CurandRng::Mrg32k3a => 1,
        }
    }

    /// What starting a lane somewhere costs (`stream` then `skip`), in words of the generator
    /// (`CurandGenerator::INIT_WORDS`): the GPU cuts a lane into fewer pieces where it is large.
    pub fn lane_init_words(self) -> u64 {
        with_curand_rng!(self, G => G::INIT_WORDS)
    }

    /// Words of a subsequence one value of `V` takes (the table of the module docs).
    pub fn words_per_value<V: CurandOutput>(self) -> u64 {
        with_curand_rng!(self, G => V::words::<G>())
    }
}

impl core::fmt::Display for CurandRng {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// cuRAND's pseudorandom orderings (`curandSetGeneratorOrdering`) that this module reproduces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CurandOrdering {
    /// `CURAND_ORDERING_PSEUDO_LEGACY`, documented as fixed across cuRAND releases.
    #[default]
    Legacy,
    /// `CURAND_ORDERING_PSEUDO_DEFAULT` (cuRAND's default), documented as equal to
    /// `CURAND_ORDERING_PSEUDO_BEST` "in the current release": the legacy layout for XORWOW and
    /// Philox, 81920 subsequences instead of 4096 for MRG32k3a. Not promised to stay.
    Default,
}

pub use warpmc_kernels::curand::MRG32K3A_NORM;
use warpmc_kernels::curand::{
    CurandCall, CurandGenerator, CurandValue, INLINE_STARTS, InlineStarts, inline_start, lane_chunk,
};

/// `curandGenerateUniformDouble`'s double from two consecutive words (XORWOW, Philox):
/// `(x ^ (y << 21)) * 2^-53 + 2^-54`, the same conversion as warpmc's own `f64` uniforms.
pub use warpmc_kernels::convert::u32_pair_to_unit_f64 as uniform_f64;
/// `curandGenerateUniform`'s float from a 32-bit word (XORWOW, Philox): `x * 2^-32 + 2^-33`, the
/// same conversion as warpmc's own `f32` uniforms.
pub use warpmc_kernels::convert::u32_to_unit_open_closed as uniform_f32;

/// Values the host API generates: `u32` (`curandGenerate`), `f32` (`curandGenerateUniform`) and
/// `f64` (`curandGenerateUniformDouble`).
pub trait CurandOutput: CurandValue + Copy + Default + Send + Sync + 'static {
    /// The suffix of its GPU kernels (`curand_host_<name>__<generator>`).
    const NAME: &'static str;
}
impl CurandOutput for u32 {
    const NAME: &'static str = "u32";
}
impl CurandOutput for f32 {
    const NAME: &'static str = "f32";
}
impl CurandOutput for f64 {
    const NAME: &'static str = "f64";
}

/// What the first generation call of a fresh host generator (`rng`, `ordering`, `seed`,
/// `offset`) writes into `out`. Parallel over subsequences.
pub fn generate<V: CurandOutput>(rng: CurandRng, ordering: CurandOrdering, seed: u64, offset: u64, out: &mut [V]) {
    CurandHost::new(rng, ordering, seed, offset).generate(out);
}

/// What `curandGenerate` writes in the first call of a fresh generator with this seed and
/// offset and `CURAND_ORDERING_PSEUDO_LEGACY`.
pub fn legacy_u32(rng: CurandRng, seed: u64, offset: u64, out: &mut [u32]) {
    generate(rng, CurandOrdering::Legacy, seed, offset, out);
}

/// What `curandGenerateUniform` writes in the first call of a fresh generator with this seed and
/// offset and `CURAND_ORDERING_PSEUDO_LEGACY`.
pub fn legacy_uniform_f32(rng: CurandRng, seed: u64, offset: u64, out: &mut [f32]) {
    generate(rng, CurandOrdering::Legacy, seed, offset, out);
}

/// What `curandGenerateUniformDouble` writes in the first call of a fresh generator with this
/// seed and offset and `CURAND_ORDERING_PSEUDO_LEGACY`.
pub fn legacy_uniform_f64(rng: CurandRng, seed: u64, offset: u64, out: &mut [f64]) {
    generate(rng, CurandOrdering::Legacy, seed, offset, out);
}

/// A cuRAND host generator over successive generation calls: each call continues where the last
/// one stopped, as cuRAND's do (split calls equal one call; u32, f32 and f64 calls may be mixed,
/// see the module docs). The values of a call are computed from the seed, the offset and the
/// history of calls, so the same generator can write to host memory on the CPU or to device
/// memory on the GPU ([`CurandHost::generate_device`]), with the same values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CurandHost {
    rng: CurandRng,
    ordering: CurandOrdering,
    seed: u64,
    offset: u64,
    /// The values written so far, as runs `(end, words per value)`: run `i` covers positions
    /// `history[i - 1].0..history[i].0` (from 0) of the host sequence after the offset.
    history: Vec<(u64, u64)>,
}

/// The name the first versions of this module used for [`CurandHost`] with the legacy ordering.
pub type CurandLegacy = CurandHost;

/// One call's layout: the values of the host sequence it covers, and where each lane's first
/// group of the call starts in the lane's subsequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallLayout {
    pub call: CurandCall,
    /// Where each lane's first group of the call starts.
    pub starts: LaneStarts,
}

/// Where each lane's first group of a call starts (a word of its subsequence), as a step
/// function of the lane: a few `(first lane, start)` steps rather than one word per lane.
///
/// Lane `l`'s start is a sum over the boundaries `b` of the history (the offset, and the end of
/// each run of calls with equal words per value) of a coefficient times the number of `l`'s
/// groups wholly before `b`, which is `q_b + [l < r_b]` with `q_b` and `r_b` the quotient and the
/// remainder of `b`'s group by `T`. So the start is a constant plus a step down at each `r_b`:
/// at most two steps more than the runs of the history, whatever `T` is. Computing it takes a
/// division per boundary, not two per lane and boundary as a per-lane table did (65536 lanes of
/// Philox: about a millisecond per call, more than cuRAND's whole call of 2^28 values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneStarts {
    /// `(first lane, start)`, by increasing first lane, the first one at lane 0; a step's start
    /// differs from the one before.
    steps: Vec<(u64, u64)>,
}

impl LaneStarts {
    /// The steps `(first lane, start word)`: lane `l` starts at the start of the last step whose
    /// first lane is at most `l`.
    pub fn steps(&self) -> &[(u64, u64)] {
        &self.steps
    }

    /// Lane `lane`'s start word.
    pub fn get(&self, lane: u64) -> u64 {
        let i = self.steps.partition_point(|&(from, _)| from <= lane);
        self.steps[i.max(1) - 1].1
    }

    /// The kernels' by-value table (`warpmc_kernels::curand::InlineStarts`), where the steps fit.
    pub fn inline(&self) -> Option<InlineStarts> {
        if self.steps.len() > INLINE_STARTS {
            return None;
        }
        let mut t = [u64::MAX; 2 * INLINE_STARTS];
        for (i, &(from, start)) in self.steps.iter().enumerate() {
            t[i] = from;
            t[INLINE_STARTS + i] = start;
        }
        Some(t)
    }

    /// One start per lane, for `lanes` lanes (for histories with too many steps to pass by
    /// value).
    pub fn per_lane(&self, lanes: u64) -> Vec<u64> {
        let mut out = Vec::with_capacity(lanes as usize);
        for (i, &(from, start)) in self.steps.iter().enumerate() {
            let to = self.steps.get(i + 1).map_or(lanes, |s| s.0).min(lanes);
            out.extend((from.min(to)..to).map(|_| start));
        }
        out
    }
}

impl CurandHost {
    /// A fresh generator: `curandCreateGenerator`, `curandSetPseudoRandomGeneratorSeed(seed)`,
    /// `curandSetGeneratorOffset(offset)`, `curandSetGeneratorOrdering(ordering)`.
    pub const fn new(rng: CurandRng, ordering: CurandOrdering, seed: u64, offset: u64) -> Self {
        Self { rng, ordering, seed, offset, history: Vec::new() }
    }

    /// The generator type.
    pub const fn rng(&self) -> CurandRng {
        self.rng
    }

    /// The ordering.
    pub const fn ordering(&self) -> CurandOrdering {
        self.ordering
    }

    /// The seed.
    pub const fn seed(&self) -> u64 {
        self.seed
    }

    /// The offset.
    pub const fn offset(&self) -> u64 {
        self.offset
    }

    /// How many values the generation calls have written so far.
    pub fn position(&self) -> u64 {
        self.history.last().map_or(0, |&(end, _)| end)
    }

    /// The layout of the next call of `n` values of `V` (nothing is recorded).
    ///
    /// # Panics
    /// Past 2^64 values of the host sequence or 2^64 words of a subsequence
    /// ([`Self::try_layout`] says so as an error).
    pub fn layout<V: CurandOutput>(&self, n: u64) -> CallLayout {
        self.try_layout::<V>(n).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The layout of the next call of `n` values of `V` (nothing is recorded), or an error past
    /// 2^64 values of the host sequence or 2^64 words of a subsequence.
    pub fn try_layout<V: CurandOutput>(&self, n: u64) -> crate::Result<CallLayout> {
        let t = self.rng.subsequences(self.ordering);
        let w = self.rng.group();
        let too_far = |what: &str| crate::Error::OutOfRange(format!("cuRAND host layout: more than 2^64 {what}"));
        let first = self.offset.checked_add(self.position()).ok_or_else(|| too_far("values generated"))?;
        let end = first.checked_add(n).ok_or_else(|| too_far("values generated"))?;
        let starts = lane_starts(t, w, self.offset, &self.history).ok_or_else(|| too_far("words of a subsequence"))?;
        Ok(CallLayout { call: CurandCall { seed: self.seed, first, end, lanes: t, group: w }, starts })
    }

    /// Record a call of `n` values of `V`.
    fn record<V: CurandOutput>(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        let end = self.position().checked_add(n).expect("more than 2^64 values generated");
        let words = with_curand_rng!(self.rng, G => V::words::<G>());
        match self.history.last_mut() {
            Some(last) if last.1 == words => last.0 = end,
            _ => self.history.push((end, words)),
        }
    }

    /// The next `out.len()` values into host memory, on the CPU: `curandGenerate` (u32),
    /// `curandGenerateUniform` (f32), `curandGenerateUniformDouble` (f64).
    pub fn generate<V: CurandOutput>(&mut self, out: &mut [V]) {
        if out.is_empty() {
            return;
        }
        let layout = self.layout::<V>(out.len() as u64);
        with_curand_rng!(self.rng, G => fill_cpu::<G, V>(&layout, out));
        self.record::<V>(out.len() as u64);
    }

    /// `curandGenerate(gen, out, out.len())`.
    pub fn generate_u32(&mut self, out: &mut [u32]) {
        self.generate(out);
    }

    /// `curandGenerateUniform(gen, out, out.len())`.
    pub fn generate_uniform_f32(&mut self, out: &mut [f32]) {
        self.generate(out);
    }

    /// `curandGenerateUniformDouble(gen, out, out.len())`.
    pub fn generate_uniform_f64(&mut self, out: &mut [f64]) {
        self.generate(out);
    }

    /// The next `out.len()` values into device memory, on the GPU: the same values as
    /// [`Self::generate`] and as cuRAND's host API.
    #[cfg(feature = "gpu")]
    pub fn generate_device<V: CurandOutput + cudarc::driver::DeviceRepr>(
        &mut self,
        gpu: &crate::backend::gpu::GpuExecutor,
        out: &mut cudarc::driver::CudaViewMut<'_, V>,
    ) -> crate::Result<()> {
        let n = out.len() as u64;
        if n == 0 {
            return Ok(());
        }
        let layout = self.try_layout::<V>(n)?;
        gpu.curand_host(self.rng, &layout, out)?;
        self.record::<V>(n);
        Ok(())
    }
}

/// Evaluate `$body` with `$G` the kernel crate's type of cuRAND generator `$rng`.
macro_rules! with_curand_rng {
    ($rng:expr, $G:ident => $body:expr) => {
        match $rng {
            CurandRng::Xorwow => {
                type $G = Xorwow;
                $body
            }
            CurandRng::Mrg32k3a => {
                type $G = Mrg32k3aCurand;
                $body
            }
            CurandRng::Philox4x32_10 => {
                type $G = Philox4x32x10;
                $body
            }
        }
    };
}
use with_curand_rng;

/// A pointer the lanes write through in parallel, each to its own values.
#[derive(Clone, Copy)]
struct SharedOut<V>(*mut V);
// SAFETY: only used by `fill_cpu`, where every index is written by exactly one lane.
unsafe impl<V> Send for SharedOut<V> {}
// SAFETY: as above.
unsafe impl<V> Sync for SharedOut<V> {}

impl<V> SharedOut<V> {
    /// Write `v` at index `i` (a method, so that closures capture the whole `SharedOut`, which
    /// is `Send` and `Sync`, not its raw pointer).
    ///
    /// # Safety
    /// `i` is in bounds of the buffer, and no other thread writes or reads it meanwhile.
    unsafe fn write(self, i: u64, v: V) {
        // SAFETY: by the contract.
        unsafe { self.0.add(i as usize).write(v) }
    }
}

/// The CPU executor of a call: every lane in parallel runs the kernel crate's [`lane_chunk`]
/// over all its rounds (the GPU splits them further), writing its values where the layout puts
/// them. The lanes' starts are looked up as on the GPU: by [`inline_start`] where the steps fit,
/// else from a table of one word per lane.
fn fill_cpu<G: CurandGenerator, V: CurandValue>(layout: &CallLayout, out: &mut [V]) {
    let call = &layout.call;
    assert_eq!(out.len() as u64, call.end - call.first);
    assert_eq!(call.group, G::GROUP, "the layout's group is the generator's");
    let inline = layout.starts.inline();
    let table = if inline.is_none() { layout.starts.per_lane(call.lanes) } else { Vec::new() };
    let start = |lane: u64| match &inline {
        Some(s) => inline_start(s, lane),
        None => table[lane as usize],
    };
    let ptr = SharedOut(out.as_mut_ptr());
    let lane_values = |lane: u64| {
        if let Some((r0, r1)) = call.rounds(lane) {
            // SAFETY: `lane_chunk` passes the index `m - first` of each value `m` of this lane's
            // groups inside `first..end` (`whole`: a group's first one, its `W` values inside
            // too), each value belonging to one group of one lane: every index below `out.len()`
            // is written by exactly one lane, once.
            lane_chunk::<G, V>(
                call,
                lane,
                r0,
                start(lane),
                r0,
                r1,
                |i, g| {
                    for (j, v) in g.into_iter().take(G::GROUP as usize).enumerate() {
                        unsafe { ptr.write(i + j as u64, v) }
                    }
                },
                |i, v| unsafe { ptr.write(i, v) },
            );
        }
    };
    if out.len() < 1 << 14 {
        (0..call.lanes).for_each(lane_values);
    } else {
        (0..call.lanes).into_par_iter().for_each(lane_values);
    }
}

/// Where the lanes' first groups of the next call start (module docs, "Offsets and successive
/// calls"), for `t` lanes in groups of `w`, `offset` and `history` (runs `(end, words per
/// value)`): each of a lane's groups wholly before the offset took one word per value, each group
/// completed by an earlier call took that call's words per value for each of its values. `None`
/// where a start is at 2^64 words or more.
///
/// With the boundaries `b_0 = offset`, `b_i = offset + end_i` and `G_l(b)` lane `l`'s groups
/// wholly before `b`, the start is `w G_l(b_0) + sum_i w k_i (G_l(b_i) - G_l(b_(i-1)))`, i.e.
/// `sum_i c_i G_l(b_i)` with `c_0 = w (1 - k_1)`, `c_i = w (k_i - k_(i+1))`, `c_R = w k_R`
/// (`c_0 = w` for an empty history); and `G_l(b) = q + [l < r]` for `b / w = q t + r` (see
/// [`LaneStarts`]).
fn lane_starts(t: u64, w: u64, offset: u64, history: &[(u64, u64)]) -> Option<LaneStarts> {
    let (t, w) = (u128::from(t.max(1)), i128::from(w.max(1)));
    let offset = u128::from(offset);
    let words = |i: usize| history.get(i).map_or(0, |&(_, k)| i128::from(k));
    let mut terms = Vec::with_capacity(history.len() + 1);
    terms.push((offset, w * (1 - words(0))));
    for (i, &(end, k)) in history.iter().enumerate() {
        terms.push((offset + u128::from(end), w * (i128::from(k) - words(i + 1))));
    }
    if history.is_empty() {
        terms[0].1 = w;
    }
    // start(l) = base + the sum of the c_i with l < r_i.
    let mut base = 0i128;
    let mut downs: Vec<(u64, i128)> = Vec::with_capacity(terms.len());
    for (b, c) in terms {
        let g = b / w as u128;
        let (q, r) = (g / t, g % t);
        base += c * q as i128;
        if r > 0 && c != 0 {
            base += c;
            downs.push((r as u64, c));
        }
    }
    downs.sort_unstable_by_key(|d| d.0);
    let to_u64 = |x: i128| u64::try_from(x).ok();
    let mut steps = vec![(0, to_u64(base)?)];
    let mut value = base;
    for (i, &(r, c)) in downs.iter().enumerate() {
        value -= c;
        let last_at_r = downs.get(i + 1).is_none_or(|d| d.0 != r);
        if last_at_r && to_u64(value)? != steps.last().expect("one step at least").1 {
            steps.push((r, to_u64(value)?));
        }
    }
    Some(LaneStarts { steps })
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpmc_kernels::rng::{Generator, Skip, Uniform32};

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Kind {
        U32,
        F32,
        F64,
    }

    const KINDS: [Kind; 3] = [Kind::U32, Kind::F32, Kind::F64];

    /// One lane's device-API generator, whichever it is.
    #[derive(Clone)]
    enum Any {
        X(Xorwow),
        M(Mrg32k3aCurand),
        P(Philox4x32x10),
    }

    impl Any {
        /// `curand_init(seed, lane, 0)` advanced by `words` words.
        fn at(rng: CurandRng, seed: u64, lane: u64, words: u64) -> Self {
            let mut g = match rng {
                CurandRng::Xorwow => Any::X(Xorwow::stream(seed, lane)),
                CurandRng::Mrg32k3a => Any::M(Mrg32k3aCurand::stream(seed, lane)),
                CurandRng::Philox4x32_10 => Any::P(Philox4x32x10::stream(seed, lane)),
            };
            match &mut g {
                Any::X(x) => x.skip(words),
                Any::M(m) => m.skip(words),
                Any::P(p) => p.skip(words),
            }
            g
        }

        fn word(&mut self) -> u32 {
            match self {
                Any::X(x) => x.next_u32(),
                Any::M(m) => m.next_u32(),
                Any::P(p) => p.next_u32(),
            }
        }

        /// A value's bits (u32, f32 bits or f64 bits), by the conversions of the module docs.
        fn value(&mut self, kind: Kind) -> u64 {
            match (self, kind) {
                (g, Kind::U32) => u64::from(g.word()),
                (Any::M(m), Kind::F32) => u64::from(((f64::from(m.step_z()) * MRG32K3A_NORM) as f32).to_bits()),
                (Any::M(m), Kind::F64) => (f64::from(m.step_z()) * MRG32K3A_NORM).to_bits(),
                (g, Kind::F32) => u64::from(uniform_f32(g.word()).to_bits()),
                (g, Kind::F64) => {
                    let x = g.word();
                    let y = g.word();
                    uniform_f64(x, y).to_bits()
                }
            }
        }
    }

    /// The start rule per lane, as the first versions of this module computed it (one lane at a
    /// time, two divisions per lane and boundary): the reference of [`lane_starts`].
    fn group_start(t: u64, w: u64, offset: u64, history: &[(u64, u64)], lane: u64) -> u128 {
        let (t, w, lane) = (u128::from(t), u128::from(w), u128::from(lane));
        let groups_before = |x: u128| {
            let groups = x / w;
            groups / t + u128::from(lane < groups % t)
        };
        let offset = u128::from(offset);
        let mut words = groups_before(offset) * w;
        let mut start = offset;
        for &(end, run_words) in history {
            let end = offset + u128::from(end);
            words += (groups_before(end) - groups_before(start)) * w * u128::from(run_words);
            start = end;
        }
        words
    }

    /// The step function equals the per-lane rule, for every lane, over random histories and
    /// offsets (up to 2^63, and past 2^64 words, where it must refuse).
    #[test]
    fn lane_starts_equal_the_per_lane_rule() {
        let mut r = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |m: u64| {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            r % m
        };
        for case in 0..400 {
            let (t, w) = [(7, 1), (5, 4), (4096, 1), (64, 4), (1, 1), (3, 4)][case % 6];
            let offset = match case % 5 {
                0 => 0,
                1 => next(100),
                2 => next(1 << 20),
                3 => next(1 << 62),
                _ => u64::MAX - next(1000),
            };
            let mut history = Vec::new();
            let mut end = 0u64;
            for _ in 0..next(12) {
                end += 1 + if next(3) == 0 { next(1 << 40) } else { next(3 * t * w) };
                let k = 1 + next(2);
                match history.last_mut() {
                    Some((e, kk)) if *kk == k => *e = end,
                    _ => history.push((end, k)),
                }
            }
            let starts = lane_starts(t, w, offset, &history);
            let want: Vec<u128> = (0..t).map(|l| group_start(t, w, offset, &history, l)).collect();
            match starts {
                Some(s) => {
                    assert_eq!(s.per_lane(t).len() as u64, t);
                    assert!(s.steps().len() <= history.len() + 2, "{:?}", s.steps());
                    for l in 0..t {
                        assert_eq!(u128::from(s.get(l)), want[l as usize], "case {case} lane {l}");
                        assert_eq!(u128::from(s.per_lane(t)[l as usize]), want[l as usize]);
                        if let Some(inline) = s.inline() {
                            assert_eq!(u128::from(inline_start(&inline, l)), want[l as usize]);
                        }
                    }
                }
                None => assert!(want.iter().any(|&x| x > u128::from(u64::MAX)), "case {case}: refused"),
            }
        }
    }

    fn words_per_value(rng: CurandRng, kind: Kind) -> u64 {
        match (rng, kind) {
            (CurandRng::Xorwow | CurandRng::Philox4x32_10, Kind::F64) => 2,
            _ => 1,
        }
    }

    /// A lane of the reference: its generator, the word that generator is at, and the start word
    /// and round of the lane's current group.
    struct RefLane {
        g: Any,
        at: u64,
        start: u64,
        round: u64,
    }

    /// The module docs' rule, literally, one value at a time in the order of the host sequence:
    /// the bits of what `calls` (kind, count) write on a fresh generator.
    fn reference(rng: CurandRng, t: u64, seed: u64, offset: u64, calls: &[(Kind, usize)]) -> Vec<u64> {
        let w = rng.group();
        let mut lanes: Vec<Option<RefLane>> = (0..t).map(|_| None).collect();
        let mut out = Vec::new();
        let mut m = offset;
        for &(kind, n) in calls {
            let k = words_per_value(rng, kind);
            for _ in 0..n {
                let (group, j) = (m / w, m % w);
                let (lane, round) = (group % t, group / t);
                let l = lanes[lane as usize].get_or_insert_with(|| {
                    // Groups of this lane wholly before the offset: g < offset / w, g = lane mod t.
                    let full = offset / w;
                    let before = if full > lane { (full - lane).div_ceil(t) } else { 0 };
                    RefLane {
                        g: Any::at(rng, seed, lane, before * w),
                        at: before * w,
                        start: before * w,
                        round: before,
                    }
                });
                assert_eq!(l.round, round, "lane {lane} out of step");
                let word = l.start + j * k;
                if word < l.at {
                    l.g = Any::at(rng, seed, lane, word);
                } else {
                    match &mut l.g {
                        Any::X(x) => x.skip(word - l.at),
                        Any::M(g) => g.skip(word - l.at),
                        Any::P(p) => p.skip(word - l.at),
                    }
                }
                out.push(l.g.value(kind));
                l.at = word + k;
                if j == w - 1 {
                    l.start += w * k;
                    l.round += 1;
                }
                m += 1;
            }
        }
        out
    }

    /// What a `CurandLegacy` writes for `calls`, as bits.
    fn run(rng: CurandRng, seed: u64, offset: u64, calls: &[(Kind, usize)]) -> Vec<u64> {
        let mut g = CurandLegacy::new(rng, CurandOrdering::Legacy, seed, offset);
        let mut out = Vec::new();
        for &(kind, n) in calls {
            match kind {
                Kind::U32 => {
                    let mut v = vec![0u32; n];
                    g.generate_u32(&mut v);
                    out.extend(v.into_iter().map(u64::from));
                }
                Kind::F32 => {
                    let mut v = vec![0f32; n];
                    g.generate_uniform_f32(&mut v);
                    out.extend(v.into_iter().map(|x| u64::from(x.to_bits())));
                }
                Kind::F64 => {
                    let mut v = vec![0f64; n];
                    g.generate_uniform_f64(&mut v);
                    out.extend(v.into_iter().map(f64::to_bits));
                }
            }
        }
        assert_eq!(g.position(), calls.iter().map(|c| c.1 as u64).sum::<u64>());
        out
    }

    fn legacy(rng: CurandRng) -> u64 {
        rng.subsequences(CurandOrdering::Legacy)
    }

    /// Value `n` of the legacy u32 output is word `(n / W / T) W + n % W` of subsequence
    /// `(n / W) % T`, checked through the generators directly, across two whole rounds.
    #[test]
    fn layout_is_interleaved_subsequences() {
        for rng in CurandRng::ALL {
            let (t, w) = (legacy(rng), rng.group());
            let n = (2 * t * w + 9) as usize;
            let mut out = vec![0u32; n];
            legacy_u32(rng, 1234, 0, &mut out);
            let mut r = 0x9E37_79B9_7F4A_7C15u64;
            let picks = (0..3000).map(|_| {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                r % n as u64
            });
            for i in (0..64).chain(n as u64 - 64..n as u64).chain([t * w - 1, t * w, t * w + 1]).chain(picks) {
                let (group, j) = (i / w, i % w);
                let mut g = Any::at(rng, 1234, group % t, group / t * w + j);
                assert_eq!(out[i as usize], g.word(), "{rng} value {i}");
            }
        }
    }

    /// With one word per value, offset `k` is the offset-0 output without its first `k` values.
    #[test]
    fn offset_drops_values() {
        for rng in CurandRng::ALL {
            let (t, w) = (legacy(rng), rng.group());
            let n = (t * w + 100) as usize;
            let mut base = vec![0u32; n];
            legacy_u32(rng, 42, 0, &mut base);
            let mut base_f32 = vec![0f32; n];
            legacy_uniform_f32(rng, 42, 0, &mut base_f32);
            for k in [1u64, 3, 4, 5, 77, t * w - 1, t * w + 3] {
                let mut out = vec![0u32; n - k as usize];
                legacy_u32(rng, 42, k, &mut out);
                assert_eq!(out, base[k as usize..], "{rng}, offset {k}");
                let mut out = vec![0f32; n - k as usize];
                legacy_uniform_f32(rng, 42, k, &mut out);
                assert_eq!(out, base_f32[k as usize..], "{rng}, offset {k}, f32");
            }
        }
        // MRG32k3a doubles take one step each: the same holds.
        let mut base = vec![0f64; 5000];
        legacy_uniform_f64(CurandRng::Mrg32k3a, 42, 0, &mut base);
        let mut out = vec![0f64; 5000 - 77];
        legacy_uniform_f64(CurandRng::Mrg32k3a, 42, 77, &mut out);
        assert_eq!(out, base[77..]);
    }

    /// Two-word doubles after an offset: the lanes that had values below the offset start one
    /// word per such value on (cuRAND 10.4.0 does this; see the module docs).
    #[test]
    fn double_offsets_count_words() {
        let mut out = vec![0f64; 4096];
        legacy_uniform_f64(CurandRng::Xorwow, 1234, 77, &mut out);
        for (i, &x) in out.iter().enumerate() {
            let lane = (77 + i as u64) % 4096;
            // Lanes 0..77 had one value (one word) below the offset.
            let mut g = Xorwow::stream(1234, lane);
            g.skip(u64::from(lane < 77));
            let (a, b) = (g.next_u32(), g.next_u32());
            assert_eq!(x, uniform_f64(a, b), "value {i}");
        }
        // Philox: groups of 4; lane 0's first group lies below offset 262147, so its round-1
        // group starts at word 4 (one block), and the offset's value is its 4th double, words 10, 11.
        let mut out = [0f64; 2];
        legacy_uniform_f64(CurandRng::Philox4x32_10, 99, 262_147, &mut out);
        let mut g = Philox4x32x10::stream(99, 0);
        g.skip(10);
        assert_eq!(out[0], uniform_f64(g.next_u32(), g.next_u32()));
        let mut g = Philox4x32x10::stream(99, 1);
        g.skip(4);
        assert_eq!(out[1], uniform_f64(g.next_u32(), g.next_u32()));
    }

    /// Every kind, offsets inside and past the first round: the engine equals the reference.
    #[test]
    fn matches_the_reference() {
        for rng in CurandRng::ALL {
            let (t, w) = (legacy(rng), rng.group());
            let n = if rng == CurandRng::Philox4x32_10 { t * w + 4 * 1000 + 3 } else { 2 * t * w + 9 } as usize;
            for offset in [0, 1, 77, t * w - 1, t * w + 5] {
                for kind in KINDS {
                    let calls = [(kind, n)];
                    assert_eq!(
                        run(rng, 7, offset, &calls),
                        reference(rng, t, 7, offset, &calls),
                        "{rng} {kind:?} {offset}"
                    );
                }
            }
        }
    }

    /// Split calls equal one call, for every kind (cuRAND's documented behaviour).
    #[test]
    fn split_calls_equal_one_call() {
        for rng in CurandRng::ALL {
            let (t, w) = (legacy(rng), rng.group());
            let n = (t * w + 5000) as usize;
            for kind in KINDS {
                let one = run(rng, 1234, 77, &[(kind, n)]);
                let parts = [1, 3, 4097, 5, 2, n - 4108];
                let split: Vec<_> = parts.iter().map(|&c| (kind, c)).collect();
                assert_eq!(run(rng, 1234, 77, &split), one, "{rng} {kind:?}");
            }
        }
    }

    /// Mixed calls follow the per-lane rule (a group split between calls counts as the second
    /// call's kind), checked against the reference; the mixes cuRAND was run on are among them.
    #[test]
    fn mixed_calls_match_the_reference() {
        let mixes: [&[(Kind, usize)]; 5] = [
            &[(Kind::U32, 5000), (Kind::F64, 25000)],
            &[(Kind::F64, 5000), (Kind::U32, 25000)],
            &[(Kind::F32, 4097), (Kind::F64, 25903)],
            &[(Kind::U32, 3), (Kind::F64, 7), (Kind::F32, 4101), (Kind::F64, 9000), (Kind::U32, 1)],
            &[(Kind::F64, 1), (Kind::U32, 2), (Kind::F64, 12290)],
        ];
        for rng in CurandRng::ALL {
            for calls in mixes {
                for offset in [0, 77, 4101] {
                    let t = legacy(rng);
                    assert_eq!(run(rng, 99, offset, calls), reference(rng, t, 99, offset, calls), "{rng} {calls:?}");
                }
            }
        }
        // A long alternation: more steps than the kernels take by value (the per-lane table).
        let long: Vec<(Kind, usize)> =
            (0..14).map(|i| ([Kind::U32, Kind::F64, Kind::F32][i % 3], 37 + 1001 * (i % 5))).collect();
        for rng in CurandRng::ALL {
            let mut g = CurandHost::new(rng, CurandOrdering::Legacy, 99, 77);
            for &(kind, n) in &long[..long.len() - 1] {
                match kind {
                    Kind::U32 => g.record::<u32>(n as u64),
                    Kind::F32 => g.record::<f32>(n as u64),
                    Kind::F64 => g.record::<f64>(n as u64),
                }
            }
            // MRG32k3a takes one word per value whatever the type: one run, few steps.
            assert_eq!(g.layout::<u32>(1).starts.inline().is_none(), rng != CurandRng::Mrg32k3a, "{rng}");
            assert_eq!(run(rng, 99, 77, &long), reference(rng, legacy(rng), 99, 77, &long), "{rng} long");
        }
        // Philox across a round boundary, split inside a group (as run on the GPU).
        let rng = CurandRng::Philox4x32_10;
        for calls in [[(Kind::U32, 262_158), (Kind::F64, 40_000)], [(Kind::F64, 262_158), (Kind::U32, 40_000)]] {
            assert_eq!(run(rng, 99, 0, &calls), reference(rng, 65536, 99, 0, &calls), "{calls:?}");
        }
    }

    /// Large calls (lanes in parallel, several rounds each) equal the reference.
    #[test]
    fn batches_and_threads_agree() {
        let n = (1 << 22) + 2 * 4096 + 3;
        for (rng, kind) in [(CurandRng::Xorwow, Kind::F64), (CurandRng::Philox4x32_10, Kind::U32)] {
            let calls = [(kind, n)];
            assert_eq!(run(rng, 5, 3, &calls), reference(rng, legacy(rng), 5, 3, &calls), "{rng}");
        }
    }

    /// The default ordering: MRG32k3a interleaves 81920 subsequences, the others are unchanged.
    #[test]
    fn default_ordering() {
        for rng in CurandRng::ALL {
            let t = rng.subsequences(CurandOrdering::Default);
            let n = (t * rng.group() + 11) as usize;
            let mut out = vec![0u32; n];
            generate(rng, CurandOrdering::Default, 1234, 5, &mut out);
            let bits: Vec<u64> = out.iter().map(|&x| u64::from(x)).collect();
            assert_eq!(bits, reference(rng, t, 1234, 5, &[(Kind::U32, n)]), "{rng}");
            if rng != CurandRng::Mrg32k3a {
                let mut legacy_out = vec![0u32; n];
                legacy_u32(rng, 1234, 5, &mut legacy_out);
                assert_eq!(out, legacy_out);
            }
        }
        assert_eq!(CurandRng::Mrg32k3a.subsequences(CurandOrdering::Default), 81920);
    }

    /// cuRAND's own output, quoted in an NVIDIA forum thread (2016): `curandGenerate` of XORWOW
    /// with seed 0, the first ten words.
    #[test]
    fn published_curand_words() {
        let mut out = [0u32; 10];
        legacy_u32(CurandRng::Xorwow, 0, 0, &mut out);
        assert_eq!(
            out,
            [
                3179217846, 3955638199, 167591721, 4161663997, 3973448494, 1917059131, 2866113984, 472148682,
                2019573489, 2204150021
            ]
        );
    }

    /// Values cuRAND 10.4.0 wrote on an H100 (seed 1234, offset 77, legacy ordering), at output
    /// indices 0, 1, 4019, 4096 and 99999: u32 words, f32 bits, f64 bits.
    #[test]
    fn curand_10_4_known_answers() {
        let idx = [0usize, 1, 4019, 4096, 99999];
        type Known = (CurandRng, [u32; 5], [u32; 5], [u64; 5]);
        let known: [Known; 3] = [
            (
                CurandRng::Xorwow,
                [3974831866, 3877786421, 1867875844, 3300185444, 1050538201],
                [1064102687, 1063723603, 1054780172, 1061467349, 1048213443],
                [
                    4605096208236224250,
                    4605763407371719478,
                    4606017877895906820,
                    4590415248271223764,
                    4595602048005154810,
                ],
            ),
            (
                CurandRng::Mrg32k3a,
                [3770903291, 1456696802, 2521876100, 66902879, 1612828261],
                [1063306091, 1051567836, 1058427079, 1014970072, 1052787613],
                [
                    4606083376924848460,
                    4599781449145034542,
                    4603463977053650499,
                    4580133174231398599,
                    4600436311946356321,
                ],
            ),
            (
                CurandRng::Philox4x32_10,
                [304419705, 2918267517, 2053518784, 123214360, 713258605],
                [1032923292, 1059975482, 1056230508, 1022034755, 1042943450],
                [
                    4600547726707553531,
                    4601919777922231385,
                    4596937545574045442,
                    4603900016196163508,
                    4587064611936102104,
                ],
            ),
        ];
        for (rng, words, floats, doubles) in known {
            let mut u = vec![0u32; 100_000];
            legacy_u32(rng, 1234, 77, &mut u);
            let mut f = vec![0f32; 100_000];
            legacy_uniform_f32(rng, 1234, 77, &mut f);
            let mut d = vec![0f64; 100_000];
            legacy_uniform_f64(rng, 1234, 77, &mut d);
            for (k, &i) in idx.iter().enumerate() {
                assert_eq!(u[i], words[k], "{rng} u32 [{i}]");
                assert_eq!(f[i].to_bits(), floats[k], "{rng} f32 [{i}]");
                assert_eq!(d[i].to_bits(), doubles[k], "{rng} f64 [{i}]");
            }
        }
        // MRG32k3a's default ordering: value 81920 is subsequence 0's second word.
        let mut out = vec![0u32; 81921];
        generate(CurandRng::Mrg32k3a, CurandOrdering::Default, 1234, 0, &mut out);
        assert_eq!([out[0], out[4096], out[81920]], [3379073520, 2648318237, 2521876100]);
        // Philox doubles past the first round (seed 99, offset 262147): output 0, 1, 262147.
        let mut d = vec![0f64; 262_148];
        legacy_uniform_f64(CurandRng::Philox4x32_10, 99, 262_147, &mut d);
        assert_eq!(
            [d[0].to_bits(), d[1].to_bits(), d[262_147].to_bits()],
            [4602173375515341353, 4605898133847732858, 4582027403381503632]
        );
    }

    #[test]
    fn value_stability() {
        // Pinned (and, for these, equal to cuRAND 10.4.0's output on an H100): the first 8 words
        // of seed 1234, offset 0, legacy ordering.
        let pins: [(CurandRng, [u32; 8]); 3] = [
            (
                CurandRng::Xorwow,
                [624778773, 3522650202, 2363946744, 1266286439, 3928747533, 3732235839, 1382638835, 3362343509],
            ),
            (
                CurandRng::Mrg32k3a,
                [3379073520, 653317650, 4012281984, 4237272334, 4243547925, 1307787078, 3979394643, 1855630276],
            ),
            (
                CurandRng::Philox4x32_10,
                [546353992, 3665621163, 1140953199, 3419031310, 3507855656, 1392278645, 3354607383, 253049307],
            ),
        ];
        for (rng, words) in pins {
            let mut out = [0u32; 8];
            legacy_u32(rng, 1234, 0, &mut out);
            assert_eq!(out, words, "{rng}");
        }
    }

    #[test]
    fn conversions() {
        assert_eq!(warpmc_kernels::convert::TWO_POW_M32, 2.328_306_4e-10_f32, "cuRAND's CURAND_2POW32_INV literal");
        assert_eq!(uniform_f32(0), 2f32.powi(-33));
        assert_eq!(uniform_f32(u32::MAX), 1.0, "large words round to 1.0");
        assert_eq!(uniform_f32(1 << 31), 0.5);
        assert_eq!(uniform_f64(0, 0), 2f64.powi(-54));
        assert!(uniform_f64(u32::MAX, u32::MAX) <= 1.0);
        assert_eq!(uniform_f64(1, 0), 2f64.powi(-53) + 2f64.powi(-54));
        assert_eq!(uniform_f64(0, 1), 2f64.powi(-32) + 2f64.powi(-54));
        assert_eq!(MRG32K3A_NORM.to_bits(), "2.3283065498378288e-10".parse::<f64>().unwrap().to_bits());
    }

    #[test]
    fn names_and_sizes() {
        for rng in CurandRng::ALL {
            assert_eq!(CurandRng::from_name(rng.name()), Some(rng));
            assert_eq!(rng.to_string(), rng.name());
        }
        assert_eq!(CurandRng::from_name("philox"), None);
        assert_eq!(CurandOrdering::default(), CurandOrdering::Legacy);
        let mut empty: [u32; 0] = [];
        legacy_u32(CurandRng::Xorwow, 1, 2, &mut empty);
        let mut g = CurandLegacy::new(CurandRng::Philox4x32_10, CurandOrdering::Legacy, 1, 2);
        g.generate_u32(&mut empty);
        assert_eq!((g.position(), g.rng(), g.seed(), g.offset()), (0, CurandRng::Philox4x32_10, 1, 2));
    }
}

#[cfg(test)]
mod timing {
    use super::*;

    /// Host work per call (`cargo test --release -p warpmc --lib curand_host::timing -- --ignored
    /// --nocapture`): the layout of a call, for each generator, fresh and after a call.
    #[test]
    #[ignore = "timing, prints only"]
    fn layout_time() {
        for rng in CurandRng::ALL {
            for ordering in [CurandOrdering::Legacy, CurandOrdering::Default] {
                let mut g = CurandHost::new(rng, ordering, 1234, 77);
                for round in 0..2 {
                    let reps = 200;
                    let t0 = std::time::Instant::now();
                    for _ in 0..reps {
                        std::hint::black_box(g.layout::<f64>(std::hint::black_box(1 << 28)));
                    }
                    let dt = t0.elapsed().as_secs_f64() / reps as f64;
                    let lanes = rng.subsequences(ordering);
                    println!("{rng} {ordering:?} ({lanes} lanes), history {round}: {:.2} us per layout", dt * 1e6);
                    g.record::<u32>(12345);
                }
            }
        }
    }

    /// The cost of a lane's initialisation (`stream` then `skip`) against one value, on the CPU
    /// (a proxy for the GPU: both are integer work in registers).
    #[test]
    #[ignore = "timing, prints only"]
    fn init_against_value() {
        fn one<G: CurandGenerator>(name: &str, lanes: u64) {
            let reps = 2000u64;
            let t0 = std::time::Instant::now();
            for i in 0..reps {
                let mut g = G::stream(1234, std::hint::black_box((i * 2_654_435_761) % lanes));
                g.skip(std::hint::black_box((i * 40_503) % (1 << 17)));
                std::hint::black_box(&g);
            }
            let init = t0.elapsed().as_secs_f64() / reps as f64;
            let n = 1u64 << 22;
            let call = CurandCall { seed: 1, first: 0, end: n, lanes: 1, group: G::GROUP };
            let mut out = vec![0u32; n as usize];
            let t0 = std::time::Instant::now();
            let o = out.as_mut_ptr();
            let w = G::GROUP as usize;
            // SAFETY: one lane, `n / W` whole groups: indices below `n`.
            lane_chunk::<G, u32>(
                &call,
                0,
                0,
                0,
                0,
                n / G::GROUP - 1,
                |i, g| {
                    for (j, v) in g.into_iter().take(w).enumerate() {
                        unsafe { o.add(i as usize + j).write(v) }
                    }
                },
                |i, v| unsafe { o.add(i as usize).write(v) },
            );
            let value = t0.elapsed().as_secs_f64() / n as f64;
            std::hint::black_box(&out);
            println!(
                "{name}: init {:.2} us, value {:.2} ns: init = {:.0} values",
                init * 1e6,
                value * 1e9,
                init / value
            );
        }
        one::<Xorwow>("xorwow", 4096);
        one::<Mrg32k3aCurand>("mrg32k3a", 81920);
        one::<Philox4x32x10>("philox", 65536);
    }
}
