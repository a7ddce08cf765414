//! Distributions: every transform composed with every generator, in `f32` and `f64`, in exact
//! and fast mode, through one interface that the fills on both backends share.
//!
//! A [`Sampler`] turns a stream's words into groups of [`GROUP`] values. It holds only its
//! parameters (computed once on the host side of the call), so a group depends on nothing but
//! the stream's words: the fills of `fill.rs`'s interleaved layout give the same values
//! whatever the launch shape or thread count. Transforms that reject draw a variable number of
//! words per value; each group takes exactly the words its values need, in order.
//!
//! The run-time choice is a [`DistParams`] (what the host passes to a kernel): a distribution,
//! a transform and two parameters. [`dispatch`] turns it into a monomorphised sampler for a
//! [`SamplerVisitor`] (the GPU kernels' fill loops, the CPU executor's), so a kernel per
//! generator and precision covers every distribution and transform.
//!
//! | distribution | transforms | parameters |
//! |---|---|---|
//! | normal | box-muller, inversion, inversion-naive, polar, ziggurat | `a` mean, `b` sd |
//! | lognormal | the same | `exp(a + b N)` |
//! | exponential | inversion, ziggurat | `a` rate (`E / a`) |
//! | gamma | box-muller, ziggurat (its normals) | `a` shape (scale 1) |
//! | poisson | (its own methods) | `a` mean |

use crate::tally::Tally;
use core::marker::PhantomData;

use crate::fill::GROUP;
use crate::gamma::Gamma;
use crate::inverse_normal::{Quantile, inversion, inversion_naive};
use crate::poisson::Poisson;
use crate::polar::polar;
pub use crate::real::Value;
use crate::real::{Arith, Real};
use crate::rng::Uniform32;
use crate::ziggurat::{Zig, ziggurat_exponential, ziggurat_normal};

/// A distribution's code in [`DistParams::kind`].
pub mod kind {
    pub const NORMAL: u32 = 0;
    pub const LOGNORMAL: u32 = 1;
    pub const EXPONENTIAL: u32 = 2;
    pub const GAMMA: u32 = 3;
    pub const POISSON: u32 = 4;
}

/// A transform's code in [`DistParams::transform`].
pub mod transform {
    pub const BOX_MULLER: u32 = 0;
    pub const INVERSION: u32 = 1;
    pub const INVERSION_NAIVE: u32 = 2;
    pub const POLAR: u32 = 3;
    pub const ZIGGURAT: u32 = 4;
    /// Flag on a rejection transform (polar normals, gamma): Thomas's warp pre-caching
    /// ([`super::WarpSampler`]).
    pub const PRE_CACHE: u32 = 0x100;
    /// Wallace's pool method (`crate::wallace`): not a per-stream sampler, so [`super::dispatch`]
    /// does not know it; the backends route it to the pool kernels.
    pub const WALLACE: u32 = 5;
}

/// A distribution as the host passes it to a kernel. The host validates the parameters
/// (`warpmc::distributions`); a combination this module does not know fills nothing.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistParams {
    pub kind: u32,
    pub transform: u32,
    pub a: f64,
    pub b: f64,
}

/// Values from a stream, a group at a time.
pub trait Sampler: Copy + Send + Sync {
    type Item: Value;
    /// Whether every group takes the same number of words (no rejection). Only such samplers
    /// run with a collective generator, whose lanes must draw in lockstep.
    const FIXED_WORDS: bool;
    /// The next group of the stream; `iters` counts the attempts of rejection loops.
    fn next_group<G: Uniform32>(&self, rng: &mut G, iters: &mut impl Tally) -> [Self::Item; GROUP];
}

/// What to do with the sampler [`dispatch`] chooses.
pub trait SamplerVisitor {
    type Out;
    fn visit<S: Sampler>(self, s: S) -> Self::Out;
    /// A pre-cached rejection sampler, whose lanes run in warps of 32 streams (see
    /// [`WarpSampler`]); a visitor that cannot run one answers [`SamplerVisitor::unknown`].
    fn visit_warp<S: WarpSampler>(self, s: S) -> Self::Out
    where
        Self: Sized,
    {
        let _ = s;
        self.unknown()
    }
    /// A combination [`dispatch`] does not know (the host never sends one).
    fn unknown(self) -> Self::Out;
}

/// A source of standard normals, in pairs.
pub trait NormalTransform<A: Arith>: Copy + Send + Sync {
    const FIXED_WORDS: bool;
    fn pair<G: Uniform32>(rng: &mut G, iters: &mut impl Tally) -> (A::R, A::R);
}

macro_rules! normal_transform {
    ($(#[$doc:meta])* $name:ident, $bound:path, $fixed:expr, |$rng:ident, $iters:ident| $body:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;
        impl<A: $bound> NormalTransform<A> for $name {
            const FIXED_WORDS: bool = $fixed;
            #[inline(always)]
            fn pair<G: Uniform32>($rng: &mut G, $iters: &mut impl Tally) -> (A::R, A::R) {
                $body
            }
        }
    };
}

normal_transform!(
    /// Box-Muller: a pair from two words (`f32`) or four (`f64`), [`Arith::box_muller`].
    BoxMuller, Arith, true, |rng, _iters| A::box_muller(rng)
);
normal_transform!(
    /// Inversion with the reflection in integer form ([`inversion`]): one value per word
    /// (`f32`) or two words (`f64`).
    Inversion, Quantile, true, |rng, _iters| {
        let x = inversion::<A, G>(rng);
        (x, inversion::<A, G>(rng))
    }
);
normal_transform!(
    /// Naive inversion (`u 2^-32`), kept to show its defects ([`inversion_naive`]).
    InversionNaive, Quantile, true, |rng, _iters| {
        let x = inversion_naive::<A, G>(rng);
        (x, inversion_naive::<A, G>(rng))
    }
);
normal_transform!(
    /// Marsaglia's polar method ([`polar`]): a pair per accepted attempt.
    Polar, Arith, false, |rng, iters| polar::<A, G>(rng, iters)
);
normal_transform!(
    /// Marsaglia and Tsang's Ziggurat ([`ziggurat_normal`]).
    Ziggurat, Zig, false, |rng, iters| {
        let x = ziggurat_normal::<A, G>(rng, iters);
        (x, ziggurat_normal::<A, G>(rng, iters))
    }
);

/// What a normal sampler does to each standard normal `x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Post {
    /// `x` itself.
    Standard,
    /// `mean + sd x`.
    Affine,
    /// `exp(mean + sd x)`.
    Log,
}

/// Normal (or log-normal) values from transform `T`: a group is two pairs.
#[derive(Clone, Copy, Debug)]
pub struct NormalSampler<A: Arith, T> {
    pub mean: A::R,
    pub sd: A::R,
    pub post: Post,
    transform: PhantomData<T>,
}

impl<A: Arith, T: NormalTransform<A>> NormalSampler<A, T> {
    /// The standard normal is computed with no arithmetic after the transform (so `-0.0`
    /// stays `-0.0` and the values are the transform's bits).
    pub fn new(mean: f64, sd: f64, log: bool) -> Self {
        let post = if log {
            Post::Log
        } else if mean == 0.0 && sd == 1.0 {
            Post::Standard
        } else {
            Post::Affine
        };
        Self { mean: A::R::from_f64(mean), sd: A::R::from_f64(sd), post, transform: PhantomData }
    }

    /// What is done to each standard normal `x` (also Wallace's output, `crate::wallace`).
    #[inline(always)]
    pub fn post(&self, x: A::R) -> A::R {
        match self.post {
            Post::Standard => x,
            Post::Affine => self.mean + self.sd * x,
            Post::Log => A::exp(self.mean + self.sd * x),
        }
    }
}

impl<A: Arith, T: NormalTransform<A>> Sampler for NormalSampler<A, T> {
    type Item = A::R;
    const FIXED_WORDS: bool = T::FIXED_WORDS;
    #[inline(always)]
    fn next_group<G: Uniform32>(&self, rng: &mut G, iters: &mut impl Tally) -> [A::R; GROUP] {
        let (a, b) = T::pair(rng, iters);
        let (c, d) = T::pair(rng, iters);
        [self.post(a), self.post(b), self.post(c), self.post(d)]
    }
}

/// Exponential values of rate `rate` (`E / rate`, `E` standard): by inversion, `E = -ln u`
/// with `u` from [`Arith::uniform`] (one word in `f32`, two in `f64`; `u = 1` gives `+0`), or by
/// the Ziggurat.
#[derive(Clone, Copy, Debug)]
pub struct ExponentialSampler<A: Arith, const ZIGGURAT: bool> {
    pub rate: A::R,
}

impl<A: Arith + Zig, const ZIGGURAT: bool> ExponentialSampler<A, ZIGGURAT> {
    pub fn new(rate: f64) -> Self {
        Self { rate: A::R::from_f64(rate) }
    }

    #[inline(always)]
    fn one<G: Uniform32>(&self, rng: &mut G, iters: &mut impl Tally) -> A::R {
        let e = if ZIGGURAT { ziggurat_exponential::<A, G>(rng, iters) } else { A::R::ZERO - A::ln(A::uniform(rng)) };
        if self.rate == A::R::ONE { e } else { e / self.rate }
    }
}

impl<A: Arith + Zig, const ZIGGURAT: bool> Sampler for ExponentialSampler<A, ZIGGURAT> {
    type Item = A::R;
    const FIXED_WORDS: bool = !ZIGGURAT;
    #[inline(always)]
    fn next_group<G: Uniform32>(&self, rng: &mut G, iters: &mut impl Tally) -> [A::R; GROUP] {
        [self.one(rng, iters), self.one(rng, iters), self.one(rng, iters), self.one(rng, iters)]
    }
}

/// Gamma values of shape `shape` and scale 1 (Marsaglia and Tsang, [`Gamma`]), their normals
/// from transform `T`. The normals come in pairs: a pair's second value serves the next
/// attempt within the group, and a group's left-over value is dropped, so that a group
/// depends only on its own words.
#[derive(Clone, Copy, Debug)]
pub struct GammaSampler<A: Arith, T> {
    pub gamma: Gamma<A::R>,
    transform: PhantomData<T>,
}

impl<A: Arith, T: NormalTransform<A>> GammaSampler<A, T> {
    pub fn new(shape: f64) -> Self {
        Self { gamma: Gamma::new(shape), transform: PhantomData }
    }
}

impl<A: Arith, T: NormalTransform<A>> Sampler for GammaSampler<A, T> {
    type Item = A::R;
    const FIXED_WORDS: bool = false;
    #[inline(always)]
    fn next_group<G: Uniform32>(&self, rng: &mut G, iters: &mut impl Tally) -> [A::R; GROUP] {
        let mut spare: Option<A::R> = None;
        let mut normal_iters = 0u32;
        let mut normal = |rng: &mut G| match spare.take() {
            Some(x) => x,
            None => {
                let (x, y) = T::pair(rng, &mut normal_iters);
                spare = Some(y);
                x
            }
        };
        let mut out = [A::R::ZERO; GROUP];
        let mut i = 0;
        while i < GROUP {
            out[i] = gamma_one::<A, G, _>(&self.gamma, rng, &mut normal, iters);
            i += 1;
        }
        out
    }
}

/// One gamma value: a call in the GPU build, so that a kernel holds one copy of the method
/// (with its normal transform and its generator's steps) rather than one per value of a group.
/// Its cost is its logarithms and normals; the call adds little.
#[cfg_attr(target_arch = "nvptx64", inline(never))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(always))]
fn gamma_one<A: Arith, G: Uniform32, F: FnMut(&mut G) -> A::R>(
    gamma: &Gamma<A::R>,
    rng: &mut G,
    normal: &mut F,
    iters: &mut impl Tally,
) -> A::R {
    gamma.sample::<A, G>(rng, normal, iters)
}

/// One Poisson count, a call in the GPU build (as [`gamma_one`]).
#[cfg_attr(target_arch = "nvptx64", inline(never))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(always))]
fn poisson_one<G: Uniform32>(poisson: &Poisson, rng: &mut G, iters: &mut impl Tally) -> u32 {
    poisson.sample(rng, iters)
}

/// Poisson counts of mean `lambda` ([`Poisson`]).
#[derive(Clone, Copy, Debug)]
pub struct PoissonSampler {
    pub poisson: Poisson,
}

impl Sampler for PoissonSampler {
    type Item = u32;
    const FIXED_WORDS: bool = false;
    #[inline(always)]
    fn next_group<G: Uniform32>(&self, rng: &mut G, iters: &mut impl Tally) -> [u32; GROUP] {
        [
            poisson_one(&self.poisson, rng, iters),
            poisson_one(&self.poisson, rng, iters),
            poisson_one(&self.poisson, rng, iters),
            poisson_one(&self.poisson, rng, iters),
        ]
    }
}

/// The sampler of `p` in precision and mode `A`, handed to `v` (normal, log-normal,
/// exponential and gamma; Poisson has its own entry, [`dispatch_counts`]). With
/// [`transform::PRE_CACHE`], the pre-cached warp sampler ([`SamplerVisitor::visit_warp`]).
#[inline(always)]
pub fn dispatch<A: Arith + Quantile + Zig, V: SamplerVisitor>(p: &DistParams, v: V) -> V::Out {
    use transform::*;
    if p.transform & PRE_CACHE != 0 {
        return match (p.kind, p.transform & !PRE_CACHE) {
            (kind::NORMAL | kind::LOGNORMAL, POLAR) => {
                v.visit_warp(CachedPolar::<A>::new(p.a, p.b, p.kind == kind::LOGNORMAL))
            }
            (kind::GAMMA, BOX_MULLER) => v.visit_warp(CachedGamma::<A, BoxMuller>::new(p.a)),
            (kind::GAMMA, ZIGGURAT) => v.visit_warp(CachedGamma::<A, Ziggurat>::new(p.a)),
            _ => v.unknown(),
        };
    }
    match p.kind {
        kind::NORMAL | kind::LOGNORMAL => {
            let log = p.kind == kind::LOGNORMAL;
            match p.transform {
                BOX_MULLER => v.visit(NormalSampler::<A, BoxMuller>::new(p.a, p.b, log)),
                INVERSION => v.visit(NormalSampler::<A, Inversion>::new(p.a, p.b, log)),
                INVERSION_NAIVE => v.visit(NormalSampler::<A, InversionNaive>::new(p.a, p.b, log)),
                POLAR => v.visit(NormalSampler::<A, Polar>::new(p.a, p.b, log)),
                ZIGGURAT => v.visit(NormalSampler::<A, Ziggurat>::new(p.a, p.b, log)),
                _ => v.unknown(),
            }
        }
        kind::EXPONENTIAL => match p.transform {
            INVERSION => v.visit(ExponentialSampler::<A, false>::new(p.a)),
            ZIGGURAT => v.visit(ExponentialSampler::<A, true>::new(p.a)),
            _ => v.unknown(),
        },
        kind::GAMMA => match p.transform {
            BOX_MULLER => v.visit(GammaSampler::<A, BoxMuller>::new(p.a)),
            ZIGGURAT => v.visit(GammaSampler::<A, Ziggurat>::new(p.a)),
            _ => v.unknown(),
        },
        _ => v.unknown(),
    }
}

/// The Poisson sampler of `p` (`kind::POISSON`), handed to `v`.
#[inline(always)]
pub fn dispatch_counts<V: SamplerVisitor>(p: &DistParams, v: V) -> V::Out {
    if p.kind == kind::POISSON { v.visit(PoissonSampler { poisson: Poisson::new(p.a) }) } else { v.unknown() }
}

// ------------------------------------------------------------------------------------------------
// Thomas's warp pre-caching ("Rejection methods on GPUs"). In a rejection loop a warp runs until
// its slowest lane accepts; the lanes that are done still execute every iteration. Pre-caching
// lets them keep the first candidate they accept meanwhile, as the value of their next call.
// ------------------------------------------------------------------------------------------------

/// A rejection method split for warp pre-caching: [`WarpSampler::attempt`] draws one candidate
/// (accepted or not), [`WarpSampler::finish`] turns an accepted one into values.
///
/// The lanes of a warp are 32 consecutive streams (`32j .. 32j + 31`), always the same ones: a
/// stream's values depend on its warp's other streams (how long its lane keeps drawing ghost
/// candidates), so the warps are fixed by stream number, not by the launch. The fills:
/// [`fill_warp_cached`] on the CPU (the 32 lanes in turn), the GPU kernels' with a warp vote;
/// both run [`cached_step`] and [`WarpSampler::finish`] per lane, in the same order, so exact
/// mode gives the same bits.
///
/// A call (`PER_CALL` values of a lane) is the seed's loop, in its do-while form:
/// 1. a lane holding a cached candidate makes it its current one (the cache empties);
/// 2. every iteration every lane of the warp draws one candidate ([`cached_step`]): a lane
///    without a current candidate takes an accepted one as current; a lane that had a current
///    one before the iteration and has no cache takes it as its cache; a full lane drops it;
/// 3. the warp loops until every lane has a current candidate (at least one iteration);
/// 4. each lane finishes its current candidate ([`WarpSampler::finish`], which may draw).
///
/// Draw rule per lane: the candidates of every iteration its warp runs, then its `finish`
/// draws, call after call; a fill's cache is dropped at its end (the stream has moved past
/// it). Within a call, the iterations equal the warp's (`host::divergence` has the model).
pub trait WarpSampler: Copy + Send + Sync {
    type Item: Value;
    /// What a lane keeps between attempts besides its cache (gamma's spare normal).
    type Lane: Copy;
    /// An accepted candidate.
    type Cand: Copy;
    /// Values per call; divides [`GROUP`].
    const PER_CALL: usize;
    /// A lane's state at the start of a fill.
    fn lane(&self) -> Self::Lane;
    /// One candidate, `Some` when accepted.
    fn attempt<G: Uniform32>(&self, lane: &mut Self::Lane, rng: &mut G) -> Option<Self::Cand>;
    /// Values `at .. at + PER_CALL` of `out` from the accepted candidate `c`.
    fn finish<G: Uniform32>(
        &self,
        lane: &mut Self::Lane,
        rng: &mut G,
        c: Self::Cand,
        out: &mut [Self::Item; GROUP],
        at: usize,
    );
}

/// One lane's part of one iteration of the pre-cached loop (step 2 of [`WarpSampler`]).
#[inline(always)]
pub fn cached_step<S: WarpSampler, G: Uniform32>(
    s: &S,
    lane: &mut S::Lane,
    rng: &mut G,
    current: &mut Option<S::Cand>,
    cache: &mut Option<S::Cand>,
) {
    let c = s.attempt(lane, rng);
    if current.is_none() {
        *current = c;
    } else if cache.is_none() {
        *cache = c;
    }
}

/// The lanes of a warp whose stream has a group in round `round` of a fill of `groups` groups
/// over `streams` streams, the warp's first stream being `base` (a multiple of 32): lanes
/// `0 .. n`, `n` returned (a stream's groups are `s, s + streams, ...`, so the lanes that still
/// have one are a prefix).
#[inline(always)]
pub fn warp_lanes_in_round(base: u64, round: u64, groups: u64, streams: u64) -> u32 {
    let in_warp = streams.saturating_sub(base).min(32);
    groups.saturating_sub(base).saturating_sub(round.saturating_mul(streams)).min(in_warp) as u32
}

/// A pre-cached fill's warp on the CPU: streams `base .. base + states.len()` (`base` a multiple
/// of 32, at most 32 states, the warp's streams that exist) of a fill of `len` values over
/// `streams` streams in the interleaved layout of [`crate::fill`]; `write(base, group, valid)`
/// as in [`crate::fill::fill_stream_sampled`]. The lanes take their turns within each
/// iteration; each lane draws exactly what its GPU thread draws.
pub fn fill_warp_cached<S: WarpSampler, G: Uniform32>(
    s: &S,
    states: &mut [G],
    base: usize,
    streams: usize,
    len: usize,
    iters: &mut impl Tally,
    mut write: impl FnMut(usize, [S::Item; GROUP], usize),
) {
    const K: usize = 32;
    let n = states.len().min(K);
    let groups = len.div_ceil(GROUP) as u64;
    let mut lanes = [s.lane(); K];
    let mut cache: [Option<S::Cand>; K] = [None; K];
    let mut round = 0u64;
    loop {
        let active = warp_lanes_in_round(base as u64, round, groups, streams as u64) as usize;
        let active = active.min(n);
        if active == 0 {
            break;
        }
        let mut out = [[S::Item::default(); GROUP]; K];
        let mut at = 0;
        while at < GROUP {
            let mut current: [Option<S::Cand>; K] = [None; K];
            for i in 0..active {
                current[i] = cache[i].take();
            }
            loop {
                for i in 0..active {
                    cached_step(s, &mut lanes[i], &mut states[i], &mut current[i], &mut cache[i]);
                }
                iters.tick();
                if current[..active].iter().all(Option::is_some) {
                    break;
                }
            }
            for i in 0..active {
                if let Some(c) = current[i] {
                    s.finish(&mut lanes[i], &mut states[i], c, &mut out[i], at);
                }
            }
            at += S::PER_CALL;
        }
        for (i, g) in out.iter().enumerate().take(active) {
            let at = ((round as usize * streams) + base + i) * GROUP;
            write(at, *g, (len - at).min(GROUP));
        }
        round += 1;
    }
}

/// Polar normals (or log-normals) with pre-caching: a candidate is an accepted point
/// `(u, v, s)` of the unit disc ([`crate::polar::polar`]'s attempt); `finish` computes the pair
/// as `polar` does and applies the mean and sd (or the exponential).
#[derive(Clone, Copy, Debug)]
pub struct CachedPolar<A: Arith> {
    normal: NormalSampler<A, Polar>,
}

impl<A: Arith> CachedPolar<A> {
    pub fn new(mean: f64, sd: f64, log: bool) -> Self {
        Self { normal: NormalSampler::new(mean, sd, log) }
    }
}

impl<A: Arith> WarpSampler for CachedPolar<A> {
    type Item = A::R;
    type Lane = ();
    type Cand = (A::R, A::R, A::R);
    const PER_CALL: usize = 2;
    #[inline(always)]
    fn lane(&self) {}
    #[inline(always)]
    fn attempt<G: Uniform32>(&self, _: &mut (), rng: &mut G) -> Option<(A::R, A::R, A::R)> {
        crate::polar::polar_attempt::<A, G>(rng)
    }
    #[inline(always)]
    fn finish<G: Uniform32>(&self, _: &mut (), _: &mut G, c: (A::R, A::R, A::R), out: &mut [A::R; GROUP], at: usize) {
        let (x, y) = crate::polar::polar_pair::<A>(c);
        out[at] = self.normal.post(x);
        out[at + 1] = self.normal.post(y);
    }
}

/// Gamma values with pre-caching: a candidate is an accepted [`Gamma::attempt`]'s `d v`;
/// `finish` applies [`Gamma::boost`] (one uniform when the shape is below 1). A lane's normals
/// come in pairs from `T`; the spare serves its next attempt, whichever call that is.
#[derive(Clone, Copy, Debug)]
pub struct CachedGamma<A: Arith, T> {
    pub gamma: Gamma<A::R>,
    transform: PhantomData<T>,
}

impl<A: Arith, T: NormalTransform<A>> CachedGamma<A, T> {
    pub fn new(shape: f64) -> Self {
        Self { gamma: Gamma::new(shape), transform: PhantomData }
    }
}

impl<A: Arith, T: NormalTransform<A>> WarpSampler for CachedGamma<A, T> {
    type Item = A::R;
    type Lane = Option<A::R>;
    type Cand = A::R;
    const PER_CALL: usize = 1;
    #[inline(always)]
    fn lane(&self) -> Option<A::R> {
        None
    }
    #[inline(always)]
    fn attempt<G: Uniform32>(&self, spare: &mut Option<A::R>, rng: &mut G) -> Option<A::R> {
        let mut normal = |rng: &mut G| match spare.take() {
            Some(x) => x,
            None => {
                let (x, y) = T::pair(rng, &mut 0u32);
                *spare = Some(y);
                x
            }
        };
        self.gamma.attempt::<A, G>(rng, &mut normal)
    }
    #[inline(always)]
    fn finish<G: Uniform32>(&self, _: &mut Option<A::R>, rng: &mut G, y: A::R, out: &mut [A::R; GROUP], at: usize) {
        out[at] = self.gamma.boost::<A, G>(rng, y);
    }
}
