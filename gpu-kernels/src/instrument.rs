//! One-asset instruments: a path of a geometric Brownian motion (or of a GARCH(1,1) model) and
//! its payoff, one pure function per path shared by the CPU and the GPU.
//!
//! **Model.** Under the risk-neutral measure with rate `r`, dividend yield `q` and volatility
//! `σ`, the log-price at the dates `t_i = i T / n` is simulated exactly (log-Euler steps are
//! exact for GBM): `ln S_i = ln S_{i-1} + mu + sig z_i` with `mu = (r - q - σ²/2) dt`,
//! `sig = σ √dt`, `dt = T / n`, `z_i` independent standard normals. As in [`crate::asian`], the
//! log-price is a Kahan-compensated `f32` sum ([`LogPrice`]) exponentiated once per date, and
//! prices are in units `U` chosen by the host (so that per-path values sit well inside the
//! exact accumulators' range); the host scales back and discounts.
//!
//! **Payoffs** (`ω = +1` for a call, `-1` for a put; `S_0` is the spot):
//!
//! | kind | payoff | control variate |
//! |---|---|---|
//! | [`kind::EUROPEAN`] | `(ω(S_n - K))⁺` | `S_n` |
//! | [`kind::ASIAN_ARITHMETIC`] | `(ω(A - K))⁺`, `A = (1/n) Σ_{i=1..n} S_i` | `(ω(G - K))⁺` |
//! | [`kind::ASIAN_GEOMETRIC`] | `(ω(G - K))⁺`, `G = exp((1/n) Σ_{i=1..n} ln S_i)` | `S_n` |
//! | [`kind::ASIAN_BARRIER`] | the arithmetic payoff, zero once any `S_i` (`i >= 1`) is at or beyond the barrier `B` (up: `S_i >= B`, down: `S_i <= B`) | `(ω(G - K))⁺` |
//! | [`kind::LOOKBACK_FLOATING`] | call `S_n - min_{i=0..n} S_i`, put `max_{i=0..n} S_i - S_n` | `S_n` |
//! | [`kind::LOOKBACK_FIXED`] | call `(max_{i=0..n} S_i - K)⁺`, put `(K - min_{i=0..n} S_i)⁺` | `S_n` |
//! | [`kind::LOOKBACK_GARCH`] | `Σ_{t=0..n-1} (s_t - s_n)⁺` (GPU Gems 3 Listing 37-9) | `s_n` |
//!
//! Each path returns `(payoff, control)`, undiscounted, in units of `U`. Every control has an
//! expectation the host knows in closed form (`E[S_n] = S_0 e^{(r-q)T}`, the geometric Asian's
//! price), so the host can use it as a control variate with a coefficient estimated in the same
//! run, and as a check of the whole chain.
//!
//! **GARCH lookback.** Listing 37-9's model, with a per-step variance `h_t = vol_t²`:
//! `h_{t+1} = A_0 + A_1 h_t + A_2 ε_t²`, `ε_{t+1} = z_{t+1} √h_{t+1}`,
//! `s_{t+1} = s_t exp(mu_{t+1} + ε_{t+1})`, from `vol_0` and `ε_0` given. The listing's drift
//! `MU` is a constant; here it is the risk-neutral `mu_t = r dt - h_t / 2`, which makes the
//! discounted price a martingale (`E[e^{-h/2 + √h z}] = 1` for any `h` known before `z`). With
//! `A_1 = A_2 = 0` the model is GBM with `σ² dt = A_0`. The listing keeps the path in shared
//! memory, which limited it to 8 steps; here the path is **replayed**: a first pass finds `s_n`,
//! a second pass regenerates the same path from a copy of the stream's starting state and sums
//! the differences. Memory is constant at any number of steps, for twice the generator and
//! path work.
//!
//! **Antithetic variates** ([`flags::ANTITHETIC`]): the path is run with `z` and with `-z` from
//! the stream's start, and the two payoffs and controls are averaged: one sample per stream.
//!
//! **Restarting a stream.** The replay and the antithetic half need the stream's normals again
//! from its start. The per-path functions take a *factory* (`fresh`) that returns the normals
//! source at the stream's start each time it is called: a copy of the starting state for an
//! ordinary generator, the lane's saved word of the warp's state for a collective one (every
//! lane of the warp calls it together, since every lane runs the same legs and steps).
//!
//! **Greeks** ([`Legs`], [`flags::PATHWISE_DELTA`], [`flags::PATHWISE_VEGA`]). A sample can be a
//! weighted sum of up to three *legs*, each a [`PathSteps`] run on the same normals from the
//! stream's start: `x = Σ_j w_j f_j`, the control is leg 0's. One leg with weight 1 is the price;
//! central finite differences with common random numbers are `(f(θ+h) - f(θ-h)) / 2h` (delta,
//! vega) and `(f(θ+h) - 2 f(θ) + f(θ-h)) / h²` (gamma), each with its own standard error since
//! every path gives one value of the difference. With a pathwise flag, a GBM leg returns the
//! derivative of its payoff along the path in place of the payoff (European, arithmetic and
//! geometric Asians; the host refuses it elsewhere):
//!
//! - `∂S_i/∂S_0 = S_i / S_0`, so delta is `ω 1{payoff > 0} X / S_0` with `X` = `S_n`, `A` or `G`;
//! - `∂S_i/∂σ = S_i (W_{t_i} - σ t_i)` with `W_{t_i} = √dt Σ_{j<=i} z_j`, so vega is
//!   `ω 1{payoff > 0} ∂X/∂σ` with `∂A/∂σ = (1/n) Σ_i S_i (W_{t_i} - σ t_i)` and
//!   `∂G/∂σ = G (1/n) Σ_i (W_{t_i} - σ t_i)`.
//!
//! Gamma has no pathwise estimator for these payoffs (the derivative of the indicator is a
//! delta function); the host takes it as the central difference of pathwise deltas.

use crate::MathMode;
use crate::accum::PairMoments;
use crate::asian::{LogPrice, TransformPairs};
use crate::dist::{Inversion, InversionNaive, Polar, Ziggurat, transform};
use crate::inverse_normal::Quantile;
use crate::normal::{BoxMuller, NormalPairs};
use crate::real::Single;
use crate::rng::{Generator, Uniform32};
use crate::ziggurat::Zig;

/// Instrument codes ([`PathSteps::kind`]).
pub mod kind {
    pub const EUROPEAN: u32 = 0;
    pub const ASIAN_ARITHMETIC: u32 = 1;
    pub const ASIAN_GEOMETRIC: u32 = 2;
    pub const ASIAN_BARRIER: u32 = 3;
    pub const LOOKBACK_FLOATING: u32 = 4;
    pub const LOOKBACK_FIXED: u32 = 5;
    pub const LOOKBACK_GARCH: u32 = 6;
}

/// Bits of [`PathSteps::flags`].
pub mod flags {
    /// A put (`ω = -1`); a call otherwise. Ignored by the GARCH lookback.
    pub const PUT: u32 = 1;
    /// Antithetic variates: each sample is the average over `z` and `-z`.
    pub const ANTITHETIC: u32 = 2;
    /// The barrier knocks out from below (`S_i >= B`); from above (`S_i <= B`) otherwise.
    pub const BARRIER_UP: u32 = 4;
    /// Return the pathwise derivative of the payoff with respect to `S_0` (GBM kinds European,
    /// Asian arithmetic and geometric; dimensionless).
    pub const PATHWISE_DELTA: u32 = 8;
    /// Return the pathwise derivative of the payoff with respect to `σ` (the same kinds; in
    /// units of `U` per unit of volatility).
    pub const PATHWISE_VEGA: u32 = 16;
}

/// One job's per-step coefficients, as the kernels take them (the host computes them in `f64`
/// and rounds once; see `warpmc::instruments`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct PathSteps {
    /// A code of [`kind`].
    pub kind: u32,
    /// Number of dates `n >= 1`.
    pub steps: u32,
    /// The normal transform, a code of [`crate::dist::transform`] (an unknown code is
    /// Box-Muller's).
    pub normals: u32,
    /// Bits of [`flags`].
    pub flags: u32,
    /// `ln(S_0 / U)` as `hi + lo` (see [`crate::asian::split_f64`]).
    pub ln_s0: [f32; 2],
    /// GBM: `(r - q - σ²/2) dt`. GARCH: `r dt`.
    pub mu: f32,
    /// GBM: `σ √dt`. GARCH: unused.
    pub sig: f32,
    /// Strike `K / U` (unused by the floating and GARCH lookbacks).
    pub strike: f64,
    /// Barrier `B / U` (barrier option only).
    pub barrier: f64,
    /// `S_0 / U` (the lookbacks' extremum starts there; the GARCH path's `s_0`).
    pub s0: f64,
    /// GARCH: `A_0`, `A_1`, `A_2`, `vol_0`, `ε_0` (per step, not annualised).
    pub garch: [f32; 5],
    /// Pathwise vega only: `√dt` and `σ dt`.
    pub vega: [f32; 2],
    /// Padding to a multiple of 8 bytes (zero).
    pub pad: u32,
}

/// A sample as a weighted sum of up to three legs on the same normals (see the module's
/// "Greeks"): the kernels' argument.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Legs {
    pub legs: [PathSteps; 3],
    pub weights: [f64; 3],
    /// Legs in use, 1 to 3 (clamped to that range).
    pub count: u32,
    /// Padding to a multiple of 8 bytes (zero).
    pub pad: u32,
}

impl Legs {
    /// The price: one leg, weight 1.
    pub fn single(p: PathSteps) -> Self {
        Self { legs: [p; 3], weights: [1.0, 0.0, 0.0], count: 1, pad: 0 }
    }

    /// Leg `j` (0, 1, else 2), chosen without indexing memory by a run-time value (a kernel's
    /// argument indexed that way would be copied to local memory).
    #[inline(always)]
    fn leg(&self, j: u32) -> (PathSteps, f64) {
        match j {
            0 => (self.legs[0], self.weights[0]),
            1 => (self.legs[1], self.weights[1]),
            _ => (self.legs[2], self.weights[2]),
        }
    }
}

/// A source of single standard normals: each pair of the underlying source gives two values,
/// the first and then the second. Negated when `negate` is set (the antithetic path).
#[derive(Clone, Copy, Debug)]
pub struct Singles<S> {
    pub pairs: S,
    spare: f32,
    has_spare: bool,
    negate: bool,
}

impl<S: NormalPairs> Singles<S> {
    #[inline(always)]
    pub fn new(pairs: S, negate: bool) -> Self {
        Self { pairs, spare: 0.0, has_spare: false, negate }
    }

    #[inline(always)]
    pub fn next(&mut self) -> f32 {
        let z = if self.has_spare {
            self.has_spare = false;
            self.spare
        } else {
            let (a, b) = self.pairs.next_pair();
            self.spare = b;
            self.has_spare = true;
            a
        };
        if self.negate { -z } else { z }
    }
}

/// `(ω x)⁺`.
#[inline(always)]
fn positive_part(omega: f64, x: f64) -> f64 {
    (omega * x).max(0.0)
}

/// One GBM path's payoff and control for the kinds other than the GARCH lookback (with a
/// pathwise flag, the payoff's derivative in place of the payoff).
#[inline(always)]
pub fn gbm_path<S: NormalPairs, M: MathMode>(p: &PathSteps, normals: &mut Singles<S>) -> (f64, f64) {
    let mut l = LogPrice::new(p.ln_s0);
    let s0 = p.s0;
    let (mut lo, mut hi) = (s0, s0);
    let mut sum = 0.0f64;
    let mut sum_ln = 0.0f64;
    let mut knocked = false;
    let up = p.flags & flags::BARRIER_UP != 0;
    let vega = p.flags & flags::PATHWISE_VEGA != 0;
    // Pathwise vega: `W_{t_i} - σ t_i` at the current date, and its sums (plain and weighted
    // by `S_i`).
    let (sqrt_dt, sigma_dt) = (p.vega[0] as f64, p.vega[1] as f64);
    let (mut w_sum, mut d, mut sum_d, mut sum_sd) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut s = s0;
    let mut t = 0;
    while t < p.steps {
        let z = normals.next();
        l.add(p.mu);
        l.add(z * p.sig);
        s = M::exp(l.value) as f64;
        sum += s;
        sum_ln += l.value as f64;
        lo = lo.min(s);
        hi = hi.max(s);
        knocked |= if up { s >= p.barrier } else { s <= p.barrier };
        if vega {
            w_sum += z as f64;
            d = w_sum * sqrt_dt - (t + 1) as f64 * sigma_dt;
            sum_d += d;
            sum_sd += s * d;
        }
        t += 1;
    }
    let n = p.steps as f64;
    let omega = if p.flags & flags::PUT != 0 { -1.0 } else { 1.0 };
    let g = M::exp((sum_ln / n) as f32) as f64;
    if p.flags & (flags::PATHWISE_DELTA | flags::PATHWISE_VEGA) != 0 {
        // (X, ∂X/∂S_0, ∂X/∂σ) for the payoff's underlying quantity X.
        let (x, dx_ds0, dx_dsigma) = match p.kind {
            kind::ASIAN_ARITHMETIC => (sum / n, sum / n / s0, sum_sd / n),
            kind::ASIAN_GEOMETRIC => (g, g / s0, g * sum_d / n),
            _ => (s, s / s0, s * d),
        };
        let in_money = omega * (x - p.strike) > 0.0;
        let dx = if vega { dx_dsigma } else { dx_ds0 };
        return (if in_money { omega * dx } else { 0.0 }, s);
    }
    // The geometric average from the rounded log-prices the path exponentiated.
    let geometric = || positive_part(omega, g - p.strike);
    match p.kind {
        kind::ASIAN_ARITHMETIC => (positive_part(omega, sum / n - p.strike), geometric()),
        kind::ASIAN_GEOMETRIC => (geometric(), s),
        kind::ASIAN_BARRIER => {
            let payoff = if knocked { 0.0 } else { positive_part(omega, sum / n - p.strike) };
            (payoff, geometric())
        }
        kind::LOOKBACK_FLOATING => (if omega > 0.0 { s - lo } else { hi - s }, s),
        kind::LOOKBACK_FIXED => (if omega > 0.0 { (hi - p.strike).max(0.0) } else { (p.strike - lo).max(0.0) }, s),
        _ => (positive_part(omega, s - p.strike), s),
    }
}

/// One GARCH(1,1) path (Listing 37-9, risk-neutral drift): `(Σ_t (s_t - s_n)⁺, s_n)`.
///
/// Two passes over the same normals (`fresh` gives them from the stream's start each time): the
/// first finds `s_n`, the second regenerates `s_0 .. s_{n-1}` bit for bit and sums their excess
/// over it.
#[inline(always)]
pub fn garch_path<S: NormalPairs, M: MathMode>(p: &PathSteps, mut fresh: impl FnMut() -> Singles<S>) -> (f64, f64) {
    let s_n = garch_pass::<S, M>(p, &mut fresh(), |_, _| {});
    let mut sum = 0.0f64;
    garch_pass::<S, M>(p, &mut fresh(), |_, s| sum += (s - s_n).max(0.0));
    (sum, s_n)
}

/// [`garch_path`] with the path kept in memory instead of replayed, for the benchmark's
/// comparison of the two: `store(t, s_t)` keeps `s_1 .. s_{n-1}` (each an `f32` value widened,
/// so nothing is lost) and `load(t)` returns them; the result is [`garch_path`]'s bit for bit.
#[inline(always)]
pub fn garch_path_stored<S: NormalPairs, M: MathMode>(
    p: &PathSteps,
    normals: &mut Singles<S>,
    mut store: impl FnMut(u32, f32),
    mut load: impl FnMut(u32) -> f32,
) -> (f64, f64) {
    let s_n = garch_pass::<S, M>(p, normals, |t, s| {
        if t > 0 {
            store(t, s as f32)
        }
    });
    let mut sum = (p.s0 - s_n).max(0.0);
    let mut t = 1;
    while t < p.steps {
        sum += (load(t) as f64 - s_n).max(0.0);
        t += 1;
    }
    (sum, s_n)
}

/// One pass of [`garch_path`]: calls `each(t, s_t)` for `t = 0 .. n-1` and returns `s_n`.
#[inline(always)]
fn garch_pass<S: NormalPairs, M: MathMode>(
    p: &PathSteps,
    normals: &mut Singles<S>,
    mut each: impl FnMut(u32, f64),
) -> f64 {
    let [a0, a1, a2, vol0, eps0] = p.garch;
    let mut l = LogPrice::new(p.ln_s0);
    let mut h = vol0 * vol0;
    let mut eps = eps0;
    let mut s = p.s0;
    let mut t = 0;
    while t < p.steps {
        each(t, s);
        h = a0 + a1 * h + a2 * (eps * eps);
        let vol = M::sqrt(h);
        eps = normals.next() * vol;
        l.add(p.mu - 0.5 * h);
        l.add(eps);
        s = M::exp(l.value) as f64;
        t += 1;
    }
    s
}

/// One sample of the leg `p` from the normals `fresh` gives at the stream's start.
#[inline(always)]
pub fn sample_from<S: NormalPairs, M: MathMode>(p: &PathSteps, fresh: &mut impl FnMut() -> S) -> (f64, f64) {
    let mut one = |negate: bool| {
        if p.kind == kind::LOOKBACK_GARCH {
            garch_path::<S, M>(p, || Singles::new(fresh(), negate))
        } else {
            gbm_path::<S, M>(p, &mut Singles::new(fresh(), negate))
        }
    };
    let (a, b) = one(false);
    if p.flags & flags::ANTITHETIC != 0 {
        let (c, d) = one(true);
        (0.5 * (a + c), 0.5 * (b + d))
    } else {
        (a, b)
    }
}

/// One sample of `p` from a pairs source that restarts by copying.
#[inline(always)]
pub fn sample<S: NormalPairs + Copy, M: MathMode>(p: &PathSteps, pairs: S) -> (f64, f64) {
    sample_from::<S, M>(p, &mut || pairs)
}

/// One sample of `legs`: `(Σ_j w_j f_j, leg 0's control)`, every leg from the stream's start.
#[inline(always)]
pub fn sample_legs<S: NormalPairs, M: MathMode>(legs: &Legs, mut fresh: impl FnMut() -> S) -> (f64, f64) {
    let count = legs.count.clamp(1, 3);
    let (mut x, mut y) = (0.0f64, 0.0f64);
    let mut j = 0;
    while j < count {
        let (p, w) = legs.leg(j);
        let (a, b) = sample_from::<S, M>(&p, &mut fresh);
        x += w * a;
        if j == 0 {
            y = b;
        }
        j += 1;
    }
    (x, y)
}

/// What to do with the normals source [`with_transform`] builds: `visit` gets a factory that
/// returns the source at the stream's start each time it is called.
pub trait PairsVisitor {
    type Out;
    fn visit<S: NormalPairs>(self, fresh: impl FnMut() -> S) -> Self::Out;
}

/// Call `v` with normal pairs from the stream `fresh` gives at its start, through the transform
/// of code `normals` (an unknown code is Box-Muller's). The code is uniform over a job, so a warp
/// never diverges on it. One dispatch for every consumer that takes a transform at run time.
#[inline(always)]
pub fn with_transform<G: Uniform32, M: MathMode + Send + Sync, V: PairsVisitor>(
    normals: u32,
    mut fresh: impl FnMut() -> G,
    v: V,
) -> V::Out
where
    Single<M>: Quantile + Zig,
{
    match normals {
        transform::INVERSION => v.visit(|| TransformPairs::<_, Inversion, M>::new(fresh())),
        transform::INVERSION_NAIVE => v.visit(|| TransformPairs::<_, InversionNaive, M>::new(fresh())),
        transform::POLAR => v.visit(|| TransformPairs::<_, Polar, M>::new(fresh())),
        transform::ZIGGURAT => v.visit(|| TransformPairs::<_, Ziggurat, M>::new(fresh())),
        _ => v.visit(|| BoxMuller::<_, M>::new(fresh())),
    }
}

/// One sample of `legs` from the stream `fresh` gives at its start, through the transform leg
/// 0 names (the host gives every leg the same transform).
#[inline(always)]
pub fn sample_legs_with<G: Uniform32, M: MathMode + Send + Sync>(legs: &Legs, fresh: impl FnMut() -> G) -> (f64, f64)
where
    Single<M>: Quantile + Zig,
{
    struct Visit<'a, M>(&'a Legs, core::marker::PhantomData<M>);
    impl<M: MathMode> PairsVisitor for Visit<'_, M> {
        type Out = (f64, f64);
        #[inline(always)]
        fn visit<S: NormalPairs>(self, fresh: impl FnMut() -> S) -> (f64, f64) {
            sample_legs::<S, M>(self.0, fresh)
        }
    }
    with_transform::<G, M, _>(legs.legs[0].normals, fresh, Visit::<M>(legs, core::marker::PhantomData))
}

/// Accumulate samples `first, first + stride, ... < end` of `seed`, sample `k` from stream `k`
/// of `G` (restarted by copying its starting state). The CPU calls it on contiguous chunks, a
/// GPU thread on a grid-stride sequence; the exact sums make the totals identical.
#[inline(always)]
pub fn accumulate<G: Generator, M: MathMode + Send + Sync>(
    legs: &Legs,
    seed: u64,
    first: u64,
    end: u64,
    stride: u64,
    acc: &mut PairMoments,
) where
    Single<M>: Quantile + Zig,
{
    let mut k = first;
    while k < end {
        let start = G::stream(seed, k);
        let (x, control) = sample_legs_with::<_, M>(legs, || start);
        acc.push(x, control);
        k += stride;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Exact;
    use crate::asian::split_f64;
    use crate::normal::ConstantNormals;

    fn steps(kind: u32, n: u32) -> PathSteps {
        PathSteps {
            kind,
            steps: n,
            normals: transform::BOX_MULLER,
            flags: 0,
            ln_s0: split_f64(0.0),
            mu: 0.01,
            sig: 0.0,
            strike: 1.0,
            barrier: 0.5,
            s0: 1.0,
            garch: [0.0; 5],
            vega: [0.0; 2],
            pad: 0,
        }
    }

    /// Normals that are all zero: a deterministic path `S_i = e^{i mu}`.
    fn zeros() -> ConstantNormals {
        ConstantNormals { x: 0.0, dx: 0.0 }
    }

    #[test]
    fn deterministic_paths_give_the_deterministic_payoffs() {
        let n = 10;
        let s = |i: u32| (0.01f64 * i as f64).exp();
        let mean = (1..=n).map(s).sum::<f64>() / n as f64;
        let cases = [
            (kind::EUROPEAN, s(n) - 1.0),
            (kind::ASIAN_ARITHMETIC, mean - 1.0),
            (kind::ASIAN_GEOMETRIC, s(n).sqrt() * (0.01f64 / 2.0).exp() - 1.0),
            (kind::ASIAN_BARRIER, mean - 1.0),
            (kind::LOOKBACK_FLOATING, s(n) - 1.0),
            (kind::LOOKBACK_FIXED, s(n) - 1.0),
        ];
        for (k, want) in cases {
            let (got, _) = sample::<_, Exact>(&steps(k, n), zeros());
            assert!((got - want).abs() < 1e-6, "kind {k}: {got} vs {want}");
        }
        // Barrier below the whole path, knocking out from above: every date is below it.
        let mut p = steps(kind::ASIAN_BARRIER, n);
        p.barrier = 1.05;
        p.flags = flags::BARRIER_UP;
        assert_eq!(sample::<_, Exact>(&p, zeros()).0, 0.0);
        p.barrier = 1.2;
        assert!(sample::<_, Exact>(&p, zeros()).0 > 0.0);
        // A put on a rising path pays nothing; the floating put pays max - last = 0.
        p = steps(kind::EUROPEAN, n);
        p.flags = flags::PUT;
        assert_eq!(sample::<_, Exact>(&p, zeros()).0, 0.0);
        p.kind = kind::LOOKBACK_FLOATING;
        assert!(sample::<_, Exact>(&p, zeros()).0.abs() < 1e-6);
    }

    #[test]
    fn garch_replay_sums_the_excess_over_the_last_price() {
        // A falling path (drift -0.01 per step, no noise): every earlier price exceeds the last.
        let n = 7;
        let mut p = steps(kind::LOOKBACK_GARCH, n);
        p.mu = -0.01;
        p.garch = [0.0, 0.0, 0.0, 0.0, 0.0];
        let s = |i: u32| (-0.01f64 * i as f64).exp();
        let want: f64 = (0..n).map(|t| s(t) - s(n)).sum();
        let (got, last) = sample::<_, Exact>(&p, zeros());
        assert!((got - want).abs() < 1e-6 && (last - s(n)).abs() < 1e-6, "{got} {want} {last}");
    }

    #[test]
    fn garch_stored_path_is_the_replay_bit_for_bit() {
        let mut p = steps(kind::LOOKBACK_GARCH, 50);
        p.mu = -0.002;
        p.garch = [2e-4, 0.3, 0.2, 0.02, 0.01];
        p.s0 = 1.3;
        p.ln_s0 = split_f64(1.3f64.ln());
        let src = ConstantNormals { x: 0.7, dx: -0.031 };
        let replay = sample::<_, Exact>(&p, src);
        let path: [core::cell::Cell<f32>; 50] = core::array::from_fn(|_| core::cell::Cell::new(0.0));
        let stored = garch_path_stored::<_, Exact>(
            &p,
            &mut Singles::new(src, false),
            |t, s| path[t as usize].set(s),
            |t| path[t as usize].get(),
        );
        assert_eq!(replay, stored);
        assert!(replay.0 > 0.0);
    }

    #[test]
    fn pathwise_derivatives_match_bumped_deterministic_paths() {
        // Constant normals 0.5, -0.5, ...: bump S_0 and σ in f64 and difference the payoffs.
        let src = ConstantNormals { x: 0.5, dx: 0.0 };
        let n = 8;
        let (sigma, dt, r) = (0.3f64, 0.25f64, 0.02f64);
        let payoff = |kind_: u32, s0: f64, sig: f64| -> f64 {
            let (mut l, mut sum, mut sum_ln) = (s0.ln(), 0.0, 0.0);
            for i in 0..n {
                let z = if i % 2 == 0 { 0.5 } else { -0.5 };
                l += (r - 0.5 * sig * sig) * dt + sig * dt.sqrt() * z;
                sum += l.exp();
                sum_ln += l;
            }
            let x = match kind_ {
                kind::ASIAN_ARITHMETIC => sum / n as f64,
                kind::ASIAN_GEOMETRIC => (sum_ln / n as f64).exp(),
                _ => l.exp(),
            };
            (x - 0.9).max(0.0)
        };
        for k in [kind::EUROPEAN, kind::ASIAN_ARITHMETIC, kind::ASIAN_GEOMETRIC] {
            let mut p = steps(k, n);
            p.mu = ((r - 0.5 * sigma * sigma) * dt) as f32;
            p.sig = (sigma * dt.sqrt()) as f32;
            p.strike = 0.9;
            p.vega = [dt.sqrt() as f32, (sigma * dt) as f32];
            let h = 1e-5;
            p.flags = flags::PATHWISE_DELTA;
            let delta = sample::<_, Exact>(&p, src).0;
            let want = (payoff(k, 1.0 + h, sigma) - payoff(k, 1.0 - h, sigma)) / (2.0 * h);
            assert!((delta - want).abs() < 2e-5, "kind {k} delta {delta} vs {want}");
            p.flags = flags::PATHWISE_VEGA;
            let vega = sample::<_, Exact>(&p, src).0;
            let want = (payoff(k, 1.0, sigma + h) - payoff(k, 1.0, sigma - h)) / (2.0 * h);
            assert!((vega - want).abs() < 2e-5, "kind {k} vega {vega} vs {want}");
        }
    }

    #[test]
    fn legs_weight_the_same_normals() {
        let mut p = steps(kind::EUROPEAN, 4);
        p.sig = 0.1;
        p.strike = 0.5;
        let src = ConstantNormals { x: 0.3, dx: 0.1 };
        let one = sample::<_, Exact>(&p, src).0;
        let mut q = p;
        q.strike = 0.7;
        let two = sample::<_, Exact>(&q, src).0;
        let legs = Legs { legs: [p, q, p], weights: [2.0, -1.0, 0.0], count: 2, pad: 0 };
        let (x, _) = sample_legs::<_, Exact>(&legs, || src);
        assert_eq!(x, 2.0 * one - two);
        assert_eq!(sample_legs::<_, Exact>(&Legs::single(p), || src).0, one);
    }

    #[test]
    fn antithetic_averages_the_mirrored_path() {
        // ConstantNormals gives (x, -x): a source of constant x = 0.5 makes the path's normals
        // 0.5, -0.5, 0.5, ...; the antithetic half sees -0.5, 0.5, ...
        let mut p = steps(kind::EUROPEAN, 1);
        p.sig = 0.2;
        p.mu = 0.0;
        p.strike = 0.0;
        let src = ConstantNormals { x: 0.5, dx: 0.0 };
        let plain = sample::<_, Exact>(&p, src).0;
        p.flags = flags::ANTITHETIC;
        let anti = sample::<_, Exact>(&p, src).0;
        let want = 0.5 * ((0.1f64).exp() + (-0.1f64).exp());
        assert!((plain - (0.1f64).exp()).abs() < 1e-6, "{plain}");
        assert!((anti - want).abs() < 1e-6, "{anti} vs {want}");
    }
}
