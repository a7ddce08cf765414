//! Exact, order-independent accumulation of Monte Carlo statistics.
//!
//! Each per-path value is rounded once to a fixed-point number with 64 fractional bits and
//! summed in a 192-bit two's-complement integer ([`ExactSum`]). Integer addition is associative,
//! so the sum is the same whatever the order: GPU grid shape, block size, CPU thread count or
//! backend. This is Thomas's rule ("accumulate in double, or in fixed point in wide integers")
//! taken to the point where parity is exact.
//!
//! Range: a value must satisfy `|v| < 2^31` so that its square fits too ([`PairMoments`]); the
//! 192-bit sum then cannot overflow before 2^64 values. Resolution: `2^-64` per value (the
//! rounding is to nearest, ties to even).

/// `2^64` as `f64`.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// `2^32` as `f64`.
const TWO_POW_32: f64 = 4_294_967_296.0;

/// Round `s` (with `|s| < 2^53`) to the nearest integer, ties to even.
#[inline(always)]
fn round_ties_even(s: f64) -> i64 {
    let t = s as i64; // truncates toward zero on both builds
    let frac = s - t as f64; // exact
    let odd = t & 1 != 0;
    if frac > 0.5 || (frac == 0.5 && odd) {
        t + 1
    } else if frac < -0.5 || (frac == -0.5 && odd) {
        t - 1
    } else {
        t
    }
}

/// `round(v * 2^64)` as a signed 128-bit integer, for `|v| < 2^62`; `None` otherwise (NaN and
/// infinities included). Exact: the only rounding is the final one to an integer (to nearest,
/// ties to even).
///
/// `v` is split in floating point into its integer part and two 32-bit chunks of its fraction;
/// every step is exact (taking the integer part of a float and scaling by a power of two lose
/// nothing), so only the last chunk is rounded. Written with constant shifts only: a variable
/// 128-bit shift costs a GPU dozens of registers.
#[inline(always)]
pub fn to_fixed64(v: f64) -> Option<i128> {
    if !(v.abs() < 4_611_686_018_427_387_904.0) {
        return None;
    }
    let int = v as i64;
    let r1 = (v - int as f64) * TWO_POW_32; // |r1| < 2^32, exact
    let mid = r1 as i64;
    let r2 = (r1 - mid as f64) * TWO_POW_32; // |r2| < 2^32, exact
    let low = round_ties_even(r2);
    Some(((int as i128) << 64) + ((mid as i128) << 32) + low as i128)
}

/// A 192-bit two's-complement fixed-point sum with 64 fractional bits, little-endian words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct ExactSum {
    pub w: [u64; 3],
}

impl ExactSum {
    pub const ZERO: Self = Self { w: [0; 3] };

    /// Add a fixed-point value (units of `2^-64`), as from [`to_fixed64`].
    #[inline(always)]
    pub fn add_fixed(&mut self, q: i128) {
        let low = (self.w[0] as u128) | ((self.w[1] as u128) << 64);
        let (sum, carry) = low.overflowing_add(q as u128);
        let ext = if q < 0 { u64::MAX } else { 0 };
        self.w[0] = sum as u64;
        self.w[1] = (sum >> 64) as u64;
        self.w[2] = self.w[2].wrapping_add(ext).wrapping_add(carry as u64);
    }

    /// Add another sum.
    #[inline(always)]
    pub fn merge(&mut self, other: &Self) {
        let a = (self.w[0] as u128) | ((self.w[1] as u128) << 64);
        let b = (other.w[0] as u128) | ((other.w[1] as u128) << 64);
        let (sum, carry) = a.overflowing_add(b);
        self.w[0] = sum as u64;
        self.w[1] = (sum >> 64) as u64;
        self.w[2] = self.w[2].wrapping_add(other.w[2]).wrapping_add(carry as u64);
    }

    /// The value as `f64` (rounded; exact sums, approximate presentation).
    pub fn to_f64(&self) -> f64 {
        let negative = (self.w[2] >> 63) != 0;
        let mut w = self.w;
        if negative {
            // Two's-complement negation over three words.
            let mut carry = 1u64;
            for x in w.iter_mut() {
                let (s, c) = (!*x).overflowing_add(carry);
                *x = s;
                carry = c as u64;
            }
        }
        // The integer part, rounded once: through `u64` when it fits, the same value (both
        // conversions round to nearest) at a fraction of the cost of `u128`'s software
        // conversion (the integrator converts two sums of every hypercube, a million or more,
        // between two launches).
        let high = if w[2] == 0 { w[1] as f64 } else { (((w[2] as u128) << 64) | w[1] as u128) as f64 };
        let mag = high + (w[0] as f64) / TWO_POW_64;
        if negative { -mag } else { mag }
    }
}

/// Exact sums of the first and second moments of pairs `(a, b)` of per-path values: `Σa`, `Σb`,
/// `Σa²`, `Σb²`, `Σab`, with the count of pairs and of pairs outside the representable range.
///
/// A pair is accumulated only if both values are finite and `|v| < 2^31`; otherwise it is
/// counted in `out_of_range` and left out, and the caller must treat a non-zero count as an
/// error (a silently dropped path would bias the estimate).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct PairMoments {
    pub n: u64,
    pub out_of_range: u64,
    pub sum_a: ExactSum,
    pub sum_b: ExactSum,
    pub sum_aa: ExactSum,
    pub sum_bb: ExactSum,
    pub sum_ab: ExactSum,
}

/// Largest magnitude (exclusive) of an accumulated value.
pub const MAX_ABS: f64 = 2_147_483_648.0;

impl PairMoments {
    /// Number of `u64` words in [`Self::to_words`].
    pub const WORDS: usize = 17;

    pub const ZERO: Self = Self {
        n: 0,
        out_of_range: 0,
        sum_a: ExactSum::ZERO,
        sum_b: ExactSum::ZERO,
        sum_aa: ExactSum::ZERO,
        sum_bb: ExactSum::ZERO,
        sum_ab: ExactSum::ZERO,
    };

    /// Accumulate one pair.
    #[inline(always)]
    pub fn push(&mut self, a: f64, b: f64) {
        self.n += 1;
        // `!(x < MAX)` is also true for NaN.
        if !(a.abs() < MAX_ABS) || !(b.abs() < MAX_ABS) {
            self.out_of_range += 1;
            return;
        }
        // In range, every product is below 2^62, so no conversion can fail.
        let q = |v: f64| to_fixed64(v).unwrap_or(0);
        self.sum_a.add_fixed(q(a));
        self.sum_b.add_fixed(q(b));
        self.sum_aa.add_fixed(q(a * a));
        self.sum_bb.add_fixed(q(b * b));
        self.sum_ab.add_fixed(q(a * b));
    }

    /// Add another accumulator.
    #[inline(always)]
    pub fn merge(&mut self, o: &Self) {
        self.n += o.n;
        self.out_of_range += o.out_of_range;
        self.sum_a.merge(&o.sum_a);
        self.sum_b.merge(&o.sum_b);
        self.sum_aa.merge(&o.sum_aa);
        self.sum_bb.merge(&o.sum_bb);
        self.sum_ab.merge(&o.sum_ab);
    }

    /// Flat form: `[n, out_of_range, sum_a.w[0..3], sum_b.., sum_aa.., sum_bb.., sum_ab..]`.
    #[inline(always)]
    pub fn to_words(&self) -> [u64; Self::WORDS] {
        let mut out = [0u64; Self::WORDS];
        out[0] = self.n;
        out[1] = self.out_of_range;
        let sums = [&self.sum_a, &self.sum_b, &self.sum_aa, &self.sum_bb, &self.sum_ab];
        let mut i = 2;
        for s in sums {
            out[i] = s.w[0];
            out[i + 1] = s.w[1];
            out[i + 2] = s.w[2];
            i += 3;
        }
        out
    }

    /// Inverse of [`Self::to_words`].
    #[inline(always)]
    pub fn from_words(w: &[u64; Self::WORDS]) -> Self {
        let s = |i: usize| ExactSum { w: [w[i], w[i + 1], w[i + 2]] };
        Self { n: w[0], out_of_range: w[1], sum_a: s(2), sum_b: s(5), sum_aa: s(8), sum_bb: s(11), sum_ab: s(14) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_conversion_is_exact_and_rounds_to_even() {
        assert_eq!(to_fixed64(1.0), Some(1i128 << 64));
        assert_eq!(to_fixed64(-2.5), Some(-(5i128 << 63)));
        assert_eq!(to_fixed64(2f64.powi(-64)), Some(1));
        assert_eq!(to_fixed64(2f64.powi(-65)), Some(0)); // tie -> even (0)
        assert_eq!(to_fixed64(3.0 * 2f64.powi(-65)), Some(2)); // 1.5 -> 2
        assert_eq!(to_fixed64(-3.0 * 2f64.powi(-65)), Some(-2));
        assert_eq!(to_fixed64(f64::MIN_POSITIVE), Some(0));
        assert_eq!(to_fixed64(5e-324), Some(0));
        assert_eq!(to_fixed64(2f64.powi(62)), None);
        assert_eq!(to_fixed64(f64::NAN), None);
        assert_eq!(to_fixed64(f64::INFINITY), None);
        let v = 0.1f64;
        let q = to_fixed64(v).unwrap();
        assert!(((q as f64) / TWO_POW_64 - v).abs() < 1e-19);
    }

    /// Independent reference: shift the mantissa as an exact integer, round half to even.
    fn reference_fixed64(v: f64) -> Option<i128> {
        if !(v.abs() < 2f64.powi(62)) {
            return None;
        }
        let bits = v.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1u64 << 52) - 1);
        let (mant, e) = if biased == 0 { (frac, -1074) } else { (frac | (1u64 << 52), biased - 1075) };
        let shift = e + 64;
        let mag: u128 = if shift >= 0 {
            (mant as u128) << shift
        } else if shift <= -54 {
            0
        } else {
            let n = (-shift) as u32;
            let (t, rem, half) = (mant >> n, mant & ((1u64 << n) - 1), 1u64 << (n - 1));
            (t + (rem > half || (rem == half && t & 1 == 1)) as u64) as u128
        };
        Some(if bits >> 63 != 0 { -(mag as i128) } else { mag as i128 })
    }

    #[test]
    fn fixed_conversion_matches_the_mantissa_reference() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..2_000_000u64 {
            // SplitMix64 bit patterns, mapped to doubles of every magnitude below 2^63.
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let v = f64::from_bits((z & 0x800F_FFFF_FFFF_FFFF) | (((z >> 52) % 1150) << 52));
            let v = if i % 3 == 0 { (v * 1e-3).fract() * 2f64.powi(-((i % 70) as i32)) } else { v };
            assert_eq!(to_fixed64(v), reference_fixed64(v), "v = {v:e} ({:#x})", v.to_bits());
        }
    }

    #[test]
    fn to_f64_rounds_as_the_whole_integer_part_does() {
        // The `u64` shortcut against the `u128` conversion of the integer part, on values whose
        // integer parts need rounding (above 2^53, with ties), straddle 2^64, or are small, of
        // both signs.
        let reference = |s: &ExactSum| {
            let negative = (s.w[2] >> 63) != 0;
            let mut w = s.w;
            if negative {
                // -x = !x + 1, over the three words.
                let low = ((!w[1] as u128) << 64 | !w[0] as u128).wrapping_add(1);
                let carry = (low == 0) as u64;
                w = [low as u64, (low >> 64) as u64, (!w[2]).wrapping_add(carry)];
            }
            let mag = ((w[2] as u128) << 64 | w[1] as u128) as f64 + (w[0] as f64) / TWO_POW_64;
            if negative { -mag } else { mag }
        };
        let mut state = 11u64;
        let mut next = || crate::rng::testing::splitmix64(&mut state);
        for i in 0..20_000 {
            let r = next();
            let w1 = match i % 5 {
                0 => r,
                1 => (1u64 << 53) + (r & 0x7ff) | 1 << 63, // ties and near-ties above 2^53
                2 => u64::MAX - (r & 0xfff),
                3 => r >> (r % 64),
                _ => (r | 1) << 10 | 0x200, // exactly halfway between two f64s at 2^63
            };
            let w2 = match i % 7 {
                0 => 1,
                1 => next() >> 40,
                2 => u64::MAX, // negative, small magnitude
                _ => 0,
            };
            let s = ExactSum { w: [next(), w1, w2] };
            let (got, want) = (s.to_f64(), reference(&s));
            assert_eq!(got.to_bits(), want.to_bits(), "{:?}: {got:e} against {want:e}", s.w);
        }
    }

    #[test]
    fn sums_carry_across_words_and_signs() {
        let mut s = ExactSum::ZERO;
        let big = (1i128 << 125) + 12345;
        for _ in 0..8 {
            s.add_fixed(big);
        }
        for _ in 0..8 {
            s.add_fixed(-big);
        }
        assert_eq!(s, ExactSum::ZERO);
        s.add_fixed(-1);
        assert_eq!(s.w, [u64::MAX; 3]);
        assert_eq!(s.to_f64(), -1.0 / TWO_POW_64);
        let mut t = ExactSum::ZERO;
        t.add_fixed(1);
        t.merge(&s);
        assert_eq!(t, ExactSum::ZERO);
    }

    #[test]
    fn order_does_not_matter() {
        let vals: Vec<f64> = (0..1000).map(|i| ((i * 7919) % 1000) as f64 * 0.37 - 150.0).collect();
        let mut fwd = PairMoments::ZERO;
        for &v in &vals {
            fwd.push(v, -v * 0.5);
        }
        let mut halves = [PairMoments::ZERO; 2];
        for (i, &v) in vals.iter().enumerate().rev() {
            halves[i % 2].push(v, -v * 0.5);
        }
        let mut merged = halves[1];
        merged.merge(&halves[0]);
        assert_eq!(fwd, merged);
        assert_eq!(PairMoments::from_words(&fwd.to_words()), fwd);
    }

    #[test]
    fn out_of_range_is_counted_not_summed() {
        let mut m = PairMoments::ZERO;
        m.push(f64::NAN, 1.0);
        m.push(1.0, MAX_ABS);
        m.push(1.0, 2.0);
        assert_eq!((m.n, m.out_of_range), (3, 2));
        assert_eq!(m.sum_a.to_f64(), 1.0);
        assert_eq!(m.sum_ab.to_f64(), 2.0);
    }
}
