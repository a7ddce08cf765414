//! MT19937, the 32-bit Mersenne Twister of Matsumoto and Nishimura ("Mersenne Twister: a
//! 623-dimensionally equidistributed uniform pseudo-random number generator", ACM TOMACS 8(1),
//! 1998), with the seeding routines of its authors' reference code `mt19937ar.c` (2002).
//!
//! **Definition.** A sequence of 32-bit words `x_0, x_1, ...` with
//!
//! ```text
//! x_{q+624} = x_{q+397} ^ f((x_q & 0x80000000) | (x_{q+1} & 0x7fffffff)),
//! f(y) = (y >> 1) ^ (y & 1 ? 0x9908b0df : 0),
//! ```
//!
//! held as a block of 624 words `mt[0..624]` that is regenerated in place all at once (the
//! "twist") when all of it has been used. Each output is a word of the block, tempered:
//! `y ^= y >> 11; y ^= (y << 7) & 0x9d2c5680; y ^= (y << 15) & 0xefc60000; y ^= y >> 18`.
//!
//! **State.** [`Mt19937`] is the reference code's `mt[624]` and `mti` (the position in `mt` of
//! the next word to temper; 624 means "twist first"). The raw state is those 625 words in that
//! order: `mt[0],mt[1],...,mt[623],mti`. Only 19937 bits of a block feed the recurrence: the top
//! bit of `mt[0]` and all of `mt[1..624]` (the low 31 bits of `mt[0]` are output, if `mti` is 0,
//! but never fed back). A state whose 19937 significant bits are all zero stays zero; every
//! other state is valid. [`Generator::from_raw_state`] rejects exactly that state and an index
//! above 624; it never adjusts a state.
//!
//! **Period.** The recurrence is a linear map `T` on the 19937 significant bits over GF(2). Its
//! characteristic polynomial `P` (degree 19937) is primitive and `2^19937 - 1` is a Mersenne
//! prime (Matsumoto and Nishimura), so every valid state lies on the one cycle of length
//! `2^19937 - 1`. (The tests check that `P`, found by Berlekamp–Massey, has degree 19937 and
//! annihilates the sequence; an ignored test checks `x^(2^19937) = x mod P`, which with
//! `P(0) = P(1) = 1` proves `P` irreducible and so, the degree being prime, primitive.)
//!
//! **Seeding.** [`Mt19937::init_genrand`]`(s)` is the reference's `init_genrand`:
//! `mt[0] = s`, `mt[i] = 1812433253 (mt[i-1] ^ (mt[i-1] >> 30)) + i`, `mti = 624`; never the
//! zero state (`mt[1] = 0` forces `mt[2] = 2`). With `s = 5489` it is C++'s default-constructed
//! `std::mt19937`. [`Mt19937::init_by_array`] is the reference's `init_by_array` (from
//! `init_genrand(19650218)`, two mixing passes with the multipliers 1664525 and 1566083941, then
//! `mt[0] = 0x80000000`, so never the zero state); it is also what CPython's `random.seed(n)`
//! does with the 32-bit words of `n`, least significant first.
//!
//! **Stream rule.** Stream 0 of a seed `s < 2^32` is `init_genrand(s)` exactly, so
//! `--seed 5489` reproduces `std::mt19937`; stream 0 of `s >= 2^32` is
//! `init_by_array([s mod 2^32, s >> 32])` (CPython's `random.seed(s)` for those seeds). Stream
//! `k >= 1` is a block of Philox4x32-10 output ([`Mt19937::philox_block`]): `mt[0] = 0x80000000`
//! (only its top bit feeds the recurrence: the state is valid whatever the other words are),
//! `mt[j] = ` word `(j - 1) mod 4` of `Philox4x32-10(counter = (k mod 2^32, k >> 32,
//! (j - 1) / 4, "MT19"), key = (s mod 2^32, s >> 32))` for `j` in `1..624` (156 Philox blocks,
//! the last one's fourth word unused), `mti = 624`. Every word of such a block is computed
//! independently, so the 32 lanes of a GPU warp write a stream's 2.5 KB together (the `init`
//! kernel gives each stream a warp); `init_by_array` is a chain of dependent steps per
//! stream (about 1900), which made set-up of 10^6 streams take 45 ms on an H200 (warpmc before 2026-11-24
//! used it for streams `k >= 1`, so those streams' values differ from that version's).
//!
//! **What streams guarantee.** Philox is a bijection of the counter, so the blocks of distinct
//! streams of a seed are distinct (they differ in the Philox blocks of counter word 2 = 0, say);
//! the starting points are the pseudo-random points of the cycle that 623 Philox words make,
//! **not jumps**: modelling them as independent uniform points
//! of a cycle of length `p = 2^19937 - 1`, two streams of at most `L` outputs overlap only if one
//! starts within `L - 1` steps after the other, probability `(2L - 1)/p`; over the
//! `n(n - 1)/2` pairs of `n` streams that is below `n^2 L / p`, about `n^2 L / 2^19937`. For all
//! `2^64` streams of all `2^64` seeds, each `2^64` outputs long, that is below `2^320 / 2^19937`:
//! no overlap will ever be seen (the model, not the bound, is the assumption here). The streams
//! are not spaced by a jump because a jump costs milliseconds per stream on a CPU (below): too
//! much for one stream per Monte Carlo path, 10^6 per run.
//!
//! **Skip** (CPU only, not compiled for the GPU). `skip(n)` equals `n` calls of `next_u32` from
//! any index, word for word. The twists it needs are done directly while there are at most
//! [`TWIST_LIMIT`] of them; beyond, it is the jump of Haramoto, Matsumoto, Nishimura, Panneton
//! and L'Ecuyer ("Efficient jump ahead for F2-linear random number generators", INFORMS J.
//! Comput. 20(3), 2008): with `g(x) = x^n mod P = sum c_j x^j` (Cayley–Hamilton, `T^n = g(T)`),
//! a block `n` positions further along the sequence is `sum c_j` (the block `j` positions
//! along). `P` is computed once per process (Berlekamp–Massey on 2 * 19937 bits of the
//! sequence, cached); `g` by square-and-multiply (at most 64 squarings of 19937-bit
//! polynomials, each reduced bit by bit); applying it sums about 10^4 shifted 624-word blocks of
//! about 21,000 generated words. [`Mt19937::jump_polynomial`] and [`Mt19937::jump_with`] let one
//! `g` serve many states. Measured on this machine (2-core x86_64 CI-class, AMD EPYC, release,
//! one thread; the test `large_skips_are_cheap` prints them):
//!
//! | step | cost |
//! |---|---|
//! | `P` by Berlekamp–Massey (once per process) | 10–20 ms |
//! | `x^(2^64 - 1) mod P` ([`Mt19937::jump_polynomial`], 63 squarings) | 30–50 ms |
//! | applying it ([`Mt19937::jump_with`]) | 0.6 ms |
//! | `skip(2^64 - 1)` (both) | 30–50 ms |
//! | one twist (624 outputs) | 0.15 µs |
//! | `skip(2^15 * 624)`: 2^15 twists, or the jump | 5 ms either way |
//!
//! A jump's cost is mostly the polynomial (about 0.5 to 0.8 ms per squaring that needs
//! reducing, i.e. `log2(n) - 14` of them): one polynomial applied to many states costs 0.6 ms
//! per state.
//!
//! **Quality.** MT19937 is linear over GF(2): it fails TestU01's linear-complexity tests
//! (BigCrush's LinearComp, #80 and #81) and passes the rest of BigCrush. From a state with few
//! nonzero bits (valid, and accepted as a raw state) the outputs stay visibly short of one bits
//! for a long stretch, many thousands of outputs (the "zero-excess" weakness that Panneton,
//! L'Ecuyer and Matsumoto's WELL paper, ACM TOMS 32(1), 2006, illustrates); both seeding
//! routines produce dense states.
//!
//! **On the GPU.** A state is 2.5 KB per stream. Where a thread draws from its own stream (a
//! Monte Carlo path), the state lives in local (off-chip, cached) memory and each twist reads and
//! writes all of it. The set-up and fill kernels instead give each stream a warp
//! (`WarpStream`, `warp_stream` below): 32 lanes write a new state's Philox words
//! together, and a fill keeps the stream's sequence in shared memory.
//!
//! ```
//! use warpmc_kernels::rng::{Uniform32, mt19937::Mt19937};
//! let mut g = Mt19937::init_genrand(5489);
//! assert_eq!(g.next_u32(), 3499211612);
//! ```

use super::{Generator, InvalidState, Uniform32};

/// Words in a block.
pub const N: usize = 624;
/// The middle distance of the recurrence.
pub const M: usize = 397;
/// The twist matrix's last row, `f`'s constant.
pub const MATRIX_A: u32 = 0x9908_b0df;
/// Bits of the linear state: `32 * 624 - 31`.
pub const STATE_BITS: usize = 19937;
/// The reference code's (and `std::mt19937`'s) default seed.
pub const DEFAULT_SEED: u32 = 5489;
/// Counter word 3 of the Philox blocks of streams `k >= 1` ("MT19").
pub const MT19937_TAG: u32 = 0x4D54_3139;
/// Philox blocks in the starting block of a stream `k >= 1` (623 words).
pub const PHILOX_BLOCKS: usize = (N - 1).div_ceil(4);
/// [`super::Skip::skip`] performs up to this many twists directly (about 20 million outputs:
/// 5 ms on the machine of the module docs, where the polynomial jump takes as long); longer
/// skips use the jump.
pub const TWIST_LIMIT: u64 = 1 << 15;

/// Shared memory of a warp's ring in the GPU fill (see `warp_stream`): two blocks, a copy of
/// the ring's first word and padding to 16 bytes.
const RING_BYTES: u32 = (2 * N as u32 + 4) * 4;

const UPPER: u32 = 0x8000_0000;
const LOWER: u32 = 0x7fff_ffff;

/// Generator state: the reference code's `mt[624]` and `mti`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Mt19937 {
    /// The block.
    pub mt: [u32; N],
    /// The position in `mt` of the next word to temper, in `[0, 624]`; 624: twist first.
    pub i: u32,
}

/// `f(y)`, branch-free.
#[inline(always)]
const fn mag(y: u32) -> u32 {
    (y >> 1) ^ ((y & 1).wrapping_neg() & MATRIX_A)
}

/// The tempering of a block word.
#[inline(always)]
pub const fn temper(mut y: u32) -> u32 {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c_5680;
    y ^= (y << 15) & 0xefc6_0000;
    y ^ (y >> 18)
}

/// The raw state's names, `mt[0],...,mt[623],mti`, built at compile time (625 names).
const fn raw_state_len() -> usize {
    let mut len = 3; // "mti"
    let mut k = 0;
    while k < N {
        let digits = if k < 10 {
            1
        } else if k < 100 {
            2
        } else {
            3
        };
        len += 4 + digits + 1; // "mt[", digits, "]", ","
        k += 1;
    }
    len
}

const RAW_STATE_LEN: usize = raw_state_len();

const fn raw_state_bytes() -> [u8; RAW_STATE_LEN] {
    let mut out = [0u8; RAW_STATE_LEN];
    let mut p = 0;
    let mut k = 0;
    while k < N {
        out[p] = b'm';
        out[p + 1] = b't';
        out[p + 2] = b'[';
        p += 3;
        if k >= 100 {
            out[p] = b'0' + (k / 100) as u8;
            p += 1;
        }
        if k >= 10 {
            out[p] = b'0' + (k / 10 % 10) as u8;
            p += 1;
        }
        out[p] = b'0' + (k % 10) as u8;
        out[p + 1] = b']';
        out[p + 2] = b',';
        p += 3;
        k += 1;
    }
    out[p] = b'm';
    out[p + 1] = b't';
    out[p + 2] = b'i';
    out
}

const RAW_STATE_BYTES: [u8; RAW_STATE_LEN] = raw_state_bytes();

impl Mt19937 {
    /// The reference's `init_genrand(s)` (see the module docs); `mti = 624`.
    pub fn init_genrand(s: u32) -> Self {
        let mut g = Self { mt: [0u32; N], i: N as u32 };
        Self::init_genrand_into(&mut g.mt, s);
        g
    }

    /// [`Self::init_genrand`]'s block, written into `mt` (in place: the GPU writes a state
    /// straight to global memory, with no copy on the thread's stack).
    #[inline(always)]
    pub fn init_genrand_into(mt: &mut [u32; N], s: u32) {
        mt[0] = s;
        let mut k = 1;
        while k < N {
            let p = mt[k - 1];
            mt[k] = 1_812_433_253u32.wrapping_mul(p ^ (p >> 30)).wrapping_add(k as u32);
            k += 1;
        }
    }

    /// The reference's `init_by_array(key)` (see the module docs); `mti = 624`. The key may
    /// have any length; an empty key is taken as `[0]` (the reference code would read past its
    /// end).
    pub fn init_by_array(key: &[u32]) -> Self {
        let mut g = Self { mt: [0u32; N], i: N as u32 };
        Self::init_by_array_into(&mut g.mt, key);
        g
    }

    /// [`Self::init_by_array`]'s block, written into `mt` (in place, as
    /// [`Self::init_genrand_into`]).
    #[inline(always)]
    pub fn init_by_array_into(mt: &mut [u32; N], key: &[u32]) {
        Self::init_genrand_into(mt, 19_650_218);
        let len = if key.is_empty() { 1 } else { key.len() };
        // `i` runs over [1, 623], restarting at 1 after copying mt[623] to mt[0]; `prev` is
        // mt[i - 1], which that copy leaves unchanged. `get_mut` (never `None` here) and `prev`
        // keep every access free of a bounds check, so there is no panic path on the GPU.
        let (mut i, mut j) = (1usize, 0usize);
        let mut prev = mt[0];
        let mut k = if N > len { N } else { len };
        while k > 0 {
            let word = if j < key.len() { key[j] } else { 0 };
            if let Some(m) = mt.get_mut(i) {
                *m = (*m ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525)).wrapping_add(word).wrapping_add(j as u32);
                prev = *m;
            }
            i += 1;
            j += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            if j >= len {
                j = 0;
            }
            k -= 1;
        }
        k = N - 1;
        while k > 0 {
            if let Some(m) = mt.get_mut(i) {
                *m = (*m ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
                prev = *m;
            }
            i += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            k -= 1;
        }
        mt[0] = UPPER;
    }

    /// Stream 0 of `seed`: `init_genrand(seed)` for `seed < 2^32`, else `init_by_array` of its
    /// two words, least significant first.
    pub fn stream_zero(seed: u64) -> Self {
        let mut g = Self { mt: [0u32; N], i: N as u32 };
        Self::stream_zero_into(&mut g.mt, seed);
        g
    }

    /// [`Self::stream_zero`]'s block, written into `mt` (in place).
    #[inline(always)]
    pub fn stream_zero_into(mt: &mut [u32; N], seed: u64) {
        if seed >> 32 == 0 {
            Self::init_genrand_into(mt, seed as u32)
        } else {
            Self::init_by_array_into(mt, &[seed as u32, (seed >> 32) as u32])
        }
    }

    /// Philox block `b` (`0..156`) of stream `stream >= 1` of `seed`: words `1 + 4 b ..` of its
    /// starting block (see the module docs).
    #[inline(always)]
    pub fn philox_block(seed: u64, stream: u64, b: usize) -> [u32; 4] {
        super::philox::philox4x32_10(
            [stream as u32, (stream >> 32) as u32, b as u32, MT19937_TAG],
            [seed as u32, (seed >> 32) as u32],
        )
    }

    /// Whether a block's 19937 significant bits (the top bit of `mt[0]`, all of `mt[1..624]`)
    /// are not all zero.
    pub fn is_valid(mt: &[u32; N]) -> bool {
        if mt[0] & UPPER != 0 {
            return true;
        }
        let mut k = 1;
        while k < N {
            if mt[k] != 0 {
                return true;
            }
            k += 1;
        }
        false
    }

    /// A generator from a block and an index, rejecting an index above 624 and a block whose
    /// significant bits are all zero.
    pub fn from_state(mt: [u32; N], i: u32) -> Result<Self, InvalidState> {
        if i > N as u32 {
            // `word` is a u8 and cannot name raw word 624 (0-based): the rule names it.
            return Err(InvalidState {
                generator: Self::NAME,
                word: None,
                value: i,
                rule: "the index mti (raw word 625) must be in [0, 624]: it is the position in mt of the next \
                       word to temper, 624 meaning that the block is regenerated first",
            });
        }
        if !Self::is_valid(&mt) {
            return Err(InvalidState {
                generator: Self::NAME,
                word: None,
                value: 0,
                rule: "the 19937 significant bits (the top bit of mt[0] and all of mt[1..624]) must not all be \
                       zero: the recurrence would produce only zeros",
            });
        }
        Ok(Self { mt, i })
    }

    /// Regenerate the whole block (the next 624 words of the sequence) and set the index to 0.
    /// Kept out of line: it runs once per 624 outputs, and inlining it would put three loops
    /// into every consumer's hot loop.
    #[inline(never)]
    pub fn twist(&mut self) {
        let mt = &mut self.mt;
        let mut k = 0;
        while k < N - M {
            mt[k] = mt[k + M] ^ mag((mt[k] & UPPER) | (mt[k + 1] & LOWER));
            k += 1;
        }
        // From here on `mt[k + M - N]` is a word of the new block, as the recurrence requires.
        while k < N - 1 {
            mt[k] = mt[k - (N - M)] ^ mag((mt[k] & UPPER) | (mt[k + 1] & LOWER));
            k += 1;
        }
        mt[N - 1] = mt[M - 1] ^ mag((mt[N - 1] & UPPER) | (mt[0] & LOWER));
        self.i = 0;
    }

    /// The block count and index after `n` outputs from index `i`: `(twists, index)`, the
    /// index in `[1, 624]` when `n >= 1` (a twist happens only when an output needs it).
    #[inline(always)]
    pub const fn position_after(i: u32, n: u64) -> (u64, u32) {
        if n == 0 {
            return (0, i);
        }
        // With t = i + n outputs counted from the start of the current block, the twists are
        // those before outputs 624, 1248, ... < t: (t - 1) / 624 of them. t may exceed u64.
        let q = n / N as u64;
        let s = i as u64 + n % N as u64; // t = 624 q + s, s <= 1247
        if s == 0 {
            (q - 1, N as u32)
        } else {
            let e = (s - 1) / N as u64;
            (q + e, (s - e * N as u64) as u32)
        }
    }
}

impl Uniform32 for Mt19937 {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        let i = if (self.i as usize) < N {
            self.i as usize
        } else {
            self.twist();
            0
        };
        self.i = i as u32 + 1;
        temper(self.mt[i])
    }
}

// SAFETY: #[repr(C)] with fields [u32; 624] and u32 only.
unsafe impl Generator for Mt19937 {
    const NAME: &'static str = "mt19937";
    const RAW_STATE: &'static str = match core::str::from_utf8(&RAW_STATE_BYTES) {
        Ok(s) => s,
        Err(_) => panic!("raw state names are ASCII"),
    };
    const RAW_STATE_WORDS: usize = N + 1;
    const PERIOD: &'static str = "2^19937 - 1";
    const THREADS_PER_STREAM: u32 = 32;
    /// The fill's ring of two blocks per warp (see `warp_stream`, 5008 bytes, 157 per thread),
    /// and the block's staging of its stores.
    const FILL_SHARED_BYTES_PER_THREAD: u32 = RING_BYTES.div_ceil(32) + crate::fill::STAGING_BYTES_PER_THREAD;

    /// `init_genrand(seed)` or `init_by_array` of the seed's two words for stream 0, a block of
    /// Philox output for the others (see the module docs).
    #[inline(always)]
    fn stream(seed: u64, stream: u64) -> Self {
        if stream == 0 {
            Self::stream_zero(seed)
        } else {
            let mut mt = [0u32; N];
            mt[0] = UPPER;
            let mut b = 0;
            while b < PHILOX_BLOCKS {
                let w = Self::philox_block(seed, stream, b);
                let mut t = 0;
                while t < 4 && 1 + 4 * b + t < N {
                    mt[1 + 4 * b + t] = w[t];
                    t += 1;
                }
                b += 1;
            }
            Self { mt, i: N as u32 }
        }
    }

    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState> {
        let Some((&i, block)) = words.split_last() else {
            return Err(Self::word_count_error());
        };
        let mt: [u32; N] = block.try_into().map_err(|_| Self::word_count_error())?;
        Self::from_state(mt, i)
    }
}

impl Mt19937 {
    fn word_count_error() -> InvalidState {
        InvalidState::word_count(Self::NAME, "it has exactly 625 words, mt[0],...,mt[623] then the index mti")
    }
}

/// The GPU's warp-per-stream kernels (see [`super::WarpStream`]).
///
/// **Fill.** A warp holds its stream's sequence in a ring of two blocks (1248 words, with a
/// copy of its first word: 5008 bytes of dynamic shared memory): the current block and the
/// next. Word `q` of the sequence counted from the current block's start is at ring position
/// `(off + q) mod 1248`, so the recurrence `x_{q+624} = x_{q+397} ^ f(x_q, x_{q+1})` is the
/// ring's own: the twist computes the next block into the other half in three phases of
/// independent words (`twist`). Each round, lane `l` takes group `r + l` of the stream: its
/// `K::WORDS` words from the ring (tempered; one 16-byte load per 4 words), converted by the
/// consumer's `Group::next_group`, exactly as the CPU draws them one by one; a round that runs
/// past the current block twists first, and then the next block becomes the current one
/// (`round`). The words and their order are the definition's, so the output is the CPU's bit
/// for bit. Where the groups go is the kernel's business (`gpu.rs`, `fill_warp_stores`: staged
/// so that a block's stores cover adjacent streams). The state is read into the ring at the
/// start of a launch and written back at its end, coalesced (a stream's 625 words are
/// contiguous).
#[cfg(target_arch = "nvptx64")]
mod warp_stream {
    use super::*;
    use crate::fill::{GROUP, Group};
    use crate::platform::nvptx::{lane_id, shared_load, shared_load_v4, shared_store, syncwarp};

    /// Words of a warp's ring: two blocks (and a copy of its first word after them, see
    /// [`twist`]).
    pub const RING: u32 = 2 * N as u32;

    /// A lane's reader of consecutive ring positions, tempering each word.
    struct RingWords {
        base: u32,
        pos: u32,
    }

    impl Uniform32 for RingWords {
        #[inline(always)]
        fn next_u32(&mut self) -> u32 {
            let p = self.pos;
            self.pos = if p + 1 == RING { 0 } else { p + 1 };
            // SAFETY: `p < RING`: a position of this warp's ring (see `fill_warp`).
            temper(unsafe { shared_load(self.base + 4 * p) })
        }

        /// One 16-byte load where the position is a multiple of 4 (always, unless a raw state
        /// set an index that is not): the lanes of a warp then read 32 adjacent 16-byte pieces,
        /// where four word loads each read every fourth word (4-way bank conflicts). The ring's
        /// size is a multiple of 4, so such a piece never wraps.
        #[inline(always)]
        fn next_u32x4(&mut self) -> [u32; 4] {
            let p = self.pos;
            if p % 4 != 0 {
                return [self.next_u32(), self.next_u32(), self.next_u32(), self.next_u32()];
            }
            self.pos = if p + 4 == RING { 0 } else { p + 4 };
            // SAFETY: `p + 3 < RING` (both multiples of 4), and the ring is 16-byte aligned.
            unsafe { shared_load_v4(self.base + 4 * p) }.map(temper)
        }
    }

    /// Ring position `p mod RING` for `p < 2 RING`.
    #[inline(always)]
    fn wrap(p: u32) -> u32 {
        if p >= RING { p - RING } else { p }
    }

    /// The next block into the ring's other half, the current block starting at `off` (0 or
    /// `N`).
    ///
    /// New word `q` reads words `q` and `q + 1` of the current block and word `q + 397` of the
    /// sequence, which for `q >= 227` is new word `q - 227`. So the block is computed in three
    /// phases, `q` in `[0, 227)`, `[227, 454)` and `[454, 624)`, with `__syncwarp` between them
    /// only: within a phase no word depends on another of the same phase, and a lane's loads
    /// for all its words can be in flight together (a barrier every 32 words serialised 20
    /// load-compute-store latencies). Within a phase every address is a base fixed for the
    /// twist plus `4 q`, never wrapped: the ring's halves are adjacent, and the one word that
    /// would wrap (word `q + 1 = 624` of the second half, i.e. new word 0 in the first) is
    /// read from a copy at position `RING`, written after the first phase.
    ///
    /// # Safety
    /// All 32 lanes call it together; `base` is the warp's ring.
    #[inline(always)]
    unsafe fn twist(base: u32, off: u32, lane: u32) {
        const SPAN: u32 = (N - M) as u32;
        // Word `q` of the current block at `cur + 4 q`, new word `q` at `new + 4 q`, lane
        // offsets included.
        let cur = base + 4 * (off + lane);
        let new = if off == 0 { base + 4 * (N as u32 + lane) } else { base + 4 * lane };
        // SAFETY: the caller's contract; the phases cover `0..N`, and each reads only words
        // that are final (see above).
        unsafe {
            twist_words(cur, cur + 4 * M as u32, new, lane, 0, SPAN);
            if off != 0 && lane == 0 {
                // This lane wrote new word 0 itself.
                shared_store(base + 4 * RING, shared_load(new));
            }
            syncwarp();
            let back = new.wrapping_sub(4 * SPAN);
            twist_words(cur, back, new, lane, SPAN, 2 * SPAN);
            syncwarp();
            twist_words(cur, back, new, lane, 2 * SPAN, N as u32);
            syncwarp();
        }
    }

    /// New words `q` in `from..to` (`from + lane`, `from + lane + 32`, ...), word `q` of the
    /// current block at `cur + 4 q`, word `q + 397` of the sequence at `far + 4 q`, new word `q`
    /// at `new + 4 q`: the full chunks of 32 unconditionally (a constant trip count the
    /// compiler unrolls, with constant address offsets), four at a time with their loads ahead
    /// of their stores (the compiler cannot tell that the stores go elsewhere), then the rest.
    ///
    /// # Safety
    /// As [`twist`]; the words that these read are final.
    #[inline(always)]
    unsafe fn twist_words(cur: u32, far: u32, new: u32, lane: u32, from: u32, to: u32) {
        /// `m ^ mag((a & UPPER) | (b & LOWER))`, with `MATRIX_A` times the low bit of `b` by
        /// a multiplication (the multiply-add pipe; the compiler's negate-and-mask takes two
        /// more integer-logic operations, the pipe that limits this kernel).
        #[inline(always)]
        fn word(a: u32, b: u32, m: u32) -> u32 {
            let t: u32;
            // SAFETY: arithmetic on registers only.
            unsafe {
                core::arch::asm!(
                    "mul.lo.u32 {t}, {bit}, {a};",
                    t = out(reg32) t,
                    bit = in(reg32) b & 1,
                    a = const MATRIX_A,
                    options(pure, nomem, nostack)
                );
            }
            m ^ (((a & UPPER) | (b & LOWER)) >> 1) ^ t
        }
        #[inline(always)]
        unsafe fn words<const K: usize>(cur: u32, far: u32, new: u32, q: u32) {
            let (mut a, mut b, mut m) = ([0u32; K], [0u32; K], [0u32; K]);
            // SAFETY: ring positions (the caller's contract); loads before stores, as the
            // stores go to the other half.
            unsafe {
                let mut t = 0;
                while t < K {
                    let o = 4 * (q + 32 * t as u32);
                    a[t] = shared_load(cur + o);
                    b[t] = shared_load(cur + o + 4);
                    m[t] = shared_load(far.wrapping_add(o));
                    t += 1;
                }
                let mut t = 0;
                while t < K {
                    shared_store(new + 4 * (q + 32 * t as u32), word(a[t], b[t], m[t]));
                    t += 1;
                }
            }
        }
        let full = (to - from) / 32;
        let mut j = 0;
        while j + 4 <= full {
            // SAFETY: `from + 32 (j + 3) + lane < to`.
            unsafe { words::<4>(cur, far, new, from + 32 * j) };
            j += 4;
        }
        while j < full {
            // SAFETY: `from + 32 j + lane < to`.
            unsafe { words::<1>(cur, far, new, from + 32 * j) };
            j += 1;
        }
        let q = from + 32 * full;
        if q + lane < to {
            // SAFETY: as above.
            unsafe { words::<1>(cur, far, new, q) };
        }
    }

    /// A warp's working form of a stream: its ring, where the current block starts in it, and
    /// the index of the next word in the block.
    pub struct Ring {
        base: u32,
        off: u32,
        i: u32,
    }

    impl crate::rng::WarpStream for Mt19937 {
        const WARP_SHARED_BYTES: u32 = RING_BYTES;
        type Warp = Ring;

        #[inline(always)]
        unsafe fn init_warp(state: *mut Self, seed: u64, stream: u64) {
            let lane = lane_id() as usize;
            let words = state as *mut u32;
            if stream == 0 {
                if lane == 0 {
                    // SAFETY: `state` is this stream's state (the caller's contract), written in
                    // place.
                    unsafe {
                        Self::stream_zero_into(&mut (*state).mt, seed);
                        (*state).i = N as u32;
                    }
                }
                return;
            }
            // SAFETY: words 0..625 of this stream's state; each lane writes its own.
            unsafe {
                let mut b = lane;
                while b < PHILOX_BLOCKS {
                    let w = Self::philox_block(seed, stream, b);
                    let mut t = 0;
                    while t < 4 && 1 + 4 * b + t < N {
                        words.add(1 + 4 * b + t).write(w[t]);
                        t += 1;
                    }
                    b += 32;
                }
                if lane == 0 {
                    words.write(UPPER);
                    words.add(N).write(N as u32);
                }
            }
        }

        #[inline(always)]
        unsafe fn open(state: *const Self, shared: u32) -> Ring {
            let words = state as *const u32;
            // SAFETY: the caller's contract: 625 words to read, the ring's first 2496 bytes to write;
            // the barriers order this warp's earlier and later uses of the ring.
            unsafe {
                syncwarp();
                let mut k = lane_id();
                while k < N as u32 {
                    shared_store(shared + 4 * k, words.add(k as usize).read());
                    k += 32;
                }
                let i = words.add(N).read();
                syncwarp();
                Ring { base: shared, off: 0, i }
            }
        }

        #[inline(always)]
        unsafe fn round<K: Group>(w: &mut Ring, k: u32) -> [K::Item; GROUP] {
            let lane = lane_id();
            let need = k * K::WORDS as u32;
            let twisted = w.i + need > N as u32;
            // SAFETY: all 32 lanes are here (the caller's contract); the reads are ring
            // positions.
            unsafe {
                if twisted {
                    twist(w.base, w.off, lane);
                }
                let mut src = RingWords { base: w.base, pos: wrap(w.off + w.i + lane * K::WORDS as u32) };
                let g = K::next_group(&mut src);
                w.i += need;
                if twisted {
                    w.off = wrap(w.off + N as u32);
                    w.i -= N as u32;
                }
                // The next twist overwrites the words this round read.
                syncwarp();
                g
            }
        }

        #[inline(always)]
        unsafe fn close(w: &Ring, state: *mut Self) {
            let words = state as *mut u32;
            // SAFETY: the caller's contract; the ring's last writes were followed by a barrier.
            unsafe {
                let mut k = lane_id();
                while k < N as u32 {
                    words.add(k as usize).write(shared_load(w.base + 4 * wrap(w.off + k)));
                    k += 32;
                }
                if lane_id() == 0 {
                    words.add(N).write(w.i);
                }
            }
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub use jump::{JUMP_WORDS, POLY_WORDS, characteristic_polynomial};

/// The polynomial jump (CPU only: it needs the heap and a 160 KB table).
#[cfg(not(target_arch = "nvptx64"))]
mod jump {
    use std::sync::OnceLock;

    use super::super::Skip;
    use super::*;

    /// `u64` words of a polynomial of degree below 19937 (bit `j % 64` of word `j / 64` is the
    /// coefficient of `x^j`).
    pub const POLY_WORDS: usize = STATE_BITS.div_ceil(64);
    /// Words of [`Mt19937::jump_polynomial`]'s result: the polynomial, then `n`.
    pub const JUMP_WORDS: usize = POLY_WORDS + 1;
    /// Words of `P` shifted left by fewer than 64 bits (degree up to 19937 + 63).
    const SHIFTED_WORDS: usize = POLY_WORDS + 1;
    /// Words of a product of two reduced polynomials.
    const PRODUCT_WORDS: usize = 2 * POLY_WORDS;
    /// The word and bit of `x^19937`.
    const TOP_WORD: usize = STATE_BITS / 64;
    const TOP_BIT: u32 = (STATE_BITS % 64) as u32;

    struct CharPoly {
        /// `P << b` for `b` in `0..64`; `shifted[0]` is `P`.
        shifted: Vec<[u64; SHIFTED_WORDS]>,
    }

    fn charpoly() -> &'static CharPoly {
        static CP: OnceLock<CharPoly> = OnceLock::new();
        CP.get_or_init(|| {
            let p = compute_characteristic_polynomial();
            let mut shifted = vec![[0u64; SHIFTED_WORDS]; 64];
            for (b, s) in shifted.iter_mut().enumerate() {
                for (w, &pw) in p.iter().enumerate() {
                    s[w] ^= pw << b;
                    if b > 0 && w + 1 < SHIFTED_WORDS {
                        s[w + 1] ^= pw >> (64 - b);
                    }
                }
            }
            CharPoly { shifted }
        })
    }

    /// The characteristic polynomial `P` of the recurrence (degree 19937, bit `j` the
    /// coefficient of `x^j`, `POLY_WORDS + 1` words), computed on first use.
    pub fn characteristic_polynomial() -> &'static [u64] {
        &charpoly().shifted[0]
    }

    /// The sequence `x_q` for `q` in `from..from + len` (`from >= -626`), continuing a block
    /// `mt` that holds `x_0..x_623`. Words at `q <= 0` are those the block's significant bits
    /// imply (found by running the recurrence backwards), so every window of 624 words is the
    /// same linear function of `T^q` applied to the block's 19937 bits; the low bits of
    /// `mt[0]` play no part.
    pub fn sequence(mt: &[u32; N], from: i64, len: usize) -> Vec<u32> {
        const BACK: usize = N + 2;
        assert!(from >= -(BACK as i64));
        let end = (from + len as i64).max(N as i64) as usize + BACK;
        let mut x = vec![0u32; end];
        x[BACK..BACK + N].copy_from_slice(mt);
        // x_{q+624} ^ x_{q+397} = f(y) gives y = (x_q & UPPER) | (x_{q+1} & LOWER): f is
        // invertible, its result's top bit being y's low bit (0x9908b0df has its top bit set).
        for q in (0..BACK).rev() {
            let v = x[q + N] ^ x[q + M];
            let y = if v & UPPER != 0 { ((v ^ MATRIX_A) << 1) | 1 } else { v << 1 };
            x[q] = y & UPPER;
            x[q + 1] = (x[q + 1] & UPPER) | (y & LOWER);
        }
        for q in BACK..end - N {
            x[q + N] = x[q + M] ^ mag((x[q] & UPPER) | (x[q + 1] & LOWER));
        }
        let start = (from + BACK as i64) as usize;
        x.drain(..start);
        x.truncate(len);
        x
    }

    /// Berlekamp–Massey over GF(2) on bit 0 of `x_1, ..., x_{2 * 19937}` from
    /// `init_genrand(5489)`: that bit sequence's minimal polynomial divides `P`; it has degree
    /// 19937 (asserted), so it is `P`.
    pub fn compute_characteristic_polynomial() -> Vec<u64> {
        let len = 2 * STATE_BITS;
        let x = sequence(&Mt19937::init_genrand(DEFAULT_SEED).mt, 1, len);
        let words = len / 64 + 3;
        // The sequence reversed (bit t is s_{len-1-t}), so the discrepancy sum over s_{n-i},
        // i = 0..L, reads bits o + i with o = len - 1 - n: a word-wise AND with c.
        let mut r = vec![0u64; words + 1];
        for (t, &xt) in x.iter().rev().enumerate() {
            r[t / 64] |= u64::from(xt & 1) << (t % 64);
        }
        let bits_at = |pos: usize| -> u64 {
            let (w, b) = (pos / 64, pos % 64);
            if b == 0 { r[w] } else { (r[w] >> b) | (r[w + 1] << (64 - b)) }
        };
        // c: the connection polynomial (s_n = sum_{i=1..L} c_i s_{n-i}), b: c before the last
        // change of L, m: steps since then.
        let (mut c, mut b, mut t) = (vec![0u64; words], vec![0u64; words], vec![0u64; words]);
        c[0] = 1;
        b[0] = 1;
        let (mut l, mut lb, mut m) = (0usize, 0usize, 1usize);
        for n in 0..len {
            let o = len - 1 - n;
            let mut acc = 0u64;
            for (w, &cw) in c.iter().enumerate().take(l / 64 + 1) {
                acc ^= cw & bits_at(o + 64 * w);
            }
            if acc.count_ones() & 1 == 0 {
                m += 1;
                continue;
            }
            let change = 2 * l <= n;
            if change {
                t.copy_from_slice(&c);
            }
            // c += x^m b; deg b <= lb, and m + lb = n + 1 - l <= len.
            let (ws, bs) = (m / 64, (m % 64) as u32);
            for k in 0..=(lb / 64) {
                c[k + ws] ^= b[k] << bs;
                if bs != 0 {
                    c[k + ws + 1] ^= b[k] >> (64 - bs);
                }
            }
            if change {
                lb = l;
                l = n + 1 - l;
                core::mem::swap(&mut b, &mut t);
                m = 1;
            } else {
                m += 1;
            }
        }
        assert_eq!(l, STATE_BITS, "the linear complexity of MT19937's bit sequence is not 19937");
        // P(x) = x^L c(1/x): the coefficient of x^j is c_{L - j}.
        let mut p = vec![0u64; SHIFTED_WORDS];
        for j in 0..=l {
            let i = l - j;
            if (c[i / 64] >> (i % 64)) & 1 == 1 {
                p[j / 64] |= 1 << (j % 64);
            }
        }
        assert!(p[0] & 1 == 1, "P(0) = 0: the recurrence would not be invertible");
        p
    }

    /// The 32 bits of `w` spread to the even bits of a `u64` (squaring over GF(2)).
    #[inline(always)]
    fn spread(w: u32) -> u64 {
        let mut x = u64::from(w);
        x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
        x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
        x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
        x = (x | (x << 2)) & 0x3333_3333_3333_3333;
        (x | (x << 1)) & 0x5555_5555_5555_5555
    }

    /// `a^2 mod P`, in place.
    fn square_mod(a: &mut [u64], cp: &CharPoly) {
        let mut buf = [0u64; PRODUCT_WORDS];
        for (w, &aw) in a.iter().enumerate() {
            buf[2 * w] = spread(aw as u32);
            buf[2 * w + 1] = spread((aw >> 32) as u32);
        }
        // Clear the bits at 19937 and above from the top down, each by P shifted under it.
        for w in (TOP_WORD..PRODUCT_WORDS).rev() {
            let keep = if w == TOP_WORD { !((1u64 << TOP_BIT) - 1) } else { !0 };
            loop {
                let word = buf[w] & keep;
                if word == 0 {
                    break;
                }
                let s = 64 * w + 63 - word.leading_zeros() as usize - STATE_BITS;
                let off = s / 64;
                for (d, &p) in buf[off..off + SHIFTED_WORDS].iter_mut().zip(&cp.shifted[s % 64]) {
                    *d ^= p;
                }
            }
        }
        a.copy_from_slice(&buf[..POLY_WORDS]);
    }

    /// `x a mod P`, in place.
    fn mul_x_mod(a: &mut [u64], cp: &CharPoly) {
        let mut carry = 0;
        for w in a.iter_mut() {
            let next = *w >> 63;
            *w = (*w << 1) | carry;
            carry = next;
        }
        if (a[TOP_WORD] >> TOP_BIT) & 1 == 1 {
            for (d, &p) in a.iter_mut().zip(&cp.shifted[0]) {
                *d ^= p;
            }
        }
    }

    /// `x^n mod P` ([`POLY_WORDS`] words), by squaring and multiplying by `x` from the top bit.
    fn x_pow_mod(n: u64, cp: &CharPoly) -> Vec<u64> {
        let mut r = vec![0u64; POLY_WORDS];
        r[0] = 1;
        for bit in (0..64 - n.leading_zeros()).rev() {
            square_mod(&mut r, cp);
            if (n >> bit) & 1 == 1 {
                mul_x_mod(&mut r, cp);
            }
        }
        r
    }

    impl Mt19937 {
        /// The jump by `n` outputs: the [`POLY_WORDS`] words of `x^n mod P`, then `n` itself
        /// (the index after the jump depends on `n mod 624`, which the polynomial does not
        /// carry). [`JUMP_WORDS`] words; apply with [`Self::jump_with`], to any state.
        pub fn jump_polynomial(n: u64) -> Vec<u64> {
            let mut v = x_pow_mod(n, charpoly());
            v.push(n);
            v
        }

        /// Advance by the `n` outputs of `jump = Self::jump_polynomial(n)`: the same state, word
        /// for word, as `n` calls of `next_u32`, from any index.
        ///
        /// # Panics
        /// If `jump` does not have [`JUMP_WORDS`] words.
        pub fn jump_with(&mut self, jump: &[u64]) {
            assert_eq!(jump.len(), JUMP_WORDS, "not a jump from Mt19937::jump_polynomial");
            let n = jump[POLY_WORDS];
            let (twists, index) = Self::position_after(self.i, n);
            if twists > 0 {
                // The new block is x_r..x_{r+623} with r = 624 twists = n + delta, the index
                // moving from i to `index`. With T^n = sum c_j T^j, the window at r is the sum
                // of the windows at j + delta over the set c_j.
                let delta = i64::from(self.i) - i64::from(index);
                let x = sequence(&self.mt, delta, STATE_BITS + N);
                let mut acc = [0u32; N];
                for (w, &cw) in jump[..POLY_WORDS].iter().enumerate() {
                    let mut bits = cw;
                    while bits != 0 {
                        let j = 64 * w + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        for (a, &v) in acc.iter_mut().zip(&x[j..j + N]) {
                            *a ^= v;
                        }
                    }
                }
                self.mt = acc;
            }
            self.i = index;
        }

        /// `count` streams spaced by polynomial jumps: stream 0 is `start`, stream `k` is stream
        /// `k - 1` advanced by `2^spacing_log2` outputs (one polynomial, computed once, applied
        /// `count - 1` times: about 0.6 ms a stream on one core, see the module docs). Disjoint
        /// segments of the one cycle while each stream draws fewer than `2^spacing_log2` words;
        /// for a few thousand streams on the CPU. (The per-path stream rule of
        /// [`Generator::stream`] is Philox-keyed instead: jumps cost too much for 10^6 streams.)
        ///
        /// ```
        /// use warpmc_kernels::rng::{Skip, mt19937::Mt19937};
        /// let start = Mt19937::init_genrand(5489);
        /// let streams = Mt19937::jump_streams(start, 2, 50); // 2^50 outputs apart
        /// let mut second = start;
        /// second.skip(1 << 50);
        /// assert_eq!(streams, [start, second]);
        /// ```
        pub fn jump_streams(start: Mt19937, count: usize, spacing_log2: u32) -> Vec<Mt19937> {
            assert!(spacing_log2 < 64, "spacing 2^{spacing_log2} does not fit Skip's u64 (use < 64)");
            let jump = Self::jump_polynomial(1 << spacing_log2);
            let mut out = Vec::with_capacity(count);
            let mut g = start;
            for k in 0..count {
                if k > 0 {
                    g.jump_with(&jump);
                }
                out.push(g);
            }
            out
        }
    }

    impl Skip for Mt19937 {
        /// Direct twists up to [`TWIST_LIMIT`] of them, the polynomial jump beyond (see the
        /// module docs for the costs).
        fn skip(&mut self, n: u64) {
            let (twists, index) = Self::position_after(self.i, n);
            if twists <= TWIST_LIMIT {
                for _ in 0..twists {
                    self.twist();
                }
                self.i = index;
            } else {
                self.jump_with(&Self::jump_polynomial(n));
            }
        }
    }

    #[cfg(test)]
    pub(super) mod internals {
        pub use super::{POLY_WORDS, compute_characteristic_polynomial, sequence};

        /// `x^(2^k) mod P` by `k` squarings of `x`.
        pub fn x_pow_2k(k: usize) -> Vec<u64> {
            let cp = super::charpoly();
            let mut r = vec![0u64; POLY_WORDS];
            r[0] = 2;
            for _ in 0..k {
                super::square_mod(&mut r, cp);
            }
            r
        }

        pub fn x_pow_mod(n: u64) -> Vec<u64> {
            super::x_pow_mod(n, super::charpoly())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Skip;
    use super::super::testing::*;
    use super::jump::internals::*;
    use super::*;
    use std::time::Instant;

    /// The definition, written out separately from the generator: the reference's
    /// `genrand_int32` with the twist as one loop over indices modulo 624. `z` is the raw state.
    fn reference_step(z: &mut [u32; N + 1]) -> u32 {
        if z[N] >= N as u32 {
            for k in 0..N {
                let y = (z[k] & 0x8000_0000) | (z[(k + 1) % N] & 0x7fff_ffff);
                z[k] = z[(k + 397) % N] ^ (y >> 1) ^ if y & 1 == 1 { 0x9908_b0df } else { 0 };
            }
            z[N] = 0;
        }
        let mut y = z[z[N] as usize];
        z[N] += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    fn raw(g: &Mt19937) -> [u32; N + 1] {
        state_words(g).try_into().unwrap()
    }

    fn random_block(r: &mut u64) -> [u32; N] {
        core::array::from_fn(|_| splitmix64(r) as u32)
    }

    /// Starting states at several indices: fresh (624), 0 (a raw state with the low bits of
    /// mt[0] arbitrary), 1, mid-block, the last word.
    fn test_states() -> Vec<Mt19937> {
        let mut r = 99u64;
        let mut v = vec![Mt19937::init_genrand(DEFAULT_SEED), Mt19937::from_state(random_block(&mut r), 0).unwrap()];
        for n in [1, 300, 623] {
            v.push(stepped(Mt19937::stream(7, 3), n));
        }
        v.push(Mt19937::from_state(random_block(&mut r), 417).unwrap());
        v
    }

    /// Known answers from /work/shared/ALGORITHMS.md: mt19937ar.c's `init_genrand(5489)` (the
    /// C++ standard's `std::mt19937` requirement: the 10000th output is 4123659995) and
    /// mt19937ar.out's `init_by_array({0x123, 0x234, 0x345, 0x456})`.
    #[test]
    fn reference() {
        let mut g = Mt19937::init_genrand(5489);
        let head = [
            3499211612, 581869302, 3890346734, 3586334585, 545404204, 4161255391, 3922919429, 949333985, 2715962298,
            1323567403,
        ];
        assert_eq!(first(&mut g, 10), head);
        let mut g = stepped(Mt19937::init_genrand(5489), 9999);
        assert_eq!(g.next_u32(), 4123659995);
        let mut g = Mt19937::init_by_array(&[0x123, 0x234, 0x345, 0x456]);
        assert_eq!(first(&mut g, 5), [1067595299, 955945823, 477289528, 4107218783, 4228976476]);
        // The definition written out separately agrees.
        let mut z = raw(&Mt19937::init_genrand(5489));
        assert_eq!((0..10).map(|_| reference_step(&mut z)).collect::<Vec<_>>(), head);
        assert_eq!(Mt19937::stream(5489, 0), Mt19937::init_genrand(5489));
    }

    #[test]
    fn from_raw_state_follows_definition() {
        let mut r = 5u64;
        let mut starts = vec![raw(&Mt19937::init_genrand(1)), raw(&Mt19937::init_by_array(&[1, 2, 3]))];
        for i in [0, 1, 396, 623, 624] {
            let mut w = [0u32; N + 1];
            w[..N].copy_from_slice(&random_block(&mut r));
            w[N] = i;
            starts.push(w);
        }
        // The smallest valid block: only the top bit of mt[0].
        let mut w = [0u32; N + 1];
        w[0] = 0x8000_0000;
        w[N] = 624;
        starts.push(w);
        for words in starts {
            follows_reference_step::<Mt19937, { N + 1 }>(words, 5000, reference_step);
        }
    }

    #[test]
    fn value_stability() {
        // Pinned: a change here changes every result produced with this generator. Checked
        // outside Rust with CPython's random module: getrandbits(32) after seed(2**40 + 5)
        // (whose seed(n) is init_by_array of n's 32-bit words, least significant first), and
        // after setstate() with stream (42, 7)'s block of Philox words (Philox written separately
        // in Python and checked against Random123's known answers), also its 10000th output.
        assert_eq!(first(&mut Mt19937::stream((1 << 40) + 5, 0), 3), [2166296868, 2220160828, 1153647273]);
        assert_eq!(first(&mut Mt19937::stream(42, 7), 3), [3785771149, 1497893860, 1192581238]);
        assert_eq!(stepped(Mt19937::stream(42, 7), 9999).next_u32(), 154635800);
        assert_eq!(first(&mut Mt19937::stream(u64::MAX, u64::MAX), 3), [4029960119, 862025760, 697594284]);
    }

    /// Jump-spaced streams are the skips they claim to be.
    #[test]
    fn jump_streams_are_skips() {
        let start = Mt19937::init_genrand(42);
        let streams = Mt19937::jump_streams(start, 3, 40);
        let mut second = start;
        second.skip(1 << 40);
        let mut third = second;
        third.skip(1 << 40);
        assert_eq!(streams, [start, second, third]);
    }

    #[test]
    fn stream_rule() {
        for seed in [0u64, 1, 5489, 0xFFFF_FFFF] {
            assert_eq!(Mt19937::stream(seed, 0), Mt19937::init_genrand(seed as u32));
        }
        for seed in [1u64 << 32, 0x0123_4567_89AB_CDEF, u64::MAX] {
            assert_eq!(Mt19937::stream(seed, 0), Mt19937::init_by_array(&[seed as u32, (seed >> 32) as u32]));
        }
        for (seed, k) in [(0u64, 1u64), (42, 7), (1 << 40, 1 << 33), (u64::MAX, u64::MAX)] {
            // The block is Philox's output from counter (k, 0, "MT19") on, in order, after
            // mt[0] = 2^31: the first candidate of the Philox-derived rule is its first four.
            let g = Mt19937::stream(seed, k);
            assert_eq!((g.mt[0], g.i), (0x8000_0000, 624));
            assert_eq!(g.mt[1..5], first_philox_candidate(seed, k, MT19937_TAG));
            for b in 0..PHILOX_BLOCKS {
                let w = Mt19937::philox_block(seed, k, b);
                for (t, &word) in w.iter().enumerate() {
                    if 1 + 4 * b + t < N {
                        assert_eq!(g.mt[1 + 4 * b + t], word);
                    }
                }
            }
            assert_eq!(Mt19937::philox_block(seed, k, PHILOX_BLOCKS - 1)[..3], g.mt[N - 3..]);
        }
        seed_and_stream_halves_matter::<Mt19937>();
        // An empty key is [0].
        assert_eq!(Mt19937::init_by_array(&[]), Mt19937::init_by_array(&[0]));
    }

    #[test]
    fn streams_are_distinct() {
        for seed in [0u64, 5489, 1 << 40] {
            for g in streams_start_distinct::<Mt19937>(seed, 1000) {
                assert!(Mt19937::is_valid(&g.mt) && g.i == N as u32);
            }
            neighbours_rarely_agree::<Mt19937>(seed, 0..100, 1000);
        }
    }

    #[test]
    fn skip_equals_stepping() {
        let mut r = 11u64;
        let ns = skip_lengths(
            [623, 624, 625, 1247, 1248, 50_000].into_iter().chain((0..4).map(|_| splitmix64(&mut r) % 1_000_000)),
        );
        for g in test_states() {
            skip_matches_stepping(g, &ns);
        }
    }

    /// The polynomial jump on its own (skip uses it only beyond TWIST_LIMIT twists).
    #[test]
    fn jump_with_equals_stepping() {
        let mut r = 12u64;
        let ns: Vec<u64> = skip_lengths(
            [623, 624, 625, 1247, 1248, 50_000].into_iter().chain((0..3).map(|_| splitmix64(&mut r) % 1_000_000)),
        );
        let jumps: Vec<Vec<u64>> = ns.iter().map(|&n| Mt19937::jump_polynomial(n)).collect();
        for g in test_states() {
            for (&n, jump) in ns.iter().zip(&jumps) {
                let mut a = g;
                a.jump_with(jump);
                assert_eq!(a, stepped(g, n), "jump_with({n}) from index {}", g.i);
            }
        }
        // Past TWIST_LIMIT, skip takes the jump.
        let n = (TWIST_LIMIT + 3) * N as u64 + 5;
        let g = Mt19937::stream(1, 2);
        assert_eq!(skipped(g, n), stepped(g, n));
    }

    #[test]
    fn skips_compose() {
        let big = 1u64 << 63;
        let pairs = [(big + 3, (1 << 62) + 1_234_567), (u64::MAX / 3, 12_345), (5_000_000, big + 624), (0, big)];
        for g in [Mt19937::init_genrand(DEFAULT_SEED), stepped(Mt19937::stream(3, 1), 300)] {
            skips_compose_for(g, &pairs);
        }
    }

    /// Berlekamp–Massey found a polynomial of degree 19937 (asserted there) that annihilates all
    /// 32 bit positions of the sequence, not only the bit it was computed from.
    #[test]
    fn characteristic_polynomial_annihilates_the_sequence() {
        let p = characteristic_polynomial();
        let taps: Vec<usize> = (0..=STATE_BITS).filter(|&j| (p[j / 64] >> (j % 64)) & 1 == 1).collect();
        assert_eq!(*taps.last().unwrap(), STATE_BITS);
        // P(0) = 1 and P(1) = 1 (an odd number of terms): neither x nor x + 1 divides P.
        assert_eq!(taps[0], 0);
        assert_eq!(taps.len() % 2, 1);
        let mut r = 3u64;
        let x = sequence(&random_block(&mut r), 1, STATE_BITS + 1 + 700);
        for q in 0..700 {
            assert_eq!(taps.iter().fold(0, |acc, &j| acc ^ x[q + j]), 0, "at x_{}", q + 1);
        }
        // The cached polynomial is the computed one.
        assert_eq!(compute_characteristic_polynomial(), p);
    }

    /// `x^(2^19937) = x mod P`, so `P` (degree 19937, with `P(0) = P(1) = 1`) is irreducible:
    /// its degree is prime. Then the order of `x` divides the prime `2^19937 - 1` and is not 1,
    /// so the period is exactly `2^19937 - 1`.
    #[test]
    #[ignore = "19937 polynomial squarings: about 10 s in release"]
    fn period_is_2_pow_19937_minus_1() {
        let mut x = vec![0u64; POLY_WORDS];
        x[0] = 2;
        assert_eq!(x_pow_2k(STATE_BITS), x);
    }

    #[test]
    fn polynomial_powers_agree() {
        // Squaring and multiplying by x agree with each other: x^(2^k) both ways.
        for k in [1, 10, 14, 15, 20, 40, 63] {
            assert_eq!(x_pow_mod(1 << k), x_pow_2k(k), "x^(2^{k})");
        }
    }

    #[test]
    fn large_skips_are_cheap() {
        skips_are_cheap(Mt19937::init_genrand(DEFAULT_SEED), [u64::MAX, 1 << 40]);
        let t = Instant::now();
        let p = compute_characteristic_polynomial();
        let bm = t.elapsed();
        std::hint::black_box(p);
        let _ = characteristic_polynomial();
        let t = Instant::now();
        let jump = Mt19937::jump_polynomial(u64::MAX);
        let poly = t.elapsed();
        let mut g = Mt19937::init_genrand(DEFAULT_SEED);
        let t = Instant::now();
        g.jump_with(&jump);
        let apply = t.elapsed();
        let t = Instant::now();
        g.skip(u64::MAX);
        let skip = t.elapsed();
        // At the limit, the twists and the jump cost about the same.
        let n = TWIST_LIMIT * N as u64;
        let t = Instant::now();
        g.skip(n);
        let twists = t.elapsed();
        let t = Instant::now();
        g.jump_with(&Mt19937::jump_polynomial(n));
        let jump_at_limit = t.elapsed();
        std::hint::black_box(g);
        println!(
            "mt19937 costs: P by Berlekamp-Massey {bm:?}; x^(2^64-1) mod P {poly:?}; applying it {apply:?}; \
             skip(2^64-1) {skip:?}; skip({n}) by {TWIST_LIMIT} twists {twists:?}, by the jump {jump_at_limit:?}"
        );
    }

    #[test]
    fn invalid_states() {
        let mut w = [0u32; N + 1];
        w[N] = 624;
        let e = Mt19937::from_raw_state(&w).unwrap_err();
        assert_eq!((e.generator, e.word, e.value), ("mt19937", None, 0));
        assert!(e.rule.starts_with("the 19937 significant bits"), "{}", e.rule);
        // The low bits of mt[0] are not significant; any index.
        w[0] = 0x7fff_ffff;
        for i in [0, 300, 624] {
            w[N] = i;
            assert!(Mt19937::from_raw_state(&w).unwrap_err().rule.starts_with("the 19937 significant bits"));
        }
        // Boundary: one significant bit set is valid.
        w[0] = 0x8000_0000;
        assert!(Mt19937::from_raw_state(&w).is_ok());
        let mut v = [0u32; N + 1];
        v[N - 1] = 1;
        assert!(Mt19937::from_raw_state(&v).is_ok());
        // The index: 624 and 0 valid, 625 not.
        let mut w = raw(&Mt19937::init_genrand(1));
        for i in [0, 624] {
            w[N] = i;
            assert_eq!(Mt19937::from_raw_state(&w).unwrap().i, i);
        }
        for i in [625, u32::MAX] {
            w[N] = i;
            let e = Mt19937::from_raw_state(&w).unwrap_err();
            assert_eq!((e.word, e.value), (None, i));
            assert!(e.rule.starts_with("the index mti (raw word 625) must be in [0, 624]"), "{}", e.rule);
        }
        rejects_word_counts::<Mt19937>(&[&[], &[1; N], &[1; N + 2]], "it has exactly 625 words");
        assert!(Mt19937::RAW_STATE.starts_with("mt[0],mt[1],") && Mt19937::RAW_STATE.ends_with(",mt[623],mti"));
        // A zero block with its low mt[0] bits set gives one output and then zeros: the reason
        // for the rule.
        let mut z = [0u32; N + 1];
        z[0] = 0x7fff_ffff;
        assert_ne!(reference_step(&mut z), 0);
        assert!((0..2000).all(|_| reference_step(&mut z) == 0));
    }
}
