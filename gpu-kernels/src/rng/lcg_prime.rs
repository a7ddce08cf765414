//! Parallel 32-bit linear congruential generators with distinct prime increments: the method
//! of TI's "Monte Carlo example" (OpenCL on Keystone DSPs, the project's seed document
//! `004_0d2f22048634574d.txt`), which generates parallel normal sequences with one LCG
//! `x = (a x + c) mod M` per stream and, following the SIAM News article it cites
//! (siam.org/pdf/news/744.pdf), "uses set of prime numbers" as the additive constants `c`.
//!
//! **Constants.** The TI text names neither `a` nor `M` ("the constants a and M of formula were
//! chosen to ensure a long pseudo random sequence"), so this module uses the multiplier of
//! [`super::lcg32`], `a = 1664525` (Numerical Recipes), and `M = 2^32`: `x = 1664525 x + c mod
//! 2^32`, each output the new `x`. (The text's "length M - 1" and "between 1 and M" describe a
//! multiplicative generator; with `c != 0` and `M = 2^32` the period is `M` and 0 occurs.)
//!
//! **Period and states.** The raw state is `x,c`. `c` must be odd; then `gcd(c, 2^32) = 1` and
//! `a - 1 = 1664524` is divisible by 4, so by the Hull–Dobell theorem every odd `c` gives the full
//! period 2^32 and every `x` is valid. An even `c` is rejected (it shortens the period: `c = 0`
//! gives at most 2^30). `c` need not be prime in a raw state; only the stream rule picks primes.
//!
//! **Stream rule.** Stream `k` of seed `s` has
//! - `x0` = word 0 of `Philox4x32-10(counter = (k mod 2^32, k >> 32, 0, "LCGP"), key = (s mod
//!   2^32, s >> 32))` ([`super::streams::philox_derived`] with [`LCG_PRIME_TAG`]): a starting
//!   point per stream, not one `x0` for all, because with a common `x0` the first outputs
//!   `a x0 + c_k` of the streams would differ only by `c_k - c_j` (by 2 for streams 0 and 1);
//! - `c = c_j` with `j = k mod K`, `K = 12,786,542` ([`DISTINCT_STREAMS`]):
//!   - for `j < 4096`, `c_j` is the `j`-th odd prime, counting from 0 (3, 5, 7, 11, ...,
//!     38891), from a table built at compile time by a sieve (8 KB);
//!   - for `4096 <= j < K`, `c_j` is the smallest prime `>= g_j = 65536 + 336 (j - 4096)`,
//!     found with a deterministic Miller–Rabin test for 32-bit numbers ([`is_prime`]). The
//!     largest gap between consecutive primes below 2^32 is 336 (after 3842610773; checked with a
//!     segmented sieve when this was written), so the prime found is below `g_{j+1}`: these
//!     increments are distinct, all above the table's, and the last, `c_{K-1} = 4294967087`, is
//!     below 2^32. The search tests at most 168 odd candidates, about 11 on average, each first
//!     by trial division by the primes up to 37.
//!
//! **What streams guarantee.** Streams `k < K` of one seed use pairwise distinct increments, so
//! they are *different sequences*, not blocks of one sequence: two consecutive outputs
//! `(y, y')` determine `c = y' - a y`, so two such streams never share a pair of consecutive
//! outputs, and neither is a shifted copy of the other. They do share single values (each
//! stream visits all 2^32 words in its period). Streams `k` and `k + K` share an increment:
//! they are two Philox-chosen points of the same cycle of 2^32, so using `L` outputs of each
//! they overlap with probability about `2 L / 2^32` (2^-11 for `L = 2^20`). Different seeds
//! change the starting points only; stream `k` has the same increment under every seed.
//!
//! **Weaknesses (why this is a comparison baseline).** For a power-of-two modulus the streams
//! are tightly related: with `z_{n+1} = a z_n + 1` (increment 1), the stream with increment `c`
//! and start `x0` is exactly `x_n = c z_n mod 2^32` with `z_0 = c^-1 x0` (the tests check this).
//! Every stream is a constant multiple, mod 2^32, of a segment of one single cycle of length
//! 2^32; with many streams such segments overlap (for `n` streams of `L` outputs, roughly
//! `n^2 L / 2^32` overlapping pairs) and the overlapping streams are then one linear map of
//! each other, a relation that correlation or spectral tests across streams can detect. Each
//! stream also has all the faults of [`super::lcg32`]: bit `i` of the output has period
//! `2^(i+1)` (bit 0 alternates in every stream), consecutive outputs lie on few hyperplanes, and
//! the whole period is only 2^32. Use the high bits only, and only for comparison.
//!
//! **Skip.** `x -> a x + c` is affine; [`Skip::skip`] raises it to the `n`-th power by squaring
//! with the state's own `c` (at most 32 squarings and 32 compositions, as in [`super::lcg32`]).
//!
//! ```
//! use warpmc_kernels::rng::{Generator, Uniform32, lcg_prime::LcgPrime};
//! let mut g = LcgPrime::from_raw_state(&[0, 3]).unwrap();
//! assert_eq!(g.next_u32(), 3);
//! assert_eq!(g.next_u32(), 4993578); // 3 a + 3
//! ```

use super::{Generator, InvalidState, Skip, Uniform32};

/// The multiplier `a` (Numerical Recipes', as in [`super::lcg32`]).
pub const A: u32 = 1_664_525;
/// Counter word 3 of the Philox derivation of `x0` ("LCGP").
pub const LCG_PRIME_TAG: u32 = 0x4C43_4750;
/// Streams `0..TABLE_STREAMS` take the `k`-th odd prime from a table.
pub const TABLE_STREAMS: usize = 4096;
/// The searched increments start at `g = SEARCH_BASE`, above every table prime.
pub const SEARCH_BASE: u32 = 1 << 16;
/// The largest gap between consecutive primes below 2^32 (after 3842610773).
pub const PRIME_GAP: u32 = 336;
/// The largest prime below 2^32.
pub const LARGEST_PRIME: u32 = 4_294_967_291;
/// How many streams have pairwise distinct increments; stream `k` uses the increment of
/// stream `k mod DISTINCT_STREAMS`.
pub const DISTINCT_STREAMS: u64 = TABLE_STREAMS as u64 + ((LARGEST_PRIME - SEARCH_BASE) / PRIME_GAP) as u64 + 1;

/// The first [`TABLE_STREAMS`] odd primes (3, 5, 7, ...), by a sieve of the odd numbers below
/// [`SEARCH_BASE`] at compile time.
const fn odd_prime_table() -> [u16; TABLE_STREAMS] {
    const HALF: usize = SEARCH_BASE as usize / 2;
    // composite[i] for the odd number 2 i + 1.
    let mut composite = [false; HALF];
    let mut i = 1;
    while i < HALF {
        let p = 2 * i + 1;
        if !composite[i] && p * p < 2 * HALF {
            // Odd multiples of p from p^2: 2 j + 1 = p^2, p^2 + 2p, ...
            let mut j = (p * p) / 2;
            while j < HALF {
                composite[j] = true;
                j += p;
            }
        }
        i += 1;
    }
    let mut table = [0u16; TABLE_STREAMS];
    let (mut i, mut n) = (1, 0);
    while n < TABLE_STREAMS {
        assert!(i < HALF, "fewer than TABLE_STREAMS odd primes below SEARCH_BASE");
        if !composite[i] {
            table[n] = (2 * i + 1) as u16;
            n += 1;
        }
        i += 1;
    }
    table
}

// A `const`, not a `static`: a user's integrand module (built with --emit=asm) embeds what it
// reads of a const, but would hold a static of this crate only as an undefined `.extern .global`
// (README, "Your own integrand").
/// The `k`-th odd prime for `k < TABLE_STREAMS`.
const ODD_PRIMES: [u16; TABLE_STREAMS] = odd_prime_table();

/// Arithmetic modulo an odd `n` in Montgomery form (Montgomery, "Modular multiplication without
/// trial division", Math. Comp. 44, 1985), `R = 2^32`: a product is two 32x32-bit
/// multiplications and a shift, where `(a b) mod n` needs a 64-bit division: a long software
/// routine on the GPU, about a hundred of them per candidate. (Set-up of 10^6 streams on an
/// H100: 8.1 ms with the division, 2.5 ms in Montgomery form, 2026-11-24. The primes found are
/// the same: `is_prime_is_exact`.)
struct Montgomery {
    n: u32,
    /// `-n^-1 mod 2^32`.
    neg_inv: u32,
}

impl Montgomery {
    /// For odd `n`.
    #[inline(always)]
    fn new(n: u32) -> Self {
        // `n n = 1 mod 8` for odd `n`, so `n` is its own inverse to 3 bits; each Newton step
        // `y (2 - n y)` doubles the bits: 6, 12, 24, 48.
        let mut y = n;
        let mut i = 0;
        while i < 4 {
            y = y.wrapping_mul(2u32.wrapping_sub(n.wrapping_mul(y)));
            i += 1;
        }
        Self { n, neg_inv: y.wrapping_neg() }
    }

    /// `t R^-1 mod n` for `t < n R`.
    #[inline(always)]
    fn reduce(&self, t: u64) -> u32 {
        let m = (t as u32).wrapping_mul(self.neg_inv);
        // `t + m n` is a multiple of R below 2 n R, which may pass 2^64: keep the carry.
        let (sum, carry) = t.overflowing_add(m as u64 * self.n as u64);
        let r = (sum >> 32) | ((carry as u64) << 32);
        (if r >= self.n as u64 { r - self.n as u64 } else { r }) as u32
    }

    /// The product of two residues in Montgomery form (both below `n`).
    #[inline(always)]
    fn mul(&self, a: u32, b: u32) -> u32 {
        self.reduce(a as u64 * b as u64)
    }

    /// `a R mod n`, the Montgomery form of `a`: one division, outside the loops.
    #[inline(always)]
    fn form(&self, a: u32) -> u32 {
        (((a as u64) << 32) % self.n as u64) as u32
    }
}

/// Whether odd `n > base` is a strong probable prime to `base`.
#[inline(always)]
fn strong_probable_prime(n: u32, base: u32) -> bool {
    let m = Montgomery::new(n);
    let one = m.form(1);
    let minus_one = n - one;
    let s = (n - 1).trailing_zeros();
    let (mut x, mut b, mut e) = (one, m.form(base), (n - 1) >> s);
    while e != 0 {
        if e & 1 != 0 {
            x = m.mul(x, b);
        }
        b = m.mul(b, b);
        e >>= 1;
    }
    if x == one || x == minus_one {
        return true;
    }
    let mut i = 1;
    while i < s {
        x = m.mul(x, x);
        if x == minus_one {
            return true;
        }
        i += 1;
    }
    false
}

/// Whether `n` is prime, exactly for every `u32`: trial division by the primes up to 37, then
/// Miller–Rabin to the bases 2, 7 and 61, which has no strong pseudoprime below 4,759,123,141
/// (Jaeschke, "On strong pseudoprimes to several bases", Math. Comp. 61, 1993).
#[inline(always)]
pub fn is_prime(n: u32) -> bool {
    const SMALL: [u32; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if n < 2 {
        return false;
    }
    let mut i = 0;
    while i < SMALL.len() {
        if n.is_multiple_of(SMALL[i]) {
            return n == SMALL[i];
        }
        i += 1;
    }
    // No factor up to 37, so below 41^2 it is prime; above, every base is below n.
    n < 41 * 41 || (strong_probable_prime(n, 2) && strong_probable_prime(n, 7) && strong_probable_prime(n, 61))
}

/// The smallest prime `>= g`, for `2 < g <= LARGEST_PRIME`.
#[inline(always)]
fn next_prime(g: u32) -> u32 {
    let mut c = g | 1;
    while !is_prime(c) {
        c = c.wrapping_add(2);
    }
    c
}

/// The increment of stream `stream` (see the module docs): the `k`-th odd prime for
/// `k < 4096`, then the smallest prime `>= 65536 + 336 (k - 4096)`, with `k = stream mod`
/// [`DISTINCT_STREAMS`].
#[inline(always)]
pub fn increment(stream: u64) -> u32 {
    let k = stream % DISTINCT_STREAMS;
    if k < TABLE_STREAMS as u64 {
        ODD_PRIMES[k as usize] as u32
    } else {
        next_prime(SEARCH_BASE + PRIME_GAP * (k - TABLE_STREAMS as u64) as u32)
    }
}

/// The affine map `x -> A x + c` applied `n` times, as `(a_n, c_n)`, all mod 2^32.
#[inline(always)]
fn affine_power(n: u32, c: u32) -> (u32, u32) {
    // (pa, pc) is the map to the power 2^i at the i-th bit of n; (ra, rc) the product so far.
    // All powers of one map commute, so the order of composition does not matter.
    let (mut pa, mut pc) = (A, c);
    let (mut ra, mut rc) = (1u32, 0u32);
    let mut n = n;
    while n != 0 {
        if n & 1 != 0 {
            ra = pa.wrapping_mul(ra);
            rc = pa.wrapping_mul(rc).wrapping_add(pc);
        }
        pc = pa.wrapping_mul(pc).wrapping_add(pc);
        pa = pa.wrapping_mul(pa);
        n >>= 1;
    }
    (ra, rc)
}

/// Generator state: the last output `x` and the stream's odd increment `c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct LcgPrime {
    pub x: u32,
    pub c: u32,
}

impl LcgPrime {
    /// A generator whose first output is `A x + c`, rejecting an even `c`.
    pub const fn new(x: u32, c: u32) -> Result<Self, InvalidState> {
        if c & 1 == 0 {
            return Err(InvalidState {
                generator: Self::NAME,
                word: Some(1),
                value: c,
                rule: "c must be odd (an even increment shortens the period below 2^32)",
            });
        }
        Ok(Self { x, c })
    }

    /// Advance one step and return the new `x`.
    #[inline(always)]
    pub fn step(&mut self) -> u32 {
        self.x = self.x.wrapping_mul(A).wrapping_add(self.c);
        self.x
    }
}

impl Uniform32 for LcgPrime {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        self.step()
    }
}

impl Skip for LcgPrime {
    #[inline(always)]
    fn skip(&mut self, n: u64) {
        // The period is exactly 2^32 for odd c (Hull–Dobell), so only n mod 2^32 matters.
        let (a, c) = affine_power(n as u32, self.c);
        self.x = a.wrapping_mul(self.x).wrapping_add(c);
    }
}

// SAFETY: #[repr(C)] with two u32 fields: two words, no padding.
unsafe impl Generator for LcgPrime {
    const NAME: &'static str = "lcg-prime";
    const RAW_STATE: &'static str = "x,c";
    const RAW_STATE_WORDS: usize = 2;
    const PERIOD: &'static str = "2^32";

    /// A Philox-derived `x0` and the stream's prime increment (see the module docs).
    #[inline(always)]
    fn stream(seed: u64, stream: u64) -> Self {
        let w = super::streams::philox_derived(seed, stream, LCG_PRIME_TAG, |_| true);
        Self { x: w[0], c: increment(stream) }
    }

    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState> {
        match words {
            [x, c] => Self::new(*x, *c),
            _ => Err(InvalidState::word_count(Self::NAME, "it has exactly two words, x then the odd increment c: x,c")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::lcg32::Lcg32;
    use super::super::testing::*;
    use super::*;

    /// The definition computed independently: in u64, reduced with `%`.
    fn by_definition(x0: u32, c: u32, n: usize) -> Vec<u32> {
        let mut x = u64::from(x0);
        (0..n)
            .map(|_| {
                x = (1_664_525 * x + u64::from(c)) % (1u64 << 32);
                x as u32
            })
            .collect()
    }

    /// Primality by trial division, independent of the Miller–Rabin test.
    fn trial_division(n: u32) -> bool {
        n >= 2 && (2..).take_while(|d| d * d <= u64::from(n)).all(|d| u64::from(n) % d != 0)
    }

    /// No published outputs exist for the TI example (it prints only statistics), so the known
    /// answers are the recurrence itself, and Numerical Recipes' generator as the special case
    /// `c = 1013904223` (an odd prime).
    #[test]
    fn reference() {
        let mut g = LcgPrime::new(0, 3).unwrap();
        assert_eq!(first(&mut g, 4), [3, 4993578, 1173702693, 1406167012]);
        assert_eq!(by_definition(0, 3, 4), [3, 4993578, 1173702693, 1406167012]);
        let mut nr = LcgPrime::new(0, 1_013_904_223).unwrap();
        assert_eq!(first(&mut nr, 5), [1013904223, 1196435762, 3519870697, 2868466484, 1649599747]);
        let (mut a, mut b) = (LcgPrime::new(987_654_321, 1_013_904_223).unwrap(), Lcg32::new(987_654_321));
        assert_eq!(first(&mut a, 1000), first(&mut b, 1000));
    }

    #[test]
    fn raw_state_follows_definition() {
        for (x0, c) in [(0, 1), (1, 3), (12345, 65537), (0x8000_0000, LARGEST_PRIME), (u32::MAX, u32::MAX)] {
            let mut g = LcgPrime::from_raw_state(&[x0, c]).unwrap();
            assert_eq!(first(&mut g, 1000), by_definition(x0, c, 1000));
            assert_eq!(g.c, c);
        }
    }

    #[test]
    fn value_stability() {
        // Pinned: a change here changes every result produced with this generator. All three were
        // also computed outside Rust (Python: Philox4x32-10 checked against Random123's known
        // answers, sympy's primes).
        assert_eq!(first(&mut LcgPrime::stream(0, 0), 3), [3091718431, 4217358486, 2221863841]);
        assert_eq!(first(&mut LcgPrime::stream(0x0123_4567_89AB_CDEF, 7), 3), [3648681416, 1454222143, 1379126346]);
        assert_eq!(first(&mut LcgPrime::stream(42, 1_000_000), 3), [1977715651, 2485239528, 2959218121]);
    }

    /// The stream rule written out: Philox word 0 as `x0`, and increments known from outside
    /// (the odd primes; sympy's `nextprime` for the searched ones).
    #[test]
    fn stream_rule() {
        assert_eq!(DISTINCT_STREAMS, 12_786_542);
        let known: [(u64, u32); 16] = [
            (0, 3),
            (1, 5),
            (2, 7),
            (3, 11),
            (4, 13),
            (5, 17),
            (6, 19),
            (7, 23),
            (8, 29),
            (9, 31),
            (4095, 38891),
            (4096, 65537),
            (4097, 65881),
            (1_000_000, 334_689_281),
            (12_786_541, 4_294_967_087),
            (12_786_542, 3),
        ];
        for (seed, (k, c)) in [0u64, 42, u64::MAX].into_iter().flat_map(|s| known.map(|kc| (s, kc))) {
            let x0 = first_philox_candidate(seed, k, LCG_PRIME_TAG)[0];
            assert_eq!(LcgPrime::stream(seed, k), LcgPrime { x: x0, c }, "seed {seed}, stream {k}");
        }
        for k in [0u64, 1, 4095, 4096, 999_999, DISTINCT_STREAMS - 1] {
            assert_eq!(increment(k + DISTINCT_STREAMS), increment(k));
            assert_eq!(increment(k + 5 * DISTINCT_STREAMS), increment(k));
        }
        assert_eq!(increment(u64::MAX), increment(u64::MAX % DISTINCT_STREAMS));
    }

    /// The table holds the first 4096 odd primes, checked by trial division.
    #[test]
    fn table_is_the_odd_primes() {
        let expected: Vec<u32> = (3..).step_by(2).filter(|&n| trial_division(n)).take(TABLE_STREAMS).collect();
        let table: Vec<u32> = (0..TABLE_STREAMS as u64).map(increment).collect();
        assert_eq!(table, expected);
        assert!(*expected.last().unwrap() < SEARCH_BASE);
    }

    /// Searched increments: prime (by trial division), the smallest one `>= g_k`, and below
    /// `g_{k+1}` (so distinct), on a sample of streams spread over the whole range.
    #[test]
    fn searched_increments_are_the_next_primes() {
        let g = |k: u64| u64::from(SEARCH_BASE) + u64::from(PRIME_GAP) * (k - TABLE_STREAMS as u64);
        let mut r = 3u64;
        let sample =
            (TABLE_STREAMS as u64..TABLE_STREAMS as u64 + 200).chain((DISTINCT_STREAMS - 200)..DISTINCT_STREAMS).chain(
                (0..300).map(|_| TABLE_STREAMS as u64 + splitmix64(&mut r) % (DISTINCT_STREAMS - TABLE_STREAMS as u64)),
            );
        for k in sample {
            let c = increment(k);
            assert!(trial_division(c), "stream {k}: {c} is not prime");
            assert!(u64::from(c) >= g(k) && u64::from(c) < g(k + 1), "stream {k}: {c} outside [g_k, g_k+1)");
            assert!((g(k) as u32..c).all(|n| !trial_division(n)), "stream {k}: a prime below {c}");
        }
        // The rule's reliance on the gap bound: the maximal gap below 2^32, 336, does occur
        // (that it is the largest was checked with a sieve over [0, 2^32) outside the tests).
        let p = 3_842_610_773u32;
        assert!(trial_division(p) && trial_division(p + 336));
        assert!((p + 1..p + 336).all(|n| !trial_division(n)));
        // Past the last distinct stream the next g would not fit below the largest prime.
        assert!(g(DISTINCT_STREAMS) > u64::from(LARGEST_PRIME));
        assert!(trial_division(LARGEST_PRIME) && (LARGEST_PRIME + 1..=u32::MAX).all(|n| !trial_division(n)));
    }

    /// The Montgomery products are the plain `(a b) mod n`, for moduli up to 2^32 - 1 (where
    /// the reduction's sum passes 2^64).
    #[test]
    fn montgomery_products() {
        let mut r = 17u64;
        for n in [3u32, 5, 41, 65_537, 1_000_000_007, 4_294_967_291, u32::MAX, 4_294_967_087] {
            let m = Montgomery::new(n);
            assert_eq!(m.neg_inv.wrapping_mul(n), u32::MAX, "{n}: -1/n");
            for _ in 0..2_000 {
                let (a, b) = ((splitmix64(&mut r) % n as u64) as u32, (splitmix64(&mut r) % n as u64) as u32);
                let ab = m.reduce(m.mul(m.form(a), m.form(b)) as u64);
                assert_eq!(ab as u64, a as u64 * b as u64 % n as u64, "{a} {b} mod {n}");
            }
            let top = n - 1;
            assert_eq!(m.reduce(m.mul(m.form(top), m.form(top)) as u64), (top as u64 * top as u64 % n as u64) as u32);
        }
    }

    #[test]
    fn is_prime_is_exact() {
        for n in 0..200_000 {
            assert_eq!(is_prime(n), trial_division(n), "{n}");
        }
        let mut r = 9u64;
        for _ in 0..2_000 {
            let n = splitmix64(&mut r) as u32;
            assert_eq!(is_prime(n), trial_division(n), "{n}");
        }
        // Strong pseudoprimes to base 2 (and to more bases): each fails one of the bases 7, 61.
        for n in [2047u32, 3277, 4033, 4681, 8321, 25_326_001, 3_215_031_751] {
            assert!(strong_probable_prime(n, 2) && !is_prime(n), "{n}");
        }
        assert!(is_prime(LARGEST_PRIME) && !is_prime(u32::MAX) && is_prime(4_294_967_087));
    }

    /// The documented weakness: the stream with increment c is c times the increment-1
    /// sequence from c^-1 x0 (mod 2^32).
    #[test]
    fn streams_are_multiples_of_one_cycle() {
        let inverse = |c: u32| {
            // Newton's iteration for the inverse of an odd number mod 2^32.
            let mut y = c;
            for _ in 0..5 {
                y = y.wrapping_mul(2u32.wrapping_sub(c.wrapping_mul(y)));
            }
            assert_eq!(c.wrapping_mul(y), 1);
            y
        };
        for k in [0u64, 1, 2, 4095, 4096, 1_000_000] {
            let g = LcgPrime::stream(5, k);
            let base = LcgPrime::new(inverse(g.c).wrapping_mul(g.x), 1).unwrap();
            let mut base = base;
            let scaled: Vec<u32> = first(&mut base, 1000).into_iter().map(|z| z.wrapping_mul(g.c)).collect();
            let mut g = g;
            assert_eq!(first(&mut g, 1000), scaled, "stream {k}");
        }
    }

    /// Two consecutive outputs determine the increment, so streams with different increments
    /// never share a pair of consecutive outputs.
    #[test]
    fn consecutive_outputs_determine_the_stream() {
        for k in [0u64, 1, 7, 4095, 4096, 4097, DISTINCT_STREAMS - 1] {
            let g = LcgPrime::stream(11, k);
            let out = first(&mut { g }, 1000);
            assert!(out.windows(2).all(|w| w[1].wrapping_sub(A.wrapping_mul(w[0])) == g.c), "stream {k}");
        }
        let cs: std::collections::HashSet<u32> = (0..20_000u64).map(increment).collect();
        assert_eq!(cs.len(), 20_000);
    }

    #[test]
    fn skip_equals_steps() {
        let mut r = 88_172_645_463_325_252u64;
        let ns = skip_lengths((0..5).map(|_| xorshift64(&mut r) % 1_000_001));
        for g in
            [LcgPrime::new(0, 3).unwrap(), LcgPrime::new(u32::MAX, LARGEST_PRIME).unwrap(), LcgPrime::stream(1, 5000)]
        {
            skip_matches_stepping(g, &ns);
        }
    }

    #[test]
    fn skips_compose() {
        let start = LcgPrime::stream(2024, 77);
        skips_compose_for(start, &[(0, 5), (7, 0), (1, 1), (12345, 678_901), (1 << 31, 1 << 31), (1 << 40, 99)]);
        assert_eq!(skipped(skipped(start, u64::MAX), 3), skipped(start, 2));
    }

    /// The period is exactly 2^32 for every odd increment.
    #[test]
    fn period_is_2_pow_32() {
        for c in [1u32, 3, 65537, LARGEST_PRIME, u32::MAX] {
            let g = LcgPrime::new(0xDEAD_BEEF, c).unwrap();
            assert_eq!(skipped(g, 1 << 32), g);
            assert_eq!(skipped(g, (1 << 32) + 5), skipped(g, 5));
            assert_ne!(skipped(g, 1 << 31), g);
        }
    }

    #[test]
    fn large_skips_are_cheap() {
        skips_are_cheap(LcgPrime::stream(1, 2), (0..100_000u64).map(|i| (1 << 40) + i * 0x1_0000_0001));
        // Stream initialisation, including the prime search, is cheap too.
        let t = std::time::Instant::now();
        for k in 0..20_000u64 {
            std::hint::black_box(LcgPrime::stream(7, DISTINCT_STREAMS - 1 - k));
        }
        assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
    }

    #[test]
    fn streams_are_distinct() {
        streams_start_distinct::<LcgPrime>(7, 1000);
        neighbours_rarely_agree::<LcgPrime>(7, 0..100, 1000);
        neighbours_rarely_agree::<LcgPrime>(7, 4090..4100, 1000);
        seed_and_stream_halves_matter::<LcgPrime>();
    }

    #[test]
    fn invalid_states() {
        for c in [0u32, 2, 4, 0xFFFF_FFFE] {
            let e = LcgPrime::from_raw_state(&[1, c]).unwrap_err();
            assert_eq!((e.generator, e.word, e.value), ("lcg-prime", Some(1), c));
            assert!(e.rule.starts_with("c must be odd"), "{}", e.rule);
        }
        // The boundary: every odd c, prime or not, and every x.
        for (x, c) in [(0, 1), (u32::MAX, 9), (5, u32::MAX)] {
            assert_eq!(LcgPrime::from_raw_state(&[x, c]), Ok(LcgPrime { x, c }));
        }
        rejects_word_counts::<LcgPrime>(&[&[], &[1], &[1, 3, 5]], "it has exactly two words");
        assert_eq!(LcgPrime::NAME, "lcg-prime");
    }
}
