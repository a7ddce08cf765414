//! Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3",
//! SC11): a counter-based generator, `output = f(counter, key)`.
//!
//! Round: `(hi0, lo0) = 0xD2511F53 * x0`, `(hi1, lo1) = 0xCD9E8D57 * x2` (64-bit products), then
//! `x = (hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0)`; between rounds the key is bumped by
//! `(0x9E3779B9, 0xBB67AE85)`. For a fixed key the map counter -> output is a bijection.

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

use crate::platform::mul_hi_lo_u32 as mulhilo;

/// Philox4x32 with ten rounds.
#[inline(always)]
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut x = counter;
    let mut k = key;
    let mut round = 0;
    while round < 10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(W0);
            k[1] = k[1].wrapping_add(W1);
        }
        let (hi0, lo0) = mulhilo(M0, x[0]);
        let (hi1, lo1) = mulhilo(M1, x[2]);
        x = [hi1 ^ x[1] ^ k[0], lo1, hi0 ^ x[3] ^ k[1], lo0];
        round += 1;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's kat_vectors for philox4x32 with 10 rounds (published; docs/ALGORITHMS.md).
    #[test]
    fn reference() {
        assert_eq!(philox4x32_10([0; 4], [0; 2]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
        assert_eq!(philox4x32_10([u32::MAX; 4], [u32::MAX; 2]), [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]);
        assert_eq!(
            philox4x32_10([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }
}
