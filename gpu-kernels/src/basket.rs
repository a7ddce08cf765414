//! The Asian basket on `N` correlated assets (GPU Gems 3's two-asset basket, Listing 37-8,
//! generalised), one pure function per path shared by the CPU and the GPU.
//!
//! **Model.** Each asset follows a risk-neutral geometric Brownian motion with its own spot,
//! volatility `σ_k` and dividend yield `q_k`, the Brownian motions correlated by a matrix `C`
//! with Cholesky factor `F` (`C = F Fᵀ`, computed on the host). At the dates `t_i = i T / n`,
//! with `N` independent standard normals `z_1..z_N` per date,
//!
//! ```text
//! ln S_k(t_i) = ln S_k(t_{i-1}) + mu_k + Σ_{j <= k} L_kj z_j,   L_kj = σ_k √dt F_kj,
//! mu_k = (r - q_k - σ_k²/2) dt,
//! ```
//!
//! exact for GBM at any step. As in [`crate::asian`], each log-price is a Kahan-compensated
//! `f32` sum ([`LogPrice`]) exponentiated at each date, in units `U` the host chooses. With
//! `N = 2` the step is the chapter's: the first normal drives asset 0, asset 1 takes
//! `L_10 z_1 + L_11 z_2` (the chapter's `sig_ab ra + sig_bb rb`), summed in the same order.
//!
//! **Payoffs** ([`payoff`]; `ω = ±1` for a call or a put):
//!
//! | code | payoff | control |
//! |---|---|---|
//! | [`payoff::CHAPTER`] | `(mean_i m_i - m_n)⁺`, `m_i = max_k S_k(t_i)` (the chapter's, on `N` assets) | the unfloored `mean_i m_i - m_n` |
//! | [`payoff::AVERAGE`] | `(ω(A - K))⁺`, `A = mean_i Σ_k w_k S_k(t_i)` (an arithmetic Asian on a weighted basket) | `(ω(G - K))⁺`, `G = W exp(mean_i Σ_k v_k ln S_k(t_i))` |
//!
//! with weights `w_k > 0`, `W = Σ w_k` and `v_k = w_k / W`. `G` is log-normal, so the
//! geometric control has a closed-form price (the host's); the chapter's control has one for
//! `N <= 2` (Margrabe's formula at each date). Each path returns `(payoff, control)`,
//! undiscounted, in units of `U`.
//!
//! **Legs** (Greeks by finite differences on common random numbers, as
//! [`crate::instrument::Legs`]): a sample is `Σ_j λ_j f_j` over up to [`MAX_LEGS`] coefficient
//! sets ([`BasketLeg`]: bumped spots or volatilities) run on the same normals from the stream's
//! start; the control is leg 0's. **Antithetic variates** average a path and its mirror.
//!
//! The coefficient sets are large (2.8 KB each), so the GPU kernels read them from global
//! memory, where every thread reads the same addresses (a broadcast from the cache), not from
//! the kernel's parameters.

use crate::MathMode;
use crate::accum::PairMoments;
use crate::asian::LogPrice;
use crate::instrument::{PairsVisitor, Singles, with_transform};
use crate::inverse_normal::Quantile;
use crate::normal::NormalPairs;
use crate::real::Single;
use crate::rng::{Generator, Uniform32};
use crate::ziggurat::Zig;

/// The most assets a basket may have.
pub const MAX_ASSETS: usize = 32;
/// Entries of a lower triangle of [`MAX_ASSETS`] rows.
pub const FACTORS: usize = MAX_ASSETS * (MAX_ASSETS + 1) / 2;
/// The most legs of a sample.
pub const MAX_LEGS: usize = 3;

/// Payoff codes ([`BasketJob::payoff`]).
pub mod payoff {
    /// GPU Gems 3's: the average over the dates of the basket's maximum, less its final value.
    pub const CHAPTER: u32 = 0;
    /// An arithmetic-average Asian option on the weighted sum of the assets, fixed strike.
    pub const AVERAGE: u32 = 1;
}

/// Bits of [`BasketJob::flags`].
pub mod flags {
    /// A put (the average payoff only).
    pub const PUT: u32 = 1;
    /// Antithetic variates: each sample averages the path over `z` and `-z`.
    pub const ANTITHETIC: u32 = 2;
}

/// What every leg of a job shares, as the kernels take it (by value).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct BasketJob {
    /// Assets `1..=`[`MAX_ASSETS`] (clamped to that range).
    pub assets: u32,
    /// Dates `n >= 1`.
    pub steps: u32,
    /// The normal transform, a code of [`crate::dist::transform`].
    pub normals: u32,
    /// Bits of [`flags`].
    pub flags: u32,
    /// A code of [`payoff`].
    pub payoff: u32,
    /// Legs in the coefficient array, `1..=`[`MAX_LEGS`] (clamped).
    pub legs: u32,
}

/// One leg's coefficients (computed in `f64` on the host and rounded once). Unused assets'
/// entries are zero.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct BasketLeg {
    /// `ln(S_k(0) / U)` as `hi + lo` ([`crate::asian::split_f64`]).
    pub ln_s0: [[f32; 2]; MAX_ASSETS],
    /// `mu_k = (r - q_k - σ_k²/2) dt`.
    pub mu: [f32; MAX_ASSETS],
    /// `L_kj = σ_k √dt F_kj` for `j <= k`, row by row: `L_kj` at `k (k + 1) / 2 + j`.
    pub chol: [f32; FACTORS],
    /// The weights `w_k` of the average payoff.
    pub weight: [f64; MAX_ASSETS],
    /// `v_k = w_k / W`, the geometric control's exponents.
    pub geo_weight: [f64; MAX_ASSETS],
    /// `ln W`.
    pub ln_total_weight: f64,
    /// `K / U` (the average payoff).
    pub strike: f64,
    /// `λ_j`, this leg's weight in the sample.
    pub leg_weight: f64,
}

// No padding anywhere (the host copies the sets to the device as bytes).
const _: () = assert!(core::mem::size_of::<BasketLeg>() == 8 * 32 + 4 * 32 + 4 * FACTORS + 2 * 8 * 32 + 3 * 8);

impl BasketLeg {
    /// Every coefficient zero.
    pub const ZERO: Self = Self {
        ln_s0: [[0.0; 2]; MAX_ASSETS],
        mu: [0.0; MAX_ASSETS],
        chol: [0.0; FACTORS],
        weight: [0.0; MAX_ASSETS],
        geo_weight: [0.0; MAX_ASSETS],
        ln_total_weight: 0.0,
        strike: 0.0,
        leg_weight: 0.0,
    };
}

/// `(ω x)⁺`.
#[inline(always)]
fn positive_part(omega: f64, x: f64) -> f64 {
    (omega * x).max(0.0)
}

/// `k` as an index of the per-asset arrays: in range by construction (`MAX_ASSETS` is a power
/// of two, and `k < MAX_ASSETS` wherever it is used), so the GPU build has no bounds checks to
/// panic on (its module may call no function it does not define).
#[inline(always)]
fn a(k: usize) -> usize {
    k & (MAX_ASSETS - 1)
}

const _: () = assert!(MAX_ASSETS.is_power_of_two());

/// One path of leg `c`: `(payoff, control)` in units of `U`, undiscounted.
#[inline(always)]
pub fn path<S: NormalPairs, M: MathMode>(job: &BasketJob, c: &BasketLeg, normals: &mut Singles<S>) -> (f64, f64) {
    let n = (job.assets as usize).clamp(1, MAX_ASSETS);
    let mut l = [LogPrice::new([0.0, 0.0]); MAX_ASSETS];
    let mut k = 0;
    while k < n {
        l[a(k)] = LogPrice::new(c.ln_s0[a(k)]);
        k += 1;
    }
    let average = job.payoff == payoff::AVERAGE;
    let mut z = [0.0f32; MAX_ASSETS];
    let (mut sum, mut geo, mut last) = (0.0f64, 0.0f64, 0.0f64);
    let mut t = 0;
    while t < job.steps {
        let mut j = 0;
        while j < n {
            z[a(j)] = normals.next();
            j += 1;
        }
        let mut row = 0;
        k = 0;
        while k < n {
            let mut x = 0.0f32;
            j = 0;
            while j <= k {
                // `get`: `row + j < FACTORS` always (`k < MAX_ASSETS`), but not provably so.
                x += c.chol.get(row + j).copied().unwrap_or(0.0) * z[a(j)];
                j += 1;
            }
            row += k + 1;
            // The drift separately, as in the chapter's path: at small volatilities it is below
            // an ulp of the diffusion term.
            l[a(k)].add(c.mu[a(k)]);
            l[a(k)].add(x);
            k += 1;
        }
        if average {
            let mut b = 0.0f64;
            k = 0;
            while k < n {
                b += c.weight[a(k)] * M::exp(l[a(k)].value) as f64;
                geo += c.geo_weight[a(k)] * l[a(k)].value as f64;
                k += 1;
            }
            sum += b;
        } else {
            // The basket's maximum is the exponential of the largest log-price: one exp a date.
            let mut top = l[0].value;
            k = 1;
            while k < n {
                top = top.max(l[a(k)].value);
                k += 1;
            }
            last = M::exp(top) as f64;
            sum += last;
        }
        t += 1;
    }
    let steps = job.steps as f64;
    if average {
        let omega = if job.flags & flags::PUT != 0 { -1.0 } else { 1.0 };
        let g = M::exp((geo / steps + c.ln_total_weight) as f32) as f64;
        (positive_part(omega, sum / steps - c.strike), positive_part(omega, g - c.strike))
    } else {
        let unfloored = sum / steps - last;
        (unfloored.max(0.0), unfloored)
    }
}

/// One sample of `legs` (at most [`MAX_LEGS`] are used): `(Σ_j λ_j f_j, leg 0's control)`,
/// every leg (and each antithetic half) from the stream's start as `fresh` gives it.
#[inline(always)]
pub fn sample<S: NormalPairs, M: MathMode>(
    job: &BasketJob,
    legs: &[BasketLeg],
    mut fresh: impl FnMut() -> S,
) -> (f64, f64) {
    let count = (job.legs as usize).clamp(1, MAX_LEGS).min(legs.len());
    let (mut x, mut y) = (0.0f64, 0.0f64);
    let mut j = 0;
    while j < count {
        let Some(c) = legs.get(j) else { break };
        let (mut a, mut b) = path::<S, M>(job, c, &mut Singles::new(fresh(), false));
        if job.flags & flags::ANTITHETIC != 0 {
            let (a2, b2) = path::<S, M>(job, c, &mut Singles::new(fresh(), true));
            a = 0.5 * (a + a2);
            b = 0.5 * (b + b2);
        }
        x += c.leg_weight * a;
        if j == 0 {
            y = b;
        }
        j += 1;
    }
    (x, y)
}

/// [`sample`] through the transform `job.normals` names, from the stream `fresh` gives.
#[inline(always)]
pub fn sample_with<G: Uniform32, M: MathMode + Send + Sync>(
    job: &BasketJob,
    legs: &[BasketLeg],
    fresh: impl FnMut() -> G,
) -> (f64, f64)
where
    Single<M>: Quantile + Zig,
{
    struct Visit<'a, M>(&'a BasketJob, &'a [BasketLeg], core::marker::PhantomData<M>);
    impl<M: MathMode> PairsVisitor for Visit<'_, M> {
        type Out = (f64, f64);
        #[inline(always)]
        fn visit<S: NormalPairs>(self, fresh: impl FnMut() -> S) -> (f64, f64) {
            sample::<S, M>(self.0, self.1, fresh)
        }
    }
    with_transform::<G, M, _>(job.normals, fresh, Visit::<M>(job, legs, core::marker::PhantomData))
}

/// Accumulate samples `first, first + stride, ... < end` of `seed`, sample `k` from stream `k`
/// of `G` (restarted by copying its starting state), as [`crate::instrument::accumulate`].
#[inline(always)]
pub fn accumulate<G: Generator, M: MathMode + Send + Sync>(
    job: &BasketJob,
    legs: &[BasketLeg],
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
        let (x, control) = sample_with::<_, M>(job, legs, || start);
        acc.push(x, control);
        k += stride;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Exact;
    use crate::asian::{AsianBasketSteps, split_f64};
    use crate::dist::transform;
    use crate::normal::ConstantNormals;

    fn job(assets: u32, steps: u32, payoff: u32) -> BasketJob {
        BasketJob { assets, steps, normals: transform::BOX_MULLER, flags: 0, payoff, legs: 1 }
    }

    #[test]
    fn two_assets_take_the_chapters_step_bit_for_bit() {
        let p = AsianBasketSteps {
            ln_a0: split_f64(-0.1),
            ln_b0: split_f64(0.0),
            mu_a: 0.0011,
            sig_aa: 0.02,
            mu_b: -0.0007,
            sig_ab: 0.013,
            sig_bb: 0.027,
            steps: 50,
            normals: transform::BOX_MULLER,
        };
        let mut c = BasketLeg::ZERO;
        c.ln_s0[0] = p.ln_a0;
        c.ln_s0[1] = p.ln_b0;
        c.mu[0] = p.mu_a;
        c.mu[1] = p.mu_b;
        c.chol[0] = p.sig_aa;
        c.chol[1] = p.sig_ab;
        c.chol[2] = p.sig_bb;
        c.leg_weight = 1.0;
        let src = ConstantNormals { x: 0.9, dx: -0.037 };
        let chapter = crate::asian::path::<_, Exact>(&p, &mut { src });
        let ours = sample::<_, Exact>(&job(2, 50, payoff::CHAPTER), &[c], || src);
        assert_eq!(chapter, ours);
        assert!(ours.0 > 0.0 || ours.1 != 0.0);
    }

    #[test]
    fn deterministic_average_basket() {
        // No volatility: S_k(t_i) = S_k e^{i mu_k}; the average payoff and the geometric control
        // are known exactly.
        let (n, steps) = (3usize, 4u32);
        let mut c = BasketLeg::ZERO;
        let spots = [0.5f64, 0.8, 1.0];
        let mus = [0.01f32, -0.02, 0.005];
        let w = [1.0f64, 2.0, 0.5];
        let total: f64 = w.iter().sum();
        for k in 0..n {
            c.ln_s0[k] = split_f64(spots[k].ln());
            c.mu[k] = mus[k];
            c.weight[k] = w[k];
            c.geo_weight[k] = w[k] / total;
        }
        c.ln_total_weight = total.ln();
        c.strike = 1.2;
        c.leg_weight = 1.0;
        let s = |k: usize, i: u32| spots[k] * (mus[k] as f64 * i as f64).exp();
        let a: f64 = (1..=steps).map(|i| (0..n).map(|k| w[k] * s(k, i)).sum::<f64>()).sum::<f64>() / steps as f64;
        let lng: f64 =
            (1..=steps).map(|i| (0..n).map(|k| w[k] / total * s(k, i).ln()).sum::<f64>()).sum::<f64>() / steps as f64;
        let g = total * lng.exp();
        let (pay, control) =
            sample::<_, Exact>(&job(3, steps, payoff::AVERAGE), &[c], || ConstantNormals { x: 0.0, dx: 0.0 });
        assert!((pay - (a - 1.2).max(0.0)).abs() < 1e-6, "{pay} vs {}", a - 1.2);
        assert!((control - (g - 1.2).max(0.0)).abs() < 1e-6, "{control} vs {}", g - 1.2);
        let mut put = job(3, steps, payoff::AVERAGE);
        put.flags = flags::PUT;
        c.strike = 3.0;
        let (pay, _) = sample::<_, Exact>(&put, &[c], || ConstantNormals { x: 0.0, dx: 0.0 });
        assert!((pay - (3.0 - a)).abs() < 1e-6 && a < 3.0, "{pay} vs {}", 3.0 - a);
    }

    #[test]
    fn legs_and_antithetic_use_the_same_normals() {
        let mut c = BasketLeg::ZERO;
        for k in 0..3 {
            c.ln_s0[k] = split_f64(-0.05 * k as f64);
            c.mu[k] = 0.001;
            c.weight[k] = 1.0 / 3.0;
            c.geo_weight[k] = 1.0 / 3.0;
        }
        c.chol[..6].copy_from_slice(&[0.03, 0.01, 0.02, 0.005, 0.004, 0.025]);
        c.strike = 0.9;
        c.leg_weight = 1.0;
        let src = ConstantNormals { x: 0.4, dx: 0.11 };
        let j = job(3, 9, payoff::AVERAGE);
        let one = sample::<_, Exact>(&j, &[c], || src);
        let mut d = c;
        d.strike = 0.95;
        d.leg_weight = -2.0;
        let mut two = j;
        two.legs = 2;
        let both = sample::<_, Exact>(&two, &[c, d], || src);
        let other = sample::<_, Exact>(&j, &[BasketLeg { leg_weight: 1.0, ..d }], || src);
        assert_eq!(both.0, one.0 - 2.0 * other.0);
        assert_eq!(both.1, one.1);
        let mut anti = j;
        anti.flags = flags::ANTITHETIC;
        let mirrored = sample::<_, Exact>(&anti, &[c], || src);
        let neg = ConstantNormals { x: -0.4, dx: -0.11 };
        let back = sample::<_, Exact>(&j, &[c], || neg);
        assert_eq!(mirrored.0, 0.5 * (one.0 + back.0));
    }
}
