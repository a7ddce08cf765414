//! Joe and Kuo's Sobol' direction numbers, embedded, and the 32-bit direction numbers of the
//! first `dims` dimensions built from them for the kernels ([`warpmc_kernels::sobol`]).
//!
//! **Source.** The table is "new-joe-kuo-6.21201" of S. Joe and F. Y. Kuo, "Constructing Sobol
//! sequences with better two-dimensional projections", SIAM J. Sci. Comput. 30 (2008)
//! 2635-2654, published at <https://web.maths.unsw.edu.au/~fkuo/sobol/>: for each dimension
//! `d = 2..=21201` the degree `s` of a primitive polynomial over GF(2), its middle coefficients
//! `a` and the initial numbers `m_1..m_s`. It is the set cuRAND's Sobol32 uses
//! (`CURAND_DIRECTION_VECTORS_32_JOEKUO6`, 20000 dimensions). `host/data/sobol/README.md` says
//! where the copy came from and how it was checked; it is stored packed (406,888 bytes, against
//! 1.87 MB as text) in a format that README describes and `host/data/sobol/pack.py` reads and
//! writes. Dimension 1, van der Corput's, is not in the table.
//!
//! **Guarantees** (the tests check each): the embedded table decodes to 21,200 rows with
//! `d = 2, 3, ...`, exactly `s` initial numbers per row, each `m_i` odd and below `2^i`; each
//! row's polynomial is primitive, and the rows run through all primitive polynomials of degree
//! 1, 2, ..., 18 in increasing `a` (the table's construction); the first rows equal the file's
//! published first lines; the 32 direction numbers of dimensions 1..=20000 equal cuRAND's.

use std::sync::OnceLock;

use warpmc_kernels::sobol::{self as kernel, BITS, VAN_DER_CORPUT};

use crate::error::{Error, Result};

/// Dimensions available: van der Corput's and the table's 21,200.
pub const MAX_DIMENSIONS: u32 = 21201;

/// The packed table (format: `host/data/sobol/README.md`).
const PACKED: &[u8] = include_bytes!("../data/sobol/new-joe-kuo-6.21201.pack");

/// One row of Joe and Kuo's table: dimension `d` (2-based, as published), the degree `s` of its
/// primitive polynomial `x^s + a_1 x^(s-1) + ... + a_(s-1) x + 1`, `a` = binary
/// `a_1 ... a_(s-1)`, and the initial numbers `m = [m_1, ..., m_s]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoeKuoRow {
    pub d: u32,
    pub s: u32,
    pub a: u32,
    pub m: Vec<u32>,
}

/// Joe and Kuo's table, rows `d = 2..=21201`, decoded once from the embedded copy.
pub fn table() -> &'static [JoeKuoRow] {
    static TABLE: OnceLock<Vec<JoeKuoRow>> = OnceLock::new();
    // The embedded bytes are fixed at build time and the tests decode them, so a failure here
    // is a corrupt build, not a user error.
    TABLE.get_or_init(|| unpack(PACKED).expect("the embedded Sobol' table decodes (see the tests)"))
}

/// Rows in Joe and Kuo's published layout: the header `d       s       a       m_i`, then one
/// line per row, `d`, `s` and `a` left-aligned in 8 columns each, the `m_i` separated by
/// spaces. Whitespace may differ from the file on their site; the numbers are the same.
pub fn published_text(rows: &[JoeKuoRow]) -> String {
    let mut out = String::from("d       s       a       m_i\n");
    for r in rows {
        let m: Vec<String> = r.m.iter().map(u32::to_string).collect();
        out.push_str(&format!("{:<8}{:<8}{:<8}{}\n", r.d, r.s, r.a, m.join(" ")));
    }
    out
}

/// The 32-bit direction numbers of dimensions `1..=dims`: `dims * 32` words, dimension by
/// dimension, `v[32 j + k] = V_(k+1)` of dimension `j + 1` (the layout of cuRAND's
/// `curandDirectionVectors32_t` arrays, and what [`warpmc_kernels::sobol::point`] takes one row
/// of).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SobolDirections {
    dims: u32,
    v: Vec<u32>,
}

impl SobolDirections {
    /// The direction numbers of the first `dims` dimensions, `1 <= dims <=` [`MAX_DIMENSIONS`].
    pub fn new(dims: u32) -> Result<Self> {
        if !(1..=MAX_DIMENSIONS).contains(&dims) {
            return Err(Error::invalid("dimensions", dims, format!("[1, {MAX_DIMENSIONS}]")));
        }
        let mut v = Vec::with_capacity(dims as usize * BITS);
        v.extend_from_slice(&VAN_DER_CORPUT);
        for row in &table()[..dims as usize - 1] {
            let mut out = [0u32; BITS];
            // The rows were checked when decoded (odd m_i below 2^i, a below 2^(s-1)).
            kernel::directions(row.s, row.a, &row.m, &mut out).expect("a decoded row is valid");
            v.extend_from_slice(&out);
        }
        Ok(Self { dims, v })
    }

    /// The number of dimensions.
    pub fn dims(&self) -> u32 {
        self.dims
    }

    /// All direction numbers, `dims * 32` words, dimension-major.
    pub fn as_slice(&self) -> &[u32] {
        &self.v
    }

    /// The 32 direction numbers of dimension `j + 1` (`j` 0-based, as in [`as_slice`](Self::as_slice)).
    pub fn dimension(&self, j: usize) -> &[u32; BITS] {
        self.v[j * BITS..(j + 1) * BITS].try_into().expect("32 words per dimension")
    }
}

/// The pack's first 8 bytes.
const MAGIC: &[u8; 8] = b"JKSOBOL1";
/// Bits of each row's `s` in the pack.
const S_BITS: u32 = 5;
/// The largest degree in the table (and the most the pack format allows).
const S_MAX: u32 = 18;

/// Reads the pack's bit stream, most significant bit of each byte first.
struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Bits<'_> {
    fn take(&mut self, width: u32) -> Option<u32> {
        let mut v = 0u32;
        for _ in 0..width {
            let byte = *self.data.get(self.pos / 8)?;
            v = (v << 1) | u32::from((byte >> (7 - self.pos % 8)) & 1);
            self.pos += 1;
        }
        Some(v)
    }
}

/// Decodes a pack (format: `host/data/sobol/README.md`): magic, row count, then per row `s` in
/// 5 bits, `a` in `s - 1` bits and `(m_i - 1) / 2` in `i - 1` bits for `i = 2..=s` (`m_1 = 1`
/// and every `m_i`'s low bit are implied). Checks what the format leaves open: `1 <= s <= 18`,
/// and that nothing but zero padding follows the last row.
fn unpack(pack: &[u8]) -> Result<Vec<JoeKuoRow>, String> {
    let body = pack.strip_prefix(MAGIC).ok_or("not a Sobol' table pack (bad magic)")?;
    let (count, data) = body.split_first_chunk::<4>().ok_or("pack too short")?;
    let count = u32::from_le_bytes(*count);
    let mut bits = Bits { data, pos: 0 };
    let truncated = |d| format!("pack truncated in row d = {d}");
    let mut rows = Vec::with_capacity(count as usize);
    for d in 2..count + 2 {
        let s = bits.take(S_BITS).ok_or_else(|| truncated(d))?;
        if !(1..=S_MAX).contains(&s) {
            return Err(format!("row d = {d}: degree s = {s} outside 1..={S_MAX}"));
        }
        let a = bits.take(s - 1).ok_or_else(|| truncated(d))?;
        let mut m = vec![1];
        for i in 2..=s {
            m.push((bits.take(i - 1).ok_or_else(|| truncated(d))? << 1) | 1);
        }
        rows.push(JoeKuoRow { d, s, a, m });
    }
    let rest = data.len() * 8 - bits.pos;
    if rest >= 8 || bits.take(rest as u32) != Some(0) {
        return Err("data after the last row".into());
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpmc_kernels::sobol::{next, point};

    /// x^e mod p over GF(2), polynomials as bit masks (bit i = coefficient of x^i), deg p = s.
    fn pow_mod(e: u64, p: u64, s: u32) -> u64 {
        let mul = |a: u64, b: u64| {
            let mut r = 0u64;
            for i in 0..s {
                if (b >> i) & 1 != 0 {
                    r ^= a << i;
                }
            }
            for i in (s..2 * s).rev() {
                if (r >> i) & 1 != 0 {
                    r ^= p << (i - s);
                }
            }
            r
        };
        // x itself, reduced: for s = 1, x = 1 mod (x + 1).
        let (mut result, mut base, mut e) = (1u64, if s == 1 { 1 } else { 2 }, e);
        while e > 0 {
            if e & 1 != 0 {
                result = mul(result, base);
            }
            base = mul(base, base);
            e >>= 1;
        }
        result
    }

    fn prime_factors(mut n: u64) -> Vec<u64> {
        let mut f = Vec::new();
        let mut q = 2;
        while q * q <= n {
            if n % q == 0 {
                f.push(q);
                while n % q == 0 {
                    n /= q;
                }
            }
            q += 1;
        }
        if n > 1 {
            f.push(n);
        }
        f
    }

    /// Whether x^s + (a's bits) x^(s-1..1) + 1 is primitive over GF(2): x has multiplicative
    /// order exactly 2^s - 1 modulo it (then it is also irreducible).
    fn primitive(s: u32, a: u32) -> bool {
        let p = (1u64 << s) | (u64::from(a) << 1) | 1;
        let order = (1u64 << s) - 1;
        pow_mod(order, p, s) == 1 && prime_factors(order).iter().all(|&f| pow_mod(order / f, p, s) != 1)
    }

    #[test]
    fn primitivity_check_knows_small_cases() {
        // Degree 4: x^4 + x + 1 (a = 0b001) and x^4 + x^3 + 1 (a = 0b100) are primitive;
        // x^4 + x^3 + x^2 + x + 1 (a = 0b111) is irreducible of order 5, not primitive;
        // x^4 + 1 = (x + 1)^4 is reducible.
        assert!(primitive(4, 0b001) && primitive(4, 0b100));
        assert!(!primitive(4, 0b111) && !primitive(4, 0));
        assert!(primitive(1, 0) && primitive(2, 1) && !primitive(2, 0));
    }

    #[test]
    fn table_decodes_and_its_rows_are_well_formed() {
        let t = table();
        assert_eq!(t.len(), MAX_DIMENSIONS as usize - 1);
        for (k, r) in t.iter().enumerate() {
            assert_eq!(r.d, k as u32 + 2, "rows must run d = 2, 3, ... without gaps");
            assert!((1..=18).contains(&r.s));
            assert_eq!(r.m.len(), r.s as usize, "d = {}", r.d);
            assert!(r.a < 1 << (r.s - 1), "d = {}", r.d);
            for (i, &m) in r.m.iter().enumerate() {
                assert!(m % 2 == 1 && m < 1 << (i + 1), "d = {}: m_{} = {m}", r.d, i + 1);
            }
        }
        let last = t.last().unwrap();
        assert_eq!((last.d, last.s, last.a), (21201, 18, 131059));
        assert_eq!(
            last.m,
            [1, 1, 7, 11, 15, 7, 37, 239, 337, 245, 1557, 3681, 7357, 9639, 27367, 26869, 114603, 86317]
        );
    }

    #[test]
    fn polynomials_are_all_primitive_ones_in_order() {
        // Joe and Kuo take, for d = 2, 3, ..., the primitive polynomials of degree 1, 2, 3, ...
        // in increasing a. So every row's polynomial is primitive, and the (s, a) sequence is
        // exactly that enumeration: for s <= 17 every primitive polynomial appears, and the
        // table ends after 7776 of degree 18, which are all of them (phi(2^18 - 1) / 18).
        let t = table();
        let mut expected = Vec::new();
        for s in 1..=18u32 {
            for a in 0..1u32 << (s - 1) {
                if primitive(s, a) {
                    expected.push((s, a));
                }
            }
        }
        assert_eq!(expected.len(), t.len());
        for (r, &(s, a)) in t.iter().zip(&expected) {
            assert_eq!((r.s, r.a), (s, a), "d = {}", r.d);
        }
        // The counts per degree are phi(2^s - 1) / s.
        let count = |s| t.iter().filter(|r| r.s == s).count();
        assert_eq!([1, 2, 3, 4, 5, 6, 7, 8].map(count), [1, 1, 2, 2, 6, 6, 18, 16]);
        assert_eq!([16, 17, 18].map(count), [2048, 7710, 7776]);
    }

    #[test]
    fn first_rows_are_the_published_ones() {
        // The first lines of new-joe-kuo-6.21201 as published (Joe and Kuo's site; the same
        // lines appear in many copies, e.g. the header comment of a C++ sobol_engine and
        // PyTorch's SobolEngineOpsUtils.cpp).
        let published = "d       s       a       m_i
2       1       0       1
3       2       1       1 3
4       3       1       1 3 1
5       3       2       1 1 1
6       4       1       1 1 3 3
7       4       4       1 3 5 13
8       5       2       1 1 5 5 17
9       5       4       1 1 5 5 5
10      5       7       1 1 7 11 19
11      5       11      1 1 5 1 1
12      5       13      1 1 1 3 11
13      5       14      1 3 5 5 31
14      6       1       1 3 3 9 7 49
15      6       13      1 1 1 15 21 21
16      6       16      1 3 1 13 27 49
17      6       19      1 1 1 15 7 5
18      6       22      1 3 1 15 13 25
19      6       25      1 1 5 5 19 61
20      7       1       1 3 7 11 23 15 103
";
        assert_eq!(published_text(&table()[..19]), published);
    }

    #[test]
    fn rows_match_pytorch_copy() {
        // Dimensions 21176..=21201 as in PyTorch's aten/src/ATen/native/SobolEngineOpsUtils.cpp
        // (its `initsobolstate`, generated from new-joe-kuo-6.21201), an independent copy.
        let pytorch: [[u32; 18]; 3] = [
            [1, 3, 3, 1, 19, 17, 19, 21, 41, 885, 1665, 547, 5887, 6205, 3317, 59399, 125559, 82721],
            [1, 1, 7, 5, 29, 27, 97, 105, 379, 153, 915, 2795, 4933, 6729, 21207, 9995, 70241, 85641],
            [1, 3, 5, 5, 23, 13, 41, 67, 127, 649, 1351, 3597, 7077, 4989, 14649, 17401, 70883, 239841],
        ];
        let t = table();
        for (d, want) in [21176usize, 21198, 21199].into_iter().zip(pytorch) {
            assert_eq!(t[d - 2].m, want, "d = {d}");
        }
    }

    /// FNV-1a (64-bit) of the words' little-endian bytes: a dependency-free digest to compare
    /// 640,000 words with a recorded value.
    fn fnv1a(words: &[u32]) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for b in words.iter().flat_map(|w| w.to_le_bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    }

    #[test]
    fn direction_numbers_equal_curand() {
        // curandGetDirectionVectors32(CURAND_DIRECTION_VECTORS_32_JOEKUO6) of cuRAND 10.4
        // (libcurand.so.10.4.0.35, CUDA 13.0), dumped on an H100: 20000 dimensions x 32 words,
        // SHA-256 6f3e7c46da9f98d9bbeec0577360fdd155518ce96cb3873b9b6091dae7756538, FNV-1a-64 of
        // its bytes below. Equal here means every m_i of d = 2..=20000 (V_k = m_k 2^(32-k) for
        // k <= s) and the recurrence agree with cuRAND's.
        let dirs = SobolDirections::new(20000).unwrap();
        assert_eq!(dirs.as_slice().len(), 20000 * 32);
        assert_eq!(fnv1a(dirs.as_slice()), 0x977d_0241_e397_4985);
        // Readable spot checks from the same dump: the first 8 words of dimensions 1024 and
        // 4096, and all 32 of dimension 20000.
        assert_eq!(
            dirs.dimension(1023)[..8],
            [0x80000000, 0x40000000, 0xa0000000, 0xb0000000, 0x58000000, 0x84000000, 0x4a000000, 0x1d000000]
        );
        assert_eq!(
            dirs.dimension(4095)[..8],
            [0x80000000, 0xc0000000, 0xa0000000, 0x10000000, 0x18000000, 0x3c000000, 0x7e000000, 0x67000000]
        );
        assert_eq!(
            *dirs.dimension(19999),
            [
                0x80000000, 0xc0000000, 0x20000000, 0xf0000000, 0xd8000000, 0x94000000, 0x7e000000, 0xfd000000,
                0x00800000, 0xd5c00000, 0xce600000, 0xc2700000, 0xd1280000, 0x1c840000, 0xb02a0000, 0xfabd0000,
                0x23d58000, 0xf77c4000, 0xbc07e000, 0x97ec9000, 0x6383f800, 0x3a469400, 0x9c7efa00, 0x2a333b00,
                0x2b12b680, 0x6f6cdec0, 0xf2520660, 0x5dc12cd0, 0x57c394a8, 0x037760a4, 0xa54958e6, 0x704675d3,
            ]
        );
    }

    #[test]
    fn dimensions_out_of_range_are_refused() {
        for dims in [0, MAX_DIMENSIONS + 1, u32::MAX] {
            let e = SobolDirections::new(dims).unwrap_err().to_string();
            assert!(e.contains("dimensions") && e.contains("[1, 21201]"), "{e}");
        }
        let all = SobolDirections::new(MAX_DIMENSIONS).unwrap();
        assert_eq!((all.dims(), all.as_slice().len()), (21201, 21201 * 32));
        assert_eq!(*all.dimension(0), VAN_DER_CORPUT);
        let one = SobolDirections::new(1).unwrap();
        assert_eq!(one.as_slice(), &VAN_DER_CORPUT);
    }

    #[test]
    fn every_dimension_stratifies() {
        // For all 21201 dimensions: each V_k's lowest set bit is 2^(32-k) (m_k odd), so the
        // first 2^m points of every dimension are the 2^m multiples of 2^-m; checked directly
        // for m = 8 by walking the points incrementally.
        let all = SobolDirections::new(MAX_DIMENSIONS).unwrap();
        for j in 0..MAX_DIMENSIONS as usize {
            let v = all.dimension(j);
            for (k, &x) in v.iter().enumerate() {
                assert_eq!(x.trailing_zeros() as usize, 31 - k, "dimension {}", j + 1);
            }
            let mut seen = [false; 256];
            let mut x = 0;
            for i in 0..256u32 {
                assert_eq!(x, point(i, v));
                assert!(x & 0x00ff_ffff == 0 && !std::mem::replace(&mut seen[(x >> 24) as usize], true));
                x = next(x, i, v);
            }
        }
    }

    #[test]
    fn corrupt_packs_are_refused() {
        assert!(unpack(b"NOTSOBOL\0\0\0\0").is_err());
        assert!(unpack(&PACKED[..PACKED.len() - 1]).unwrap_err().contains("truncated"));
        let mut extra = PACKED.to_vec();
        extra.push(0);
        assert!(unpack(&extra).unwrap_err().contains("after the last row"));
        // A row count of 0 with no data is a valid, empty table.
        assert_eq!(unpack(b"JKSOBOL1\0\0\0\0").unwrap(), []);
        // s = 0 in the first row.
        assert!(unpack(b"JKSOBOL1\x01\0\0\0\x00").unwrap_err().contains("degree"));
    }
}
