//! The GF(2) algebra of Thomas's warp generator: the definition's constants, one step of the
//! whole 32-lane state, its characteristic polynomial and polynomial jumps.
//!
//! This file is compiled twice: into the kernel crate (as `rng::warp_algebra`, CPU builds only),
//! and into the kernel crate's build script (`gpu-kernels/build.rs`, through `#[path]`), which
//! computes the jump tables of the stream rule once per build (`warp_jumps.rs` in `OUT_DIR`).
//! It uses `core` only and no other module of the crate. Only the constants and [`advance`] are
//! needed on the GPU; the rest is compiled for the CPU only.
//!
//! **The map.** A state is the 32 lane words `s[0..32]`, 1024 bits. One step reads every lane's
//! two taps, then writes every lane: `s'[l] = (s[QA[l]] << ZA) ^ (s[QB[l]] >> ZB[l])`. Shifts and
//! XOR are linear over GF(2), so a step is a linear map `T` of the 1024-bit state.
//!
//! **Characteristic polynomial.** [`characteristic_polynomial`] runs Berlekamp–Massey over GF(2)
//! on bit 0 of lane 0 over 2048 steps from a fixed state. That bit sequence satisfies the
//! minimal polynomial of `T`, whose degree is at most 1024; the algorithm finds the sequence's
//! minimal polynomial, and when its degree is 1024 (it is: the function checks, and the tests
//! check it annihilates the whole state sequence) it is the characteristic polynomial `P` of `T`.
//! `P` is primitive (the period test in the generator's module), so every non-zero state lies on
//! one cycle of length `2^1024 - 1`.
//!
//! **Jumps.** By Cayley–Hamilton `P(T) = 0`, so `T^n = g(T)` with `g(x) = x^n mod P`, a
//! polynomial of degree below 1024: `T^n s = sum over j of g_j T^j s`, computed by Horner's
//! rule in 1024 steps ([`apply`]). [`x_pow_mod`] finds `g` by square-and-multiply.

/// Lanes of a warp, and words of the state.
pub const LANES: usize = 32;

/// First tap of each lane (a permutation of 0..31 without fixed points).
pub const QA: [u32; LANES] = [
    29, 24, 5, 23, 14, 26, 11, 31, 9, 3, 1, 28, 0, 2, 22, 20, 18, 15, 27, 13, 10, 16, 8, 17, 25, 12, 19, 30, 7, 6, 4,
    21,
];
/// Second tap of each lane (a permutation of 0..31 without fixed points, `QB[l] != QA[l]`).
pub const QB: [u32; LANES] = [
    5, 14, 28, 24, 19, 13, 0, 17, 11, 20, 7, 10, 6, 15, 2, 9, 8, 23, 4, 30, 12, 25, 3, 21, 26, 27, 31, 18, 22, 16, 29,
    1,
];
/// Left shift of the first tap, the same for every lane.
pub const ZA: u32 = 2;
/// Right shift of the second tap, per lane.
pub const ZB: [u32; LANES] =
    [0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 0, 1];

/// Bits of the state, and the degree of its characteristic polynomial.
pub const STATE_BITS: usize = 32 * LANES;

/// A polynomial of degree below 1024 over GF(2): bit `j % 64` of word `j / 64` is the
/// coefficient of `x^j`.
pub type Poly = [u64; 16];

/// The state after one step (the outputs are not needed for the algebra).
#[inline(always)]
pub fn advance(s: &[u32; LANES]) -> [u32; LANES] {
    let mut next = [0u32; LANES];
    let mut l = 0;
    while l < LANES {
        next[l] = (s[QA[l] as usize] << ZA) ^ (s[QB[l] as usize] >> ZB[l]);
        l += 1;
    }
    next
}

/// `g(T) s`: `T^n s` when `g = x^n mod P`. Horner's rule from the top coefficient: 1024 steps.
#[cfg(not(target_arch = "nvptx64"))]
pub fn apply(g: &Poly, s: &[u32; LANES]) -> [u32; LANES] {
    let mut r = [0u32; LANES];
    let mut j = STATE_BITS;
    while j > 0 {
        j -= 1;
        r = advance(&r);
        if (g[j / 64] >> (j % 64)) & 1 == 1 {
            let mut l = 0;
            while l < LANES {
                r[l] ^= s[l];
                l += 1;
            }
        }
    }
    r
}

/// The monic characteristic polynomial `P` of the step: the coefficients of `x^0 .. x^1023`
/// (the `x^1024` term is implicit). Panics if the sequence it is computed from has a minimal
/// polynomial of lower degree (it has not; the tests and the build script check).
#[cfg(not(target_arch = "nvptx64"))]
pub fn characteristic_polynomial() -> Poly {
    // A fixed state with few, scattered bits is enough: any state whose orbit spans the whole
    // space gives P, and the degree check below confirms this one does.
    let mut s = [0u32; LANES];
    s[0] = 1;
    s[7] = 0x8000_0000;
    s[19] = 0x0001_0000;
    const N: usize = 2 * STATE_BITS;
    let mut bits = [0u8; N];
    let mut t = 0;
    while t < N {
        bits[t] = (s[0] & 1) as u8;
        s = advance(&s);
        t += 1;
    }
    // Berlekamp–Massey over GF(2): c is the connection polynomial, s_t = sum_{i=1..L} c_i s_{t-i}.
    let mut c = [0u8; N + 1];
    let mut b = [0u8; N + 1];
    c[0] = 1;
    b[0] = 1;
    let (mut l, mut m) = (0usize, 1usize);
    let mut n = 0;
    while n < N {
        let mut d = bits[n];
        let mut i = 1;
        while i <= l {
            d ^= c[i] & bits[n - i];
            i += 1;
        }
        if d == 0 {
            m += 1;
        } else if 2 * l <= n {
            let old = c;
            let mut i = 0;
            while i + m <= N {
                c[i + m] ^= b[i];
                i += 1;
            }
            l = n + 1 - l;
            b = old;
            m = 1;
        } else {
            let mut i = 0;
            while i + m <= N {
                c[i + m] ^= b[i];
                i += 1;
            }
            m += 1;
        }
        n += 1;
    }
    assert!(l == STATE_BITS, "the sequence's minimal polynomial does not have degree 1024");
    // P(x) = x^L C(1/x): the coefficient of x^j is c_{L - j}.
    let mut p = [0u64; 16];
    let mut j = 0;
    while j < STATE_BITS {
        p[j / 64] |= (c[STATE_BITS - j] as u64) << (j % 64);
        j += 1;
    }
    p
}

/// `a * b mod P` (`p` is `P` without its `x^1024` term).
#[cfg(not(target_arch = "nvptx64"))]
pub fn mul_mod(a: &Poly, b: &Poly, p: &Poly) -> Poly {
    // Carry-less product of degree below 2047, in 32 words.
    let mut prod = [0u64; 32];
    let mut i = 0;
    while i < STATE_BITS {
        if (a[i / 64] >> (i % 64)) & 1 == 1 {
            let (w, sh) = (i / 64, (i % 64) as u32);
            let mut k = 0;
            while k < 16 {
                prod[w + k] ^= b[k] << sh;
                if sh != 0 {
                    prod[w + k + 1] ^= b[k] >> (64 - sh);
                }
                k += 1;
            }
        }
        i += 1;
    }
    reduce(&mut prod, p)
}

/// Reduce a product (degree below 2047) modulo `x^1024 + p`: from the top, every set bit at
/// `x^(1024 + e)` is replaced by `x^e p(x)`.
#[cfg(not(target_arch = "nvptx64"))]
fn reduce(prod: &mut [u64; 32], p: &Poly) -> Poly {
    let mut e = STATE_BITS - 1;
    loop {
        let bit = STATE_BITS + e;
        if (prod[bit / 64] >> (bit % 64)) & 1 == 1 {
            prod[bit / 64] ^= 1 << (bit % 64);
            let (w, sh) = (e / 64, (e % 64) as u32);
            let mut k = 0;
            while k < 16 {
                prod[w + k] ^= p[k] << sh;
                if sh != 0 && w + k + 1 < 32 {
                    prod[w + k + 1] ^= p[k] >> (64 - sh);
                }
                k += 1;
            }
        }
        if e == 0 {
            break;
        }
        e -= 1;
    }
    let mut r = [0u64; 16];
    r.copy_from_slice(&prod[..16]);
    r
}

/// The polynomial `x`.
#[cfg(not(target_arch = "nvptx64"))]
pub const X: Poly = {
    let mut x = [0u64; 16];
    x[0] = 2;
    x
};

/// The polynomial `1`.
#[cfg(not(target_arch = "nvptx64"))]
pub const ONE: Poly = {
    let mut x = [0u64; 16];
    x[0] = 1;
    x
};

/// `g^(2^k) mod P`: `k` squarings.
#[cfg(not(target_arch = "nvptx64"))]
pub fn square_times(g: &Poly, k: u32, p: &Poly) -> Poly {
    let mut r = *g;
    let mut i = 0;
    while i < k {
        r = mul_mod(&r, &r, p);
        i += 1;
    }
    r
}

/// `x^n mod P`, by square-and-multiply from the top bit of `n`.
#[cfg(not(target_arch = "nvptx64"))]
pub fn x_pow_mod(n: u128, p: &Poly) -> Poly {
    let mut r = ONE;
    let mut i = 128;
    while i > 0 {
        i -= 1;
        r = mul_mod(&r, &r, p);
        if (n >> i) & 1 == 1 {
            r = mul_mod(&r, &X, p);
        }
    }
    r
}

/// The stream rule's jump table: entry `[q][d - 1]` is `x^(d 16^q 2^spacing_log2) mod P` as 32
/// `u32` words (word `i` holds the coefficients of `x^(32 i) .. x^(32 i + 31)`), for hexadecimal
/// digit positions `q` in `0..positions` and digits `d` in `1..16`. Stream rule: warp `w` starts
/// `w 2^spacing_log2` steps after the base state, reached by applying one entry per non-zero
/// hexadecimal digit of `w`.
#[cfg(not(target_arch = "nvptx64"))]
pub fn jump_table<const POSITIONS: usize>(p: &Poly, spacing_log2: u32) -> [[[u32; LANES]; 15]; POSITIONS] {
    let mut table = [[[0u32; LANES]; 15]; POSITIONS];
    let mut base = square_times(&X, spacing_log2, p); // x^(2^J)
    let mut q = 0;
    while q < POSITIONS {
        let mut power = base;
        let mut d = 1;
        while d <= 15 {
            table[q][d - 1] = to_words(&power);
            power = mul_mod(&power, &base, p);
            d += 1;
        }
        base = square_times(&base, 4, p); // x^(16^(q + 1) 2^J)
        q += 1;
    }
    table
}

/// A polynomial as 32 `u32` words (the layout the GPU reads).
pub const fn to_words(g: &Poly) -> [u32; LANES] {
    let mut w = [0u32; LANES];
    let mut i = 0;
    while i < 16 {
        w[2 * i] = g[i] as u32;
        w[2 * i + 1] = (g[i] >> 32) as u32;
        i += 1;
    }
    w
}

/// The inverse of [`to_words`].
#[cfg(not(target_arch = "nvptx64"))]
pub const fn from_words(w: &[u32; LANES]) -> Poly {
    let mut g = [0u64; 16];
    let mut i = 0;
    while i < 16 {
        g[i] = w[2 * i] as u64 | ((w[2 * i + 1] as u64) << 32);
        i += 1;
    }
    g
}
