//! Uniform 32-bit generators behind one interface, and the rules that give each path its own
//! stream.
//!
//! A generator is a `#[repr(C)]`, `Copy` state with a step ([`Uniform32::next_u32`]), a seeding
//! rule from `(seed, stream)` ([`Generator::stream`]), a raw-state constructor that rejects
//! invalid states ([`Generator::from_raw_state`]) and, where the algebra allows, a jump
//! ([`Skip::skip`]). Every consumer (fills, transforms, path simulations) is generic over
//! [`Generator`], so it is monomorphised per generator: no dispatch in a hot loop.
//!
//! **Adding a generator** is one new file here with its type, and one line in
//! [`for_each_generator!`]: the GPU entry points (`gpu.rs`), the host's `--generator` names, the
//! CPU executor, the parity tests and the benchmark all iterate over that list.
//!
//! - [`philox`]: Philox4x32-10 (Salmon et al., SC11), also the derivation of per-stream states
//!   for generators without a jump ([`streams`]).
//! - [`warp_algebra`]: the warp generator's step as a GF(2)-linear map, its characteristic
//!   polynomial and polynomial jumps (shared with the build script that computes its jump table).

pub mod adder;
pub mod gm19;
pub mod gm29;
pub mod gm31;
pub mod gm55;
pub mod gm61;
pub mod gm_common;
pub mod gq58_1;
pub mod gq58_3;
pub mod gq58_4;
pub mod hybrid_taus;
pub mod kiss;
pub mod lcg32;
pub mod lcg_prime;
pub mod lfsr113;
pub mod mrg32k3a;
pub mod mrg32k3a_curand;
pub mod mt19937;
pub mod park_miller;
pub mod philox;
pub mod philox4x32_10;
pub mod streams;
pub mod taus88;
#[cfg(test)]
pub(crate) mod testing;
pub mod warp;
pub mod warp_algebra;
pub mod warp_shfl;
pub mod xorwow;

pub use adder::Adder;
pub use gm19::Gm19;
pub use gm29::Gm29;
pub use gm31::Gm31;
pub use gm55::Gm55;
pub use gm61::Gm61;
pub use gq58_1::Gq581;
pub use gq58_3::Gq583;
pub use gq58_4::Gq584;
pub use hybrid_taus::HybridTaus;
pub use kiss::Kiss;
pub use lcg_prime::LcgPrime;
pub use lcg32::Lcg32;
pub use lfsr113::Lfsr113;
pub use mrg32k3a::Mrg32k3a;
pub use mrg32k3a_curand::Mrg32k3aCurand;
pub use mt19937::Mt19937;
pub use park_miller::ParkMiller;
pub use philox4x32_10::Philox4x32x10;
pub use taus88::Taus88;
pub use warp::Warp;
pub use warp_shfl::WarpShfl;
pub use xorwow::Xorwow;

/// A generator of uniformly distributed 32-bit words.
pub trait Uniform32 {
    /// The next word of the stream.
    fn next_u32(&mut self) -> u32;

    /// The next four words of the stream, in order: always the same words as four calls of
    /// [`Self::next_u32`]. The fills draw their groups through it, so a generator that makes
    /// words four at a time (Philox: a block per counter) can hand over a whole block without
    /// the per-word bookkeeping, where its state allows.
    #[inline(always)]
    fn next_u32x4(&mut self) -> [u32; 4] {
        [self.next_u32(), self.next_u32(), self.next_u32(), self.next_u32()]
    }
}

/// A uniform generator as warpmc composes it.
///
/// # Safety
/// Implementors are `#[repr(C)]` structs whose fields are all `u32` or arrays of `u32`: a state
/// is `size_of::<Self>() / 4` words without padding, and the host copies states between CPU and
/// GPU memory as words.
pub unsafe trait Generator: Uniform32 + Copy + Send + Sync + 'static {
    /// The name users type (`--generator`), in kebab case.
    const NAME: &'static str;
    /// The raw state words of `--state`, named in the definition's order (`"z1,z2,z3,z4"`).
    const RAW_STATE: &'static str;
    /// How many raw state words there are.
    const RAW_STATE_WORDS: usize;
    /// The period in outputs, as the module's docs establish it ("2^1024 - 1", "about 2^120").
    const PERIOD: &'static str;
    /// Lanes that share one state and draw together: 1 for an ordinary generator, 32 for a
    /// [`Collective`] one (the warp generator), whose stream `k` is lane `k mod 32` of the
    /// `k / 32`-th shared state.
    const LANES: u32 = 1;
    /// Dynamic shared memory a GPU thread needs to draw (the warp generator's shared-memory
    /// form: 4 bytes, one word of its warp's state).
    const SHARED_BYTES_PER_THREAD: u32 = 0;
    /// GPU threads that set up and fill one stream together: 1, or 32 for a `WarpStream`
    /// generator (MT19937), whose `init` and fill kernels give each stream a warp. Its streams,
    /// states and other kernels are an ordinary generator's.
    const THREADS_PER_STREAM: u32 = 1;
    /// Dynamic shared memory a GPU thread of a fill kernel needs.
    const FILL_SHARED_BYTES_PER_THREAD: u32 = Self::SHARED_BYTES_PER_THREAD;

    /// The state of stream `stream` of `seed`. Each generator documents its rule and what it
    /// guarantees about overlap between streams.
    fn stream(seed: u64, stream: u64) -> Self;

    /// `*out = Self::stream(seed, stream)`. A generator with a large state overrides it to
    /// write the state in place: the GPU's set-up kernel writes through it to the states in
    /// global memory, and a state returned by value is built on the thread's stack (local
    /// memory) and copied.
    #[inline(always)]
    fn write_stream(seed: u64, stream: u64, out: &mut Self) {
        *out = Self::stream(seed, stream);
    }

    /// A generator from `RAW_STATE_WORDS` raw words in the definition's order. A state the
    /// generator cannot run from (all zero, below a component's minimum, at or above a
    /// modulus) is an error naming the constraint; it is never adjusted.
    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState>;
}

/// A generator whose state the 32 lanes of a warp share and step together (Thomas's warp
/// generator, [`warp`] and [`warp_shfl`]). On the CPU it is an ordinary [`Generator`] (one
/// lane's view of the whole state). On the GPU its kernels are the collective ones of
/// `gpu.rs`: a lane keeps one word of its warp's state between launches, and the 32 lanes of a
/// hardware warp draw together, each call of `next_u32` one step of the shared state, so every
/// lane must draw the same number of words at the same time.
#[cfg(target_arch = "nvptx64")]
pub trait Collective: Generator {
    /// What a lane draws from on the GPU (its word in a register, or in shared memory).
    type Lane: Uniform32;
    /// The lane's draw form from its word of the warp's state.
    ///
    /// # Safety
    /// All 32 lanes of the warp call it together.
    unsafe fn lane(word: u32) -> Self::Lane;
    /// The lane's word of the warp's current state, to keep between launches.
    fn word(lane: &Self::Lane) -> u32;
    /// This lane's word of warp state `warp` of `seed` (stream `32 warp + lane`).
    ///
    /// # Safety
    /// All 32 lanes of the warp call it together with the same arguments.
    unsafe fn init_word(seed: u64, warp: u64) -> u32;
    /// This lane's word of the warp state `warps` warp states after the one whose word is
    /// `word` (stream `32 (w + warps) + lane` from stream `32 w + lane`).
    ///
    /// # Safety
    /// All 32 lanes of the warp call it together with the same `warps`.
    unsafe fn jump_word(word: u32, warps: u64) -> u32;
}

/// A generator whose GPU `init` and fill kernels give each stream a warp
/// ([`Generator::THREADS_PER_STREAM`] = 32): a large state (MT19937's 2.5 KB) is set up by 32
/// lanes writing its words together, and filled from shared memory by 32 lanes that each
/// produce a group of values, in place of one thread stepping it word by word in local memory.
/// The values are the ordinary generator's, bit for bit; the line of [`for_each_generator!`]
/// ends with `, warp_stream`.
///
/// A fill opens a stream's working form in the warp's part of shared memory
/// ([`Self::WARP_SHARED_BYTES`]), draws rounds of up to 32 groups from it, and closes it,
/// writing the state back.
#[cfg(target_arch = "nvptx64")]
pub trait WarpStream: Generator {
    /// Dynamic shared memory a warp's working form takes.
    const WARP_SHARED_BYTES: u32;
    /// A warp's working form of one stream.
    type Warp;

    /// Write stream `stream` of `seed` (as [`Generator::stream`]) to `state`.
    ///
    /// # Safety
    /// All 32 lanes of the warp call it together with the same arguments; `state` is valid
    /// for writes.
    unsafe fn init_warp(state: *mut Self, seed: u64, stream: u64);

    /// The working form of the state at `state`, in the shared memory at shared-space address
    /// `shared` (`WARP_SHARED_BYTES`, 16-byte aligned).
    ///
    /// # Safety
    /// All 32 lanes of the warp call it together with the same arguments; `state` is valid for
    /// reads and no other warp writes it; `shared` is this warp's alone until [`Self::close`].
    unsafe fn open(state: *const Self, shared: u32) -> Self::Warp;

    /// The next `k` groups of `K` (`1 <= k <= 32`), in the stream's order: lane `l < k`
    /// returns group `l` of the round (the other lanes' values are unspecified).
    ///
    /// # Safety
    /// All 32 lanes call it together with the same `k`.
    unsafe fn round<K: crate::fill::Group>(warp: &mut Self::Warp, k: u32) -> [K::Item; crate::fill::GROUP];

    /// Write the state, advanced past every group drawn, back to `state`.
    ///
    /// # Safety
    /// All 32 lanes call it together; `state` is valid for writes.
    unsafe fn close(warp: &Self::Warp, state: *mut Self);
}

/// Jump-ahead in `O(log n)`, for the generators whose algebra allows it.
pub trait Skip: Generator {
    /// Advance by `n` outputs: the same state as `n` calls of `next_u32`.
    fn skip(&mut self, n: u64);
}

/// Whether `suffix` is the kernel suffix of the generator named `name` (`--generator`): the
/// name with `_` for each `-` (`philox4x32-10` is `philox4x32_10`). `integrand_kernel!` checks
/// its list with it when the module compiles.
pub const fn is_kernel_suffix(name: &str, suffix: &str) -> bool {
    let (a, b) = (name.as_bytes(), suffix.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        let c = if a[i] == b'-' { b'_' } else { a[i] };
        if c != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A raw state a generator cannot run from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidState {
    /// The generator's name.
    pub generator: &'static str,
    /// The offending raw word (0-based), or `None` for a rule about the whole state.
    pub word: Option<u8>,
    /// The offending value (0 for a rule about the whole state).
    pub value: u32,
    /// The constraint, in words ("z1 must be >= 2: ...").
    pub rule: &'static str,
}

impl InvalidState {
    /// A raw state with the wrong number of words: a rule about the whole state (`word: None`,
    /// `value: 0`), `rule` saying how many words there are.
    #[inline(always)]
    pub const fn word_count(generator: &'static str, rule: &'static str) -> Self {
        Self { generator, word: None, value: 0, rule }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl core::fmt::Display for InvalidState {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.word {
            Some(i) => write!(f, "{} state word {} = {} is invalid: {}", self.generator, i + 1, self.value, self.rule),
            None => write!(f, "{} state is invalid: {}", self.generator, self.rule),
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl std::error::Error for InvalidState {}

/// The list of generators: `callback! { [ARGS] (Type, module_name), ... }`, each `Type` a
/// [`Generator`] in `crate::rng` and `module_name` its file (which also names its GPU kernels,
/// `fill_u32__<module_name>` and so on); `ARGS` are the tokens given after the callback's name,
/// passed through. A [`Collective`] generator's line ends with `, collective`, which gives it
/// the collective GPU kernels; a `WarpStream` generator's with `, warp_stream`, which gives
/// it warp-per-stream `init` and fill kernels. One line per generator; everything else follows.
#[macro_export]
macro_rules! for_each_generator {
    ($callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            [$($($args)*)?]
            (HybridTaus, hybrid_taus),
            (Lcg32, lcg32),
            (ParkMiller, park_miller),
            (Adder, adder),
            (Mrg32k3a, mrg32k3a),
            (Mrg32k3aCurand, mrg32k3a_curand),
            (Mt19937, mt19937, warp_stream),
            (Philox4x32x10, philox4x32_10),
            (Kiss, kiss),
            (Taus88, taus88),
            (Lfsr113, lfsr113),
            (Xorwow, xorwow),
            (LcgPrime, lcg_prime),
            (Gm19, gm19),
            (Gm29, gm29),
            (Gm31, gm31),
            (Gm55, gm55),
            (Gm61, gm61),
            (Gq581, gq58_1),
            (Gq583, gq58_3),
            (Gq584, gq58_4),
            (Warp, warp, collective),
            (WarpShfl, warp_shfl, collective),
        }
    };
}

#[cfg(test)]
mod suffix_tests {
    macro_rules! check_suffixes {
        ([] $(($G:ident, $id:ident $(, $kind:ident)?)),* $(,)?) => { $(
            assert!(super::is_kernel_suffix(<super::$G as super::Generator>::NAME, stringify!($id)), stringify!($G));
        )* };
    }

    /// Every generator's kernel suffix (the id of `for_each_generator!`) is its name with `_`
    /// for `-`, as `integrand_kernel!`'s check and the host's kernel names assume.
    #[test]
    fn kernel_suffixes_are_the_names() {
        crate::for_each_generator!(check_suffixes);
        assert!(!super::is_kernel_suffix("philox4x32-10", "philox4x32_1"));
        assert!(!super::is_kernel_suffix("warp-shfl", "warp"));
        assert!(!super::is_kernel_suffix("warp", "wart"));
    }
}
