//! warpmc's generators in the Rust RNG ecosystem: [`WarpRng`] implements `rand_core` 0.10's
//! [`TryRng`] (so `Rng`, infallibly) and [`SeedableRng`], so `rand` and `rand_distr` draw from
//! the same streams warpmc's kernels use.
//!
//! A seed is `(seed, stream)`, 16 bytes little-endian: [`SeedableRng::from_seed`] starts at
//! stream `stream` of `seed` by the generator's own rule, [`SeedableRng::seed_from_u64`] at
//! stream 0. Words come out exactly as `warpmc generate --generator NAME --seed S --stream K`
//! prints them; `next_u64` is two words, low first; `fill_bytes` writes words little-endian.
//!
//! ```
//! use rand::RngExt;
//! use rand_core::SeedableRng;
//! use rand_distr::{Distribution, Normal};
//! use warpmc::kernels::rng::Mrg32k3a;
//! use warpmc::rngs::WarpRng;
//!
//! let mut rng = WarpRng::<Mrg32k3a>::from_parts(0, 1); // RngStreams' second stream
//! let u: f64 = rng.random();
//! let x: f64 = Normal::new(0.0, 1.0).unwrap().sample(&mut rng);
//! assert!((0.0..1.0).contains(&u) && x.is_finite());
//! let mut again = WarpRng::<Mrg32k3a>::from_seed(WarpRng::<Mrg32k3a>::seed_bytes(0, 1));
//! assert_eq!(again.random::<f64>(), u);
//! ```

use core::convert::Infallible;

use rand_core::{SeedableRng, TryRng};
use warpmc_kernels::rng::Generator;

/// A warpmc generator as a `rand_core` RNG. Deliberately not `Copy` (a copied RNG repeats its
/// values); `clone` is explicit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpRng<G>(pub G);

impl<G: Generator> WarpRng<G> {
    /// Stream `stream` of `seed` (the generator's own rule).
    pub fn from_parts(seed: u64, stream: u64) -> Self {
        Self(G::stream(seed, stream))
    }

    /// The 16-byte [`SeedableRng::Seed`] of `(seed, stream)`.
    pub fn seed_bytes(seed: u64, stream: u64) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&seed.to_le_bytes());
        b[8..].copy_from_slice(&stream.to_le_bytes());
        b
    }
}

impl<G: Generator> TryRng for WarpRng<G> {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.0.next_u32())
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        rand_core::utils::next_u64_via_u32(self)
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        rand_core::utils::fill_bytes_via_next_word(dst, || self.try_next_u32())
    }
}

impl<G: Generator> SeedableRng for WarpRng<G> {
    /// `seed` then `stream`, each a little-endian `u64`.
    type Seed = [u8; 16];

    fn from_seed(seed: [u8; 16]) -> Self {
        let word = |i: usize| u64::from_le_bytes(seed[i..i + 8].try_into().expect("eight bytes"));
        Self::from_parts(word(0), word(8))
    }

    /// Stream 0 of `state`.
    fn seed_from_u64(state: u64) -> Self {
        Self::from_parts(state, 0)
    }
}

#[cfg(test)]
mod tests {
    use rand_core::Rng;

    use super::*;
    use crate::generators::GeneratorKind;

    fn check<G: Generator + PartialEq + core::fmt::Debug>() {
        let mut rng = WarpRng::<G>::from_seed(WarpRng::<G>::seed_bytes(77, 5));
        let mut plain = G::stream(77, 5);
        assert_eq!(rng.0, plain, "{}", G::NAME);
        let words: Vec<u32> = (0..6).map(|_| plain.next_u32()).collect();
        assert_eq!(rng.next_u32(), words[0]);
        assert_eq!(rng.next_u64(), words[1] as u64 | (words[2] as u64) << 32);
        let mut bytes = [0u8; 11];
        rng.fill_bytes(&mut bytes);
        let expect: Vec<u8> = words[3..6].iter().flat_map(|w| w.to_le_bytes()).take(11).collect();
        assert_eq!(bytes.to_vec(), expect, "{}", G::NAME);
        assert_eq!(WarpRng::<G>::seed_from_u64(9).0, G::stream(9, 0));
    }

    #[test]
    fn every_generator_is_a_rand_core_rng_on_its_own_streams() {
        for &g in GeneratorKind::ALL {
            crate::with_generator!(g, G => check::<G>());
        }
    }

    #[test]
    fn rand_and_rand_distr_use_it() {
        use rand::RngExt;
        use rand_distr::{Distribution, Exp1};
        let mut rng = WarpRng::<warpmc_kernels::rng::Philox4x32x10>::seed_from_u64(1);
        let n = 100_000;
        let mean = (0..n).map(|_| rng.random::<f64>()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 5.0 * (1.0 / 12.0f64 / n as f64).sqrt(), "{mean}");
        let e: f64 = (0..n).map(|_| -> f64 { Exp1.sample(&mut rng) }).sum::<f64>() / n as f64;
        assert!((e - 1.0).abs() < 5.0 / (n as f64).sqrt(), "{e}");
    }
}
