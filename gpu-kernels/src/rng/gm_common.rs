//! The machinery shared by the PRAND "GM" generators of Barash and Shchur ("PRAND: GPU
//! accelerated parallel random number generation library", Comput. Phys. Commun. 185 (2014)
//! 1343; RNGSSELIB, Comput. Phys. Commun. 182 (2011) 1518 and 184 (2013) 2367):
//! [`super::gm19`], [`super::gm29`], [`super::gm31`], [`super::gm55`], [`super::gm61`],
//! [`super::gq58_1`], [`super::gq58_3`], [`super::gq58_4`].
//!
//! **The family.** One output word is assembled from `s` *orbits*, each a second-order linear
//! recurrence `x_n = (k x_{n-1} - q x_{n-2}) mod g` (the x coordinate of a point moved by a
//! hyperbolic toral automorphism with trace `k` and determinant `q`). A call advances every
//! orbit once and takes 1, 3 or 4 bits from each new value (`floor(2^v x / g)`, or one bit
//! against a threshold). All orbits are the *same* sequence: orbit `j` starts at
//! `(x_{(j+1)N}, x_{(j+1)N+1})` of the base sequence from the published `(x0, x1)`, so the
//! generator is one sequence read at `s` points `N` steps apart.
//!
//! **Working modulus.** Every `g` of the family is `2^t p` with `p = 2^e - c` prime (`t = 0` except
//! for GM55.4, `g = 2^4 (2^51 - 129)`, and GQ58.x, `g = 2^29 (2^29 - 3)`). For `t > 0`, `k` and `q`
//! are even (GM55.4: 256 and 176, GQ58.x: 8 and 48), so mod `2^t` the recurrence is nilpotent: the
//! power of 2 dividing `x_n` grows by at least 3 or 4 per step, and from `x_2` on (GM55.4) or
//! `x_16` on (GQ58.x) every `x_n` is a multiple of `2^t`, whatever `(x0, x1)`. From there
//! `x_n = 2^t y_n` with `y_n < p` and `y_n = (k y_{n-1} - q y_{n-2}) mod p` (divide the recurrence
//! mod `2^t p` by `2^t`). The orbits start `N` or more steps into the base sequence, far past that
//! transient, so the generators store and step `y` mod the prime `p` and read the output bits from
//! `x = 2^t y`: `floor(2^v x / g) = floor(2^v y / p)`. For `t = 0`, `y = x`. The base values map to
//! the working space by `y = (x mod p) (2^t)^-1 mod p` (the CRT: `x_n = 0 mod 2^t` and
//! `x_n = 2^t y_n mod p`).
//!
//! **Arithmetic.** Everything is exact modular arithmetic mod `p = 2^e - c`, reduced by folding
//! (`2^e = c mod p`, so `v = (v >> e) c + (v mod 2^e) mod p`), never by a division: products of
//! two residues are `u64` for `e <= 31` and `u128` for `e = 51, 61` (folded once in `u128`, then in
//! `u64`); the step `k y_{n-1} + q (p - y_{n-2})` needs one fold and one conditional subtraction.
//!
//! **Jumps.** `n` steps of one orbit are the matrix `M^n`, `M = [[0, 1], [-q, k]]` on the column
//! `(y_{n-1}, y_n)`. By Cayley-Hamilton `M^2 = k M - q I`, so `M^n = a M + b I` with
//! `a X + b = X^n mod (X^2 - k X + q)`: a [`Jump`] is that pair, products of jumps are products
//! of polynomials mod `X^2 - k X + q` (six multiplications mod `p`), and `M^n` is at most 128
//! squarings and 128 products for a 128-bit `n` (the orbit spacings of GM55.4 and GM61 exceed
//! 2^64). Applying a jump to an orbit is four multiplications and one step. This is the same
//! algebra as the family's published doubling rule for trace and determinant.
//!
//! **Period and room.** The characteristic polynomial `X^2 - k X + q` is primitive mod `p` for
//! every generator of the family (checked in the tests), so all nonzero `(y_{n-1}, y_n)` lie on
//! one cycle of length `P = p^2 - 1`. The orbits are `N` apart on it with `s N <= P`; so an
//! orbit can run `N` steps before it reaches the point where the next orbit started, after which
//! the output words would be shifted copies of earlier ones. Every stream rule of the family
//! therefore shares one budget of `N` steps: streams that start `D` steps into the base
//! sequence (`0 <= D`, `D + len <= N`), with starts at least `len` apart, never share an orbit
//! value (their orbit segments `[(j+1)N + D, (j+1)N + D + len)` lie in the disjoint windows
//! `[(j+1)N, (j+2)N)`, and `s N <= P` keeps the windows from wrapping onto each other).

use super::InvalidState;

/// `x_n = (k x_{n-1} - q x_{n-2}) mod p` for a prime `p = 2^e - c`.
///
/// Requirements (each generator checks them at compile time with [`Recurrence::is_supported`]):
/// `19 <= e <= 31` or `e = 51` or `e = 61`, `(k + q + 2) c <= 2^e`, `0 < k, q < p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recurrence {
    pub e: u32,
    pub c: u64,
    pub k: u64,
    pub q: u64,
}

/// `n` steps of a [`Recurrence`]: `X^n mod (X^2 - k X + q) = a X + b`, so that
/// `M^n = a M + b I` (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jump {
    pub a: u64,
    pub b: u64,
}

impl Recurrence {
    /// The prime `p = 2^e - c`.
    #[inline(always)]
    pub const fn p(&self) -> u64 {
        (1u64 << self.e) - self.c
    }

    #[inline(always)]
    const fn mask(&self) -> u64 {
        (1u64 << self.e) - 1
    }

    /// Whether the folding bounds of [`Self::reduce`], [`Self::mul`] and [`Self::step`] hold.
    pub const fn is_supported(&self) -> bool {
        let e_ok = (self.e >= 19 && self.e <= 31) || self.e == 51 || self.e == 61;
        e_ok && self.c < (1 << 8) && (self.k + self.q + 2) * self.c <= (1u64 << self.e) && self.k > 0 && self.q > 0
    }

    #[inline(always)]
    const fn fold(&self, v: u64) -> u64 {
        (v >> self.e) * self.c + (v & self.mask())
    }

    /// `v mod p` for any `v`: each fold maps `v` below `(v >> e) c + 2^e`, so three leave
    /// `v < 2^e + 2^8 < 2p` for every supported `(e, c)` (`e = 19` is the tightest: `2^45`, `2^26`,
    /// then `2^7` above `2^e`), and one conditional subtraction finishes. The tests compare with
    /// `%`.
    #[inline(always)]
    pub const fn reduce(&self, v: u64) -> u64 {
        let v = self.fold(self.fold(self.fold(v)));
        let p = self.p();
        if v >= p { v - p } else { v }
    }

    /// `a b mod p` for `a, b < p`.
    #[inline(always)]
    pub const fn mul(&self, a: u64, b: u64) -> u64 {
        if self.e <= 31 {
            // Both below 2^31: the product fits in u64 (and is a 32x32 -> 64 multiply).
            self.reduce(a * b)
        } else {
            // Below 2^(2e); one fold in u128 leaves at most 2^e c + 2^e < 2^62 for e = 51 or 61.
            let v = a as u128 * b as u128;
            let v = (v >> self.e) * self.c as u128 + (v & self.mask() as u128);
            self.reduce(v as u64)
        }
    }

    #[inline(always)]
    pub const fn add(&self, a: u64, b: u64) -> u64 {
        let s = a + b;
        if s >= self.p() { s - self.p() } else { s }
    }

    #[inline(always)]
    pub const fn sub(&self, a: u64, b: u64) -> u64 {
        if a >= b { a - b } else { a + (self.p() - b) }
    }

    /// The next value `(k cur - q prev) mod p` from `prev = y_{n-2}`, `cur = y_{n-1}`, both `< p`.
    #[inline(always)]
    pub const fn step(&self, prev: u64, cur: u64) -> u64 {
        let p = self.p();
        // q (p - prev) is congruent to -q prev and never negative. The sum is below (k + q) p,
        // and one fold leaves it below (k + q) c + 2^e <= 2p: one subtraction finishes.
        let r = if (self.k + self.q) as u128 * p as u128 <= u64::MAX as u128 {
            let v = self.k * cur + self.q * (p - prev);
            self.fold(v)
        } else {
            let v = self.k as u128 * cur as u128 + self.q as u128 * (p - prev) as u128;
            ((v >> self.e) as u64) * self.c + (v as u64 & self.mask())
        };
        if r >= p { r - p } else { r }
    }

    /// No steps.
    pub const IDENTITY: Jump = Jump { a: 0, b: 1 };

    /// One step (`X`).
    pub const ONE_STEP: Jump = Jump { a: 1, b: 0 };

    /// `u` then `v` (the product `u v` mod `X^2 - k X + q`; jumps commute).
    #[inline(always)]
    pub const fn compose(&self, u: Jump, v: Jump) -> Jump {
        // (u.a X + u.b)(v.a X + v.b) with X^2 = k X - q.
        let aa = self.mul(u.a, v.a);
        let a = self.add(self.add(self.mul(aa, self.k), self.mul(u.a, v.b)), self.mul(u.b, v.a));
        let b = self.sub(self.mul(u.b, v.b), self.mul(aa, self.q));
        Jump { a, b }
    }

    /// `j` applied `n` times, by binary exponentiation: at most 128 squarings and products.
    pub const fn pow(&self, j: Jump, n: u128) -> Jump {
        let mut r = Self::IDENTITY;
        let mut sq = j;
        let mut n = n;
        while n != 0 {
            if n & 1 != 0 {
                r = self.compose(r, sq);
            }
            n >>= 1;
            if n != 0 {
                sq = self.compose(sq, sq);
            }
        }
        r
    }

    /// `n` steps.
    pub const fn jump(&self, n: u128) -> Jump {
        self.pow(Self::ONE_STEP, n)
    }

    /// `(prev, cur)` advanced by `j`: `M^n v = a M v + b v`, with `M v = (cur, next)`.
    #[inline(always)]
    pub const fn apply(&self, j: Jump, prev: u64, cur: u64) -> (u64, u64) {
        let next = self.step(prev, cur);
        (self.add(self.mul(j.a, cur), self.mul(j.b, prev)), self.add(self.mul(j.a, next), self.mul(j.b, cur)))
    }
}

/// One generator of the family: its recurrence in working units, how `g` relates to `p`, how many
/// orbits, how they are stored and how far apart they start.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    /// The recurrence mod the prime `p`.
    pub rec: Recurrence,
    /// `g = 2^t p`.
    pub t: u32,
    /// Orbits per output word.
    pub orbits: usize,
    /// Whether each orbit value takes two state words (low word first): `p > 2^32`.
    pub wide: bool,
    /// Steps between the starts of neighbouring orbits (`N`).
    pub orbit_spacing: u128,
}

/// The `rule`s of a generator's raw-state errors.
pub struct RawRules {
    /// The wrong-word-count rule.
    pub count: &'static str,
    /// `x0 >= g`.
    pub x0: &'static str,
    /// `x1 >= g`.
    pub x1: &'static str,
    /// Both values zero (mod `p`): the orbits would be stuck at zero.
    pub zero: &'static str,
}

impl Family {
    /// The modulus `g = 2^t p` of the definition.
    pub const fn g(&self) -> u64 {
        self.rec.p() << self.t
    }

    /// State words per orbit value array (`orbits`, or `2 orbits` when wide).
    pub const fn words(&self) -> usize {
        if self.wide { 2 * self.orbits } else { self.orbits }
    }

    /// Raw state words: `x0, x1`, or `x0_lo, x0_hi, x1_lo, x1_hi` when `g > 2^32`.
    pub const fn raw_words(&self) -> usize {
        if self.g() > u32::MAX as u64 { 4 } else { 2 }
    }

    /// Whether the family's facts hold for this generator (checked at compile time by each).
    pub const fn is_consistent<const W: usize>(&self) -> bool {
        self.rec.is_supported()
            && W == self.words()
            && self.wide == (self.rec.p() > u32::MAX as u64)
            && self.orbits as u128 * self.orbit_spacing < self.rec.p() as u128 * self.rec.p() as u128
    }

    /// A base value `x < g` in working units: `(x mod p) (2^t)^-1 mod p` (see the module docs).
    pub const fn to_working(&self, x: u64) -> u64 {
        let r = &self.rec;
        // 2^-1 = (p + 1) / 2 mod p.
        let half = r.p().div_ceil(2);
        let mut y = r.reduce(x);
        let mut i = 0;
        while i < self.t {
            y = r.mul(y, half);
            i += 1;
        }
        y
    }

    /// Orbit value `i` of `words` (`i < orbits`).
    #[inline(always)]
    pub const fn load<const W: usize>(&self, words: &[u32; W], i: usize) -> u64 {
        if self.wide { load::<W, true>(words, i) } else { load::<W, false>(words, i) }
    }

    /// The orbits `(prev, cur)` of the base sequence from `(x0, x1)` (both `< g`, not both zero
    /// mod `p`): orbit `j` is `(x_{(j+1)N}, x_{(j+1)N+1})` in working units. `orbits` jumps of `N`.
    pub const fn orbits_from_base<const W: usize>(&self, x0: u64, x1: u64) -> ([u32; W], [u32; W]) {
        let start = (self.to_working(x0), self.to_working(x1));
        if self.wide {
            orbits_from::<W, true>(&self.rec, self.orbit_spacing, start)
        } else {
            orbits_from::<W, false>(&self.rec, self.orbit_spacing, start)
        }
    }

    /// Every orbit advanced by `jump`.
    #[inline(always)]
    pub const fn jump_orbits<const W: usize>(&self, jump: Jump, prev: &mut [u32; W], cur: &mut [u32; W]) {
        let from = (*prev, *cur);
        self.jump_orbits_from(jump, (&from.0, &from.1), prev, cur)
    }

    /// Every orbit of `from` advanced by `jump`, written to `(prev, cur)` (which may be the
    /// states in GPU global memory: nothing is built on the thread's stack).
    #[inline(always)]
    pub const fn jump_orbits_from<const W: usize>(
        &self,
        jump: Jump,
        from: (&[u32; W], &[u32; W]),
        prev: &mut [u32; W],
        cur: &mut [u32; W],
    ) {
        if self.wide {
            jump_all::<W, true>(&self.rec, jump, from, prev, cur)
        } else {
            jump_all::<W, false>(&self.rec, jump, from, prev, cur)
        }
    }

    /// Every orbit advanced by `n` steps (`O(log n)`: one [`Recurrence::jump`], then `orbits`
    /// applications).
    #[inline(always)]
    pub fn skip<const W: usize>(&self, prev: &mut [u32; W], cur: &mut [u32; W], n: u64) {
        self.jump_orbits(self.rec.jump(n as u128), prev, cur);
    }

    /// The start of stream `stream` of `seed`: `start` advanced by `seed_jump^seed` and
    /// `stream_jump^stream` (two exponentiations with 64-bit exponents, then one application per
    /// orbit), written to `(prev, cur)` in place: the GPU's set-up kernel writes the states in
    /// global memory directly (a 256-byte state built on the thread's stack and copied made the
    /// set-up of 10^6 streams take 5.8 ms on an H100, the larger the state the slower; 2.8 to
    /// 3.2 ms in place, 2026-11-24).
    #[inline(always)]
    pub fn stream_start_into<const W: usize>(
        &self,
        start: &([u32; W], [u32; W]),
        (seed_jump, seed): (Jump, u64),
        (stream_jump, stream): (Jump, u64),
        prev: &mut [u32; W],
        cur: &mut [u32; W],
    ) {
        let r = &self.rec;
        let jump = r.compose(r.pow(seed_jump, seed as u128), r.pow(stream_jump, stream as u128));
        self.jump_orbits_from(jump, (&start.0, &start.1), prev, cur);
    }

    /// Advance every orbit one step, handing each new value (working units) to `emit`.
    #[inline(always)]
    pub fn step_orbits<const W: usize>(&self, prev: &mut [u32; W], cur: &mut [u32; W], emit: impl FnMut(usize, u64)) {
        if self.wide {
            step_all::<W, true>(&self.rec, prev, cur, emit)
        } else {
            step_all::<W, false>(&self.rec, prev, cur, emit)
        }
    }

    /// `floor(2^v x / g) = floor(2^v y / p)` for `y < p` and `2^v p < 2^64` (GM55.4 and GQ58.x),
    /// without a division: with `z = 2^v y`,
    /// `z >> e` is at most one below `z / p` (because `z c / (p 2^e) < 1`), and the comparison
    /// with `(t + 1) p` decides.
    #[inline(always)]
    pub const fn top_bits(&self, y: u64, v: u32) -> u32 {
        let z = y << v;
        let t = z >> self.rec.e;
        (t + ((z >= (t + 1) * self.rec.p()) as u64)) as u32
    }

    /// One call of a 1-bit generator: bit `i` of the word is 1 when orbit `i`'s new value is
    /// `>= threshold` (working units).
    #[inline(always)]
    pub fn next_bits<const W: usize>(&self, prev: &mut [u32; W], cur: &mut [u32; W], threshold: u64) -> u32 {
        let mut w = 0u32;
        self.step_orbits(prev, cur, |i, y| w |= ((y >= threshold) as u32) << i);
        w
    }

    /// One call of a 4-bit generator (8 orbits): orbit `i`'s `floor(16 x / g)` is shifted left by
    /// `0, 8, 16, 24, 4, 12, 20, 28` for `i = 0..8`.
    #[inline(always)]
    pub fn next_nibbles<const W: usize>(&self, prev: &mut [u32; W], cur: &mut [u32; W]) -> u32 {
        let mut w = 0u32;
        // Orbits 0-3 fill the low nibble of bytes 0-3, orbits 4-7 the high nibbles.
        self.step_orbits(prev, cur, |i, y| w |= self.top_bits(y, 4) << ((i % 4) * 8 + (i / 4) * 4));
        w
    }

    /// One call of GQ58.3 (12 orbits, 3 bits each): `t = floor(8 x / g)`, and orbit `i` adds
    /// `((t << s) & 255) << (8 (i mod 4))` with `s = 6, 3, 0` for orbits 0-3, 4-7, 8-11. The
    /// first group keeps only the low two bits of its `t` (bits 6-7 of a byte), so a word holds
    /// 4 (2 + 3 + 3) = 32 bits from 36 generated.
    #[inline(always)]
    pub fn next_gq58_3<const W: usize>(&self, prev: &mut [u32; W], cur: &mut [u32; W]) -> u32 {
        let mut w = 0u32;
        self.step_orbits(prev, cur, |i, y| {
            let s = 6 - 3 * (i / 4) as u32;
            w |= ((self.top_bits(y, 3) << s) & 255) << (8 * (i % 4));
        });
        w
    }

    /// The raw state `x0, x1` (`x0_lo, x0_hi, x1_lo, x1_hi` when `g > 2^32`), validated: each
    /// `< g`, and not both zero mod `p` (for prime `g`: not both zero).
    pub fn parse_raw(&self, name: &'static str, rules: &RawRules, words: &[u32]) -> Result<(u64, u64), InvalidState> {
        let g = self.g();
        let (x, hi_word): ([u64; 2], [u8; 2]) = match (self.raw_words(), words) {
            (2, &[x0, x1]) => ([x0 as u64, x1 as u64], [0, 1]),
            (4, &[l0, h0, l1, h1]) => ([l0 as u64 | (h0 as u64) << 32, l1 as u64 | (h1 as u64) << 32], [1, 3]),
            _ => return Err(InvalidState::word_count(name, rules.count)),
        };
        let range = [rules.x0, rules.x1];
        let mut i = 0;
        while i < 2 {
            if x[i] >= g {
                // The offending word is the value's high word when it has two (its low word
                // alone never makes it too large).
                let word = hi_word[i];
                return Err(InvalidState {
                    generator: name,
                    word: Some(word),
                    value: words[word as usize],
                    rule: range[i],
                });
            }
            i += 1;
        }
        if self.rec.reduce(x[0]) == 0 && self.rec.reduce(x[1]) == 0 {
            return Err(InvalidState { generator: name, word: None, value: 0, rule: rules.zero });
        }
        Ok((x[0], x[1]))
    }
}

/// A generator of the family from its constants: the state struct (its docs as given, two
/// `[u32; W]` arrays `prev` and `cur` holding the orbit values in the layout of [`Family::load`]),
/// its `Uniform32`, `Generator` and `Skip` impls, and the private items they use in the calling
/// module: `START` (the published orbits, evaluated at compile time), `STREAM_JUMP` and
/// `SEED_JUMP`. `FAMILY.is_consistent::<W>()` and the struct's size are checked at compile time.
///
/// ```text
/// gm_generator! {
///     /// Generator state: ...
///     pub struct Gm19 {
///         /// `x_{n-1}` of orbit `j`.
///         pub prev: [u32; 32],
///         /// `x_n` of orbit `j`.
///         pub cur: [u32; 32],
///     }
///     name: "gm19",                   // Generator::NAME
///     raw_state: "x0,x1",             // Generator::RAW_STATE; RAW_STATE_WORDS is FAMILY.raw_words()
///     family: FAMILY,                 // the Family
///     base: BASE,                     // the published (x0, x1): seed 0, stream 0
///     rules: RULES,                   // the RawRules of from_raw_state
///     next_u32: next_bits(THRESHOLD), // a Family method, called as FAMILY.next_bits(prev, cur, THRESHOLD)
///     stream_spacing: STREAM_SPACING, // steps between neighbouring streams (u64)
///     seed_spacing: 1 << 40,          // steps between neighbouring seeds (u128)
///     stream_doc: "The published sequence skipped by ...", // the doc of Generator::stream
///     period: "about 2^38",           // Generator::PERIOD
/// }
/// ```
macro_rules! gm_generator {
    (
        $(#[$attr:meta])*
        pub struct $ty:ident {
            $(#[$prev_attr:meta])*
            pub prev: [u32; $w:literal],
            $(#[$cur_attr:meta])*
            pub cur: [u32; $w_cur:literal] $(,)?
        }
        name: $name:literal,
        raw_state: $raw_state:literal,
        family: $family:expr,
        base: $base:expr,
        rules: $rules:expr,
        next_u32: $next:ident($($next_arg:expr),* $(,)?),
        stream_spacing: $stream_spacing:expr,
        seed_spacing: $seed_spacing:expr,
        stream_doc: $stream_doc:literal,
        period: $period:literal $(,)?
    ) => {
        $(#[$attr])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(C)]
        pub struct $ty {
            $(#[$prev_attr])*
            pub prev: [u32; $w],
            $(#[$cur_attr])*
            pub cur: [u32; $w_cur],
        }

        const _: () = assert!($w == $w_cur && size_of::<$ty>() == 8 * $w && align_of::<$ty>() == 4);
        const _: () = assert!($family.is_consistent::<$w>());

        // A `const`, not a `static`: a user's integrand module (built with --emit=asm) embeds what it
        // reads of a const, but would hold a static of this crate only as an undefined `.extern .global`
        // (README, "Your own integrand").
        /// The published orbits (seed 0, stream 0), evaluated at compile time.
        const START: ([u32; $w], [u32; $w]) = $family.orbits_from_base($base.0, $base.1);
        const STREAM_JUMP: $crate::rng::gm_common::Jump = $family.rec.jump($stream_spacing as u128);
        const SEED_JUMP: $crate::rng::gm_common::Jump = $family.rec.jump($seed_spacing);

        impl $crate::rng::Uniform32 for $ty {
            #[inline(always)]
            fn next_u32(&mut self) -> u32 {
                $family.$next(&mut self.prev, &mut self.cur $(, $next_arg)*)
            }
        }

        // SAFETY: the struct is the one this macro declares just above: #[repr(C)] with two
        // fields, both [u32; W] (the two lengths are checked equal at compile time): 2 W words,
        // no padding (size and alignment are checked at compile time too).
        unsafe impl $crate::rng::Generator for $ty {
            const NAME: &'static str = $name;
            const RAW_STATE: &'static str = $raw_state;
            const RAW_STATE_WORDS: usize = $family.raw_words();
            const PERIOD: &'static str = $period;

            #[doc = $stream_doc]
            fn stream(seed: u64, stream: u64) -> Self {
                let mut g = Self { prev: [0; $w], cur: [0; $w] };
                <Self as $crate::rng::Generator>::write_stream(seed, stream, &mut g);
                g
            }

            #[inline(always)]
            fn write_stream(seed: u64, stream: u64, out: &mut Self) {
                $family.stream_start_into(&START, (SEED_JUMP, seed), (STREAM_JUMP, stream), &mut out.prev, &mut out.cur);
            }

            fn from_raw_state(words: &[u32]) -> Result<Self, $crate::rng::InvalidState> {
                let (x0, x1) = $family.parse_raw(Self::NAME, &$rules, words)?;
                let (prev, cur) = $family.orbits_from_base(x0, x1);
                Ok(Self { prev, cur })
            }
        }

        impl $crate::rng::Skip for $ty {
            #[inline(always)]
            fn skip(&mut self, n: u64) {
                $family.skip(&mut self.prev, &mut self.cur, n);
            }
        }
    };
}
pub(crate) use gm_generator;

// The orbit loops, with the storage layout as a constant: `W` words hold `W` values, or `W / 2`
// (low word, high word) pairs when `WIDE`. Every loop runs to that count, so each index is in
// range by construction and the GPU build has no bounds-check panic path (`Family::wide` is
// checked against `W` and `orbits` at compile time by `Family::is_consistent`).

#[inline(always)]
const fn slots<const W: usize, const WIDE: bool>() -> usize {
    if WIDE { W / 2 } else { W }
}

#[inline(always)]
const fn load<const W: usize, const WIDE: bool>(words: &[u32; W], i: usize) -> u64 {
    if WIDE { words[2 * i] as u64 | (words[2 * i + 1] as u64) << 32 } else { words[i] as u64 }
}

#[inline(always)]
const fn store<const W: usize, const WIDE: bool>(words: &mut [u32; W], i: usize, v: u64) {
    if WIDE {
        words[2 * i] = v as u32;
        words[2 * i + 1] = (v >> 32) as u32;
    } else {
        words[i] = v as u32;
    }
}

const fn orbits_from<const W: usize, const WIDE: bool>(
    r: &Recurrence,
    spacing: u128,
    start: (u64, u64),
) -> ([u32; W], [u32; W]) {
    let spacing = r.jump(spacing);
    let (mut prev, mut cur) = ([0u32; W], [0u32; W]);
    let (mut yp, mut yc) = start;
    let mut j = 0;
    while j < slots::<W, WIDE>() {
        (yp, yc) = r.apply(spacing, yp, yc);
        store::<W, WIDE>(&mut prev, j, yp);
        store::<W, WIDE>(&mut cur, j, yc);
        j += 1;
    }
    (prev, cur)
}

/// Every orbit of `(from_prev, from_cur)` advanced by `jump`, into `(prev, cur)`.
#[inline(always)]
const fn jump_all<const W: usize, const WIDE: bool>(
    r: &Recurrence,
    jump: Jump,
    (from_prev, from_cur): (&[u32; W], &[u32; W]),
    prev: &mut [u32; W],
    cur: &mut [u32; W],
) {
    let mut i = 0;
    while i < slots::<W, WIDE>() {
        let (p, c) = r.apply(jump, load::<W, WIDE>(from_prev, i), load::<W, WIDE>(from_cur, i));
        store::<W, WIDE>(prev, i, p);
        store::<W, WIDE>(cur, i, c);
        i += 1;
    }
}

#[inline(always)]
fn step_all<const W: usize, const WIDE: bool>(
    r: &Recurrence,
    prev: &mut [u32; W],
    cur: &mut [u32; W],
    mut emit: impl FnMut(usize, u64),
) {
    let mut i = 0;
    while i < slots::<W, WIDE>() {
        let (p, c) = (load::<W, WIDE>(prev, i), load::<W, WIDE>(cur, i));
        let n = r.step(p, c);
        store::<W, WIDE>(prev, i, c);
        store::<W, WIDE>(cur, i, n);
        emit(i, n);
        i += 1;
    }
}

/// The definitions, literally, for the generators' tests: `x` mod `g` in `u128` with `%`,
/// orbits started by a 2x2 matrix power mod `g`, outputs assembled as ALGORITHMS.md states them.
#[cfg(test)]
pub(crate) mod definition {
    /// How a word is assembled.
    #[derive(Clone, Copy, Debug)]
    pub enum Assembly {
        /// Bit `i` is `x_i >= threshold`.
        OneBit(u128),
        /// Orbit `i`'s `x / (g / 16)` shifted by `0, 8, 16, 24, 4, 12, 20, 28`.
        Nibbles,
        /// `t = x / (g / 8)`, `word += ((t << s_i) & 255) << (8 (i mod 4))`, `s_i = 6, 3, 0`.
        ThreeBit,
    }

    /// One generator by its definition: `g`, `k`, `q`, the base `(x0, x1)` (reduced mod `g`),
    /// orbit spacing `N`, orbit count and assembly.
    #[derive(Clone, Debug)]
    pub struct Definition {
        pub g: u128,
        pub k: u128,
        pub q: u128,
        pub spacing: u128,
        pub orbits: usize,
        pub assembly: Assembly,
    }

    type Mat = [[u128; 2]; 2];

    impl Definition {
        fn mat_mul(&self, a: &Mat, b: &Mat) -> Mat {
            let g = self.g;
            let mut c = [[0; 2]; 2];
            for i in 0..2 {
                for j in 0..2 {
                    c[i][j] = (a[i][0] * b[0][j] % g + a[i][1] * b[1][j] % g) % g;
                }
            }
            c
        }

        /// `(x_{m-1}, x_m)` advanced by `n` steps with `[[k, -q], [1, 0]]^n` on `(x_m, x_{m-1})`.
        pub fn advance(&self, prev: u128, cur: u128, mut n: u128) -> (u128, u128) {
            let mut r: Mat = [[1, 0], [0, 1]];
            let mut b: Mat = [[self.k % self.g, (self.g - self.q % self.g) % self.g], [1, 0]];
            while n > 0 {
                if n & 1 == 1 {
                    r = self.mat_mul(&r, &b);
                }
                b = self.mat_mul(&b, &b);
                n >>= 1;
            }
            let g = self.g;
            let new_cur = (r[0][0] * cur % g + r[0][1] * prev % g) % g;
            let new_prev = (r[1][0] * cur % g + r[1][1] * prev % g) % g;
            (new_prev, new_cur)
        }

        /// Orbit `j` at `(x_{(j+1)N}, x_{(j+1)N+1})` of the base sequence.
        pub fn orbits(&self, x0: u128, x1: u128) -> Vec<(u128, u128)> {
            (0..self.orbits).map(|j| self.advance(x0 % self.g, x1 % self.g, (j as u128 + 1) * self.spacing)).collect()
        }

        /// The next word from `orbits` (each advanced one step).
        pub fn next(&self, orbits: &mut [(u128, u128)]) -> u32 {
            let g = self.g;
            let mut w: u64 = 0;
            for (i, o) in orbits.iter_mut().enumerate() {
                let x = (self.k * o.1 + (g - self.q % g) * o.0) % g;
                *o = (o.1, x);
                w += match self.assembly {
                    Assembly::OneBit(threshold) => ((x >= threshold) as u64) << i,
                    Assembly::Nibbles => ((x / (g / 16)) as u64) << [0, 8, 16, 24, 4, 12, 20, 28][i],
                    Assembly::ThreeBit => ((((x / (g / 8)) as u64) << [6, 3, 0][i / 4]) & 255) << (8 * (i % 4)),
                };
            }
            w as u32
        }

        /// The first `n` words from the base `(x0, x1)`.
        pub fn outputs(&self, x0: u128, x1: u128, n: usize) -> Vec<u32> {
            let mut o = self.orbits(x0, x1);
            (0..n).map(|_| self.next(&mut o)).collect()
        }
    }

    /// PRAND's check: `frac((sum of the first 10^8 words) / 2^32)` and the next word `/ 2^32`,
    /// both to six decimals.
    pub fn prand_check(mut next: impl FnMut() -> u32) -> String {
        let mut sum = 0u32;
        for _ in 0..100_000_000 {
            sum = sum.wrapping_add(next());
        }
        let frac = sum as f64 / 4294967296.0;
        let n = next() as f64 / 4294967296.0;
        format!("{frac:.6} {n:.6}")
    }

    /// The sum of the first `n` words mod 2^64 (a regression value).
    pub fn sum(mut next: impl FnMut() -> u32, n: usize) -> u64 {
        (0..n).map(|_| next() as u64).sum()
    }
}

/// The tests every generator of the family runs, on its own data: each generator's `mod tests`
/// fills a [`checks::Case`] with its published and pinned values and calls [`gm_tests!`], which
/// writes one `#[test]` per check below (same names in every file).
#[cfg(test)]
pub(crate) mod checks {
    use std::fmt::Debug;

    use super::super::Skip;
    use super::super::testing::*;
    use super::definition::{Definition, prand_check, sum};
    use super::{Family, Jump};

    /// Test access to a generator's orbits (written by [`gm_tests!`]).
    pub trait Orbits: Skip + PartialEq + Debug {
        /// Orbit `j`'s `(prev, cur)` in working units.
        fn orbit(&self, j: usize) -> (u64, u64);
        /// Every orbit advanced by `jump`.
        fn jumped(self, jump: Jump) -> Self;
    }

    /// What a generator's long skip check is.
    #[derive(Clone, Copy, Debug)]
    pub enum Cycle {
        /// The cycle has this length (`P < 2^64`): skipping it is the identity.
        Period(u64),
        /// `P > 2^64`: two skips of `2^63` are the jump by `2^64`, which is one seed spacing
        /// (stream `(1, 2)` to stream `(2, 2)`).
        BeyondU64,
    }

    /// Where seed `s` starts, checked at each of `seeds` on stream 3.
    #[derive(Clone, Copy, Debug)]
    pub enum Seeds {
        /// Seed `s`, stream `k` is stream `per_seed s + k` of seed 0.
        Streams { per_seed: u64, seeds: &'static [u64] },
        /// Seed `s` is seed 0 skipped by `s spacing` steps (with `Skip::skip`).
        Skip { spacing: u64, seeds: &'static [u64] },
        /// Seed `s` is seed 0 with every orbit jumped by `s spacing` steps (beyond `u64`).
        Jump { spacing: u128, seeds: &'static [u64] },
    }

    /// A raw pair `(x0, x1)`.
    pub type Pair = (u64, u64);

    /// One generator's data for the checks. Raw pairs `(x0, x1)` are encoded as the generator's
    /// raw state words (two words, or `x0_lo, x0_hi, x1_lo, x1_hi` when `g > 2^32`).
    pub struct Case {
        /// `Generator::NAME`, as the errors must carry it.
        pub name: &'static str,
        /// The generator's `FAMILY`.
        pub family: Family,
        /// The definition, literally.
        pub definition: Definition,
        /// The published base `(x0, x1)` as the definition takes it (not reduced).
        pub published_base: (u128, u128),
        /// The generator's `BASE`, and its raw state words.
        pub base: Pair,
        pub base_words: &'static [u32],
        /// `(value, expected)` pairs of the generator's derived constants.
        pub constants: &'static [(u64, u64)],
        /// The first outputs of the published generator ([R] in ALGORITHMS.md).
        pub first_outputs: [u32; 5],
        /// PRAND's check ([`prand_check`]) of the published generator.
        pub prand_sum: &'static str,
        /// The sum of the first 10^6 words (a regression value).
        pub regression_sum: u64,
        /// Raw pairs whose first 2000 outputs are checked against the definition.
        pub definition_starts: &'static [Pair],
        /// Pairs of raw pairs that must give the same generator.
        pub same_generator: &'static [(Pair, Pair)],
        /// `((seed, stream), first three outputs)`: pinned values.
        pub pinned: [((u64, u64), [u32; 3]); 2],
        /// The raw pair of the second start of the skip test (the first is stream `(0, 0)`).
        pub skip_from: Pair,
        /// Skip pairs checked after the common ones.
        pub extra_compose_pairs: &'static [(u64, u64)],
        pub cycle: Cycle,
        /// `STREAM_SPACING`, and `(seed, streams)` whose neighbours are that far apart.
        pub stream_spacing: u64,
        pub spaced_streams: &'static [(u64, &'static [u64])],
        pub seeds: Seeds,
        /// `(seed, streams)`: streams `k` and `k + 1` share no value in their first 1000.
        pub disjoint_neighbours: &'static [(u64, &'static [u64])],
        /// Raw pairs `from_raw_state` accepts.
        pub valid: &'static [Pair],
        /// `(raw pair, word, value, rule start)` of the range errors.
        pub out_of_range: &'static [(Pair, u8, u32, &'static str)],
        /// Raw pairs rejected as a rule about the whole state, starting with `zero_rule`.
        pub zero: &'static [Pair],
        pub zero_rule: &'static str,
        /// Word counts rejected, with a rule starting with `count_rule`.
        pub wrong_counts: &'static [&'static [u32]],
        pub count_rule: &'static str,
    }

    impl Case {
        /// The raw state words of the pair `(x0, x1)`.
        pub fn raw(&self, (x0, x1): Pair) -> Vec<u32> {
            if self.family.raw_words() == 4 {
                vec![x0 as u32, (x0 >> 32) as u32, x1 as u32, (x1 >> 32) as u32]
            } else {
                assert!(x0 <= u32::MAX as u64 && x1 <= u32::MAX as u64, "{x0}, {x1} are two-word raw states");
                vec![x0 as u32, x1 as u32]
            }
        }
    }

    /// The first outputs of the published generator, from the generator and from the
    /// definition; its constants; its raw state.
    pub fn reference<G: Orbits>(c: &Case) {
        assert_eq!(first(&mut G::stream(0, 0), 5), c.first_outputs);
        assert_eq!(c.definition.outputs(c.published_base.0, c.published_base.1, 5), c.first_outputs);
        for &(value, expected) in c.constants {
            assert_eq!(value, expected);
        }
        assert_eq!(c.raw(c.base), c.base_words);
        assert_eq!(G::from_raw_state(c.base_words), Ok(G::stream(0, 0)));
    }

    /// PRAND's check: `frac((sum of the first 10^8 words) / 2^32)` and the next word `/ 2^32`.
    pub fn reference_prand_sum<G: Orbits>(c: &Case) {
        let mut g = G::stream(0, 0);
        assert_eq!(prand_check(|| g.next_u32()), c.prand_sum);
    }

    /// A regression value computed with this implementation (which matches the published 10^8
    /// check): the sum of the first 10^6 words.
    pub fn regression_sum<G: Orbits>(c: &Case) {
        let mut g = G::stream(0, 0);
        assert_eq!(sum(|| g.next_u32(), 1_000_000), c.regression_sum);
    }

    /// The definition in `x` mod `g` (with its transient, if any) against the generator in
    /// working units; pairs that agree mod `p` are the same generator.
    pub fn from_raw_state_follows_definition<G: Orbits>(c: &Case) {
        for &(x0, x1) in c.definition_starts {
            let mut g = G::from_raw_state(&c.raw((x0, x1))).unwrap();
            assert_eq!(first(&mut g, 2000), c.definition.outputs(x0 as u128, x1 as u128, 2000), "{x0}, {x1}");
        }
        for &(a, b) in c.same_generator {
            assert_eq!(G::from_raw_state(&c.raw(a)), G::from_raw_state(&c.raw(b)), "{a:?}, {b:?}");
        }
    }

    /// Pinned: a change here changes every result produced with the generator.
    pub fn value_stability<G: Orbits>(c: &Case) {
        for ((seed, stream), expected) in c.pinned {
            assert_eq!(first(&mut G::stream(seed, stream), 3), expected, "stream ({seed}, {stream})");
        }
    }

    /// Orbit `j + 1` starts `N` steps after orbit `j`.
    pub fn orbits_are_spaced<G: Orbits>(c: &Case) {
        let (f, g) = (&c.family, G::stream(0, 0));
        assert_eq!(f.orbits, c.definition.orbits);
        let spacing = f.rec.jump(f.orbit_spacing);
        for j in 0..f.orbits - 1 {
            let (prev, cur) = g.orbit(j);
            assert_eq!(f.rec.apply(spacing, prev, cur), g.orbit(j + 1), "orbit {j}");
        }
    }

    pub fn skip_equals_stepping<G: Orbits>(c: &Case) {
        let mut r = 1u64;
        let ns = skip_lengths((0..5).map(|_| splitmix64(&mut r) % 1_000_001));
        skip_matches_stepping(G::stream(0, 0), &ns);
        skip_matches_stepping(G::from_raw_state(&c.raw(c.skip_from)).unwrap(), &ns);
    }

    pub fn skips_compose<G: Orbits>(c: &Case) {
        let common = [(0, 5), (17, 1 << 40), (123_456_789, 987_654_321_000), (u64::MAX / 2, u64::MAX / 2)];
        let pairs: Vec<(u64, u64)> = common.into_iter().chain(c.extra_compose_pairs.iter().copied()).collect();
        skips_compose_for(G::stream(1, 2), &pairs);
        match c.cycle {
            Cycle::Period(p) => assert_eq!(skipped(G::stream(1, 2), p), G::stream(1, 2)),
            Cycle::BeyondU64 => {
                let g = G::stream(1, 2).jumped(c.family.rec.jump(1 << 64));
                assert_eq!(skipped(skipped(G::stream(1, 2), 1 << 63), 1 << 63), g);
                assert_eq!(g, G::stream(2, 2));
            }
        }
        skips_are_cheap(G::stream(0, 0), (0..1000u64).map(|i| u64::MAX - i));
    }

    pub fn streams<G: Orbits>(c: &Case) {
        let starts = streams_start_distinct::<G>(0, 1000);
        assert_eq!(starts[0], G::from_raw_state(&c.raw(c.base)).unwrap());
        for &(seed, ks) in c.spaced_streams {
            streams_are_spaced::<G>(seed, ks, c.stream_spacing);
        }
        match c.seeds {
            Seeds::Streams { per_seed, seeds } => {
                for &s in seeds {
                    assert_eq!(G::stream(s, 3), G::stream(0, per_seed * s + 3), "seed {s}");
                }
            }
            Seeds::Skip { spacing, seeds } => {
                for &s in seeds {
                    assert_eq!(G::stream(s, 3), skipped(G::stream(0, 3), s * spacing), "seed {s}");
                }
            }
            Seeds::Jump { spacing, seeds } => {
                for &s in seeds {
                    let jump = c.family.rec.jump(s as u128 * spacing);
                    assert_eq!(G::stream(s, 3), G::stream(0, 3).jumped(jump), "seed {s}");
                }
            }
        }
        for &(seed, ks) in c.disjoint_neighbours {
            neighbours_share_no_value::<G>(seed, ks.iter().copied(), 1000);
        }
        seed_and_stream_halves_matter::<G>();
    }

    pub fn invalid_states<G: Orbits>(c: &Case) {
        for &pair in c.valid {
            assert!(G::from_raw_state(&c.raw(pair)).is_ok(), "{pair:?}");
        }
        for &(pair, word, value, rule) in c.out_of_range {
            let words = c.raw(pair);
            let e = G::from_raw_state(&words).unwrap_err();
            assert_eq!((e.generator, e.word, e.value), (c.name, Some(word), value), "{words:?}");
            assert!(e.rule.starts_with(rule), "{}", e.rule);
        }
        for &pair in c.zero {
            let e = G::from_raw_state(&c.raw(pair)).unwrap_err();
            assert_eq!((e.word, e.value), (None, 0), "{pair:?}");
            assert!(e.rule.starts_with(c.zero_rule), "{}", e.rule);
        }
        rejects_word_counts::<G>(c.wrong_counts, c.count_rule);
    }

    /// The family's tests for the generator `$ty` (declared with [`super::gm_generator!`], so
    /// with `prev` and `cur` arrays) on the data `$case`, a [`Case`]: one `#[test]` per check, under
    /// the check's name. `reference_prand_sum` takes the attributes given before its name (its
    /// doc and, for the slow ones, `#[ignore = "..."]`).
    macro_rules! gm_tests {
        ($ty:ty, $case:expr, $(#[$prand_attr:meta])* reference_prand_sum $(,)?) => {
            impl $crate::rng::gm_common::checks::Orbits for $ty {
                fn orbit(&self, j: usize) -> (u64, u64) {
                    ($case.family.load(&self.prev, j), $case.family.load(&self.cur, j))
                }

                fn jumped(mut self, jump: $crate::rng::gm_common::Jump) -> Self {
                    $case.family.jump_orbits(jump, &mut self.prev, &mut self.cur);
                    self
                }
            }

            #[test]
            fn reference() {
                $crate::rng::gm_common::checks::reference::<$ty>(&$case);
            }

            #[test]
            $(#[$prand_attr])*
            fn reference_prand_sum() {
                $crate::rng::gm_common::checks::reference_prand_sum::<$ty>(&$case);
            }

            #[test]
            fn regression_sum() {
                $crate::rng::gm_common::checks::regression_sum::<$ty>(&$case);
            }

            #[test]
            fn from_raw_state_follows_definition() {
                $crate::rng::gm_common::checks::from_raw_state_follows_definition::<$ty>(&$case);
            }

            #[test]
            fn value_stability() {
                $crate::rng::gm_common::checks::value_stability::<$ty>(&$case);
            }

            #[test]
            fn orbits_are_spaced() {
                $crate::rng::gm_common::checks::orbits_are_spaced::<$ty>(&$case);
            }

            #[test]
            fn skip_equals_stepping() {
                $crate::rng::gm_common::checks::skip_equals_stepping::<$ty>(&$case);
            }

            #[test]
            fn skips_compose() {
                $crate::rng::gm_common::checks::skips_compose::<$ty>(&$case);
            }

            #[test]
            fn streams() {
                $crate::rng::gm_common::checks::streams::<$ty>(&$case);
            }

            #[test]
            fn invalid_states() {
                $crate::rng::gm_common::checks::invalid_states::<$ty>(&$case);
            }
        };
    }
    pub(crate) use gm_tests;
}

#[cfg(test)]
mod tests {
    use super::super::testing::splitmix64;
    use super::*;

    /// The five working moduli of the family, with a (k, q) of each.
    const RECS: [Recurrence; 5] = [
        Recurrence { e: 19, c: 1, k: 15, q: 28 },
        Recurrence { e: 29, c: 3, k: 4, q: 2 },
        Recurrence { e: 31, c: 1, k: 11, q: 14 },
        Recurrence { e: 51, c: 129, k: 256, q: 176 },
        Recurrence { e: 61, c: 1, k: 24, q: 74 },
    ];

    #[test]
    fn recurrences_are_supported() {
        for r in RECS {
            assert!(r.is_supported(), "{r:?}");
        }
        assert!(RECS.iter().any(|r| r.e == 29 && r.k == 4));
        assert!(Recurrence { e: 29, c: 3, k: 8, q: 48 }.is_supported());
    }

    /// Folding equals `%`: for any u64 (reduce), any pair of residues (mul), and the step.
    #[test]
    fn arithmetic_equals_remainder() {
        let mut s = 11u64;
        for r in RECS.into_iter().chain([Recurrence { e: 29, c: 3, k: 8, q: 48 }]) {
            let p = r.p();
            let edges = [0, 1, 2, p - 2, p - 1];
            let mut residues: Vec<u64> = edges.to_vec();
            residues.extend((0..2000).map(|_| splitmix64(&mut s) % p));
            for v in
                [0, 1, p - 1, p, p + 1, 2 * p - 1, 2 * p, u64::MAX, u64::MAX - 1, 1 << 63, (1 << r.e) - 1, 1 << r.e]
                    .into_iter()
                    .chain((0..100_000).map(|_| splitmix64(&mut s) >> (splitmix64(&mut s) % 64)))
            {
                assert_eq!(r.reduce(v), v % p, "{r:?} reduce {v}");
            }
            for &a in &residues {
                for &b in residues.iter().take(60) {
                    let (a128, b128, p128) = (a as u128, b as u128, p as u128);
                    assert_eq!(r.mul(a, b) as u128, a128 * b128 % p128, "{r:?} {a} * {b}");
                    assert_eq!(r.add(a, b) as u128, (a128 + b128) % p128);
                    assert_eq!(r.sub(a, b) as u128, (a128 + p128 - b128) % p128);
                    let step = (r.k as u128 * b128 + (p128 - r.q as u128) * a128) % p128;
                    assert_eq!(r.step(a, b) as u128, step, "{r:?} step({a}, {b})");
                }
            }
        }
    }

    /// A jump of `n` is `n` steps, and jumps compose.
    #[test]
    fn jumps_equal_steps() {
        for r in RECS {
            let (mut yp, mut yc) = (12345 % r.p(), r.p() - 7);
            let (p0, c0) = (yp, yc);
            for n in 0..300u64 {
                assert_eq!(r.apply(r.jump(n as u128), p0, c0), (yp, yc), "{r:?} n = {n}");
                (yp, yc) = (yc, r.step(yp, yc));
            }
            let (a, b) = (0x0123_4567_89AB_CDEF_u128 << 50, 987_654_321_987_654_321_u128);
            assert_eq!(r.compose(r.jump(a), r.jump(b)), r.jump(a + b));
            assert_eq!(r.pow(r.jump(b), 5), r.jump(5 * b));
        }
    }

    /// `X^2 - k X + q` is primitive mod p: the cycle of nonzero states has length exactly
    /// `p^2 - 1` (the jump by `p^2 - 1` is the identity and none by `(p^2 - 1) / f` for a prime
    /// factor `f` is). The factorisations are of `(p - 1)(p + 1)`.
    #[test]
    fn period_is_p_squared_minus_one() {
        let factors: [&[u128]; 5] = [
            &[2, 3, 7, 19, 73],
            &[2, 3, 5, 7, 29, 43, 73, 113, 127, 262657],
            &[2, 3, 7, 11, 31, 151, 331],
            &[2, 3, 5, 23, 89, 397, 683, 701, 1531, 2113, 1049075089],
            &[2, 3, 5, 7, 11, 13, 31, 41, 61, 151, 331, 1321],
        ];
        for (r, primes) in RECS
            .into_iter()
            .chain([Recurrence { e: 29, c: 3, k: 8, q: 48 }])
            .zip(factors.into_iter().chain([&[2u128, 3, 5, 7, 29, 43, 73, 113, 127, 262657][..]]))
        {
            let period = r.p() as u128 * r.p() as u128 - 1;
            let mut rest = period;
            for &f in primes {
                assert_eq!(rest % f, 0);
                while rest.is_multiple_of(f) {
                    rest /= f;
                }
                assert_ne!(r.jump(period / f), Recurrence::IDENTITY, "{r:?} / {f}");
            }
            assert_eq!(rest, 1, "{r:?}: the factorisation is complete");
            assert_eq!(r.jump(period), Recurrence::IDENTITY);
        }
    }

    /// The division-free `floor(2^v y / p)` equals the division, at the edges of every bucket.
    #[test]
    fn top_bits_equal_division() {
        for r in [RECS[1], RECS[3]] {
            let f = Family { rec: r, t: 0, orbits: 1, wide: r.e > 32, orbit_spacing: 1 };
            let p = r.p();
            for v in [1u32, 3, 4] {
                for b in 0..(1u64 << v) {
                    let edge = (b * p).div_ceil(1 << v);
                    for y in [edge.saturating_sub(1), edge, edge + 1].into_iter().filter(|&y| y < p) {
                        assert_eq!(f.top_bits(y, v) as u64, (y << v) / p, "{r:?} {y} {v}");
                    }
                }
            }
        }
    }
}
