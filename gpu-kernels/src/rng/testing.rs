//! Checks shared by the generators' tests. Each helper asserts one property of a generator
//! generically, with the generator's own inputs (starts, skip lengths, seeds, stream numbers)
//! passed in by its test; the generator-specific tests (known answers, stream rules, valid
//! states, periods) stay in the generator's file.

use std::collections::HashSet;
use std::fmt::Debug;

use super::taus88::{Tausworthe, mat_mul};
use super::{Generator, Skip, Uniform32};

/// The next `n` outputs of `g`.
pub fn first<G: Uniform32>(g: &mut G, n: usize) -> Vec<u32> {
    (0..n).map(|_| g.next_u32()).collect()
}

/// `g` after `n` calls of `next_u32`.
pub fn stepped<G: Uniform32>(mut g: G, n: u64) -> G {
    for _ in 0..n {
        g.next_u32();
    }
    g
}

/// `g` after `skip(n)`.
pub fn skipped<G: Skip>(mut g: G, n: u64) -> G {
    g.skip(n);
    g
}

/// The words of a state (`Generator`'s contract makes a state a sequence of `u32` words).
pub fn state_words<G: Generator>(g: &G) -> Vec<u32> {
    const { assert!(size_of::<G>().is_multiple_of(4) && align_of::<G>() == 4) };
    // SAFETY: `Generator`'s contract: a #[repr(C)] struct of u32 fields only, so a state is
    // size_of::<G>() / 4 initialised words without padding, aligned to 4 (asserted above).
    unsafe { std::slice::from_raw_parts((g as *const G).cast::<u32>(), size_of::<G>() / 4) }.to_vec()
}

/// The next value of SplitMix64 from state `x` (a dependency-free source of test values).
pub fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The next state of Marsaglia's xorshift64 (13, 7, 17) from state `x` (a dependency-free
/// source of test values).
pub fn xorshift64(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// The skip lengths every generator's skip test checks (0, 1, 2, 3, 100, 12345), then `extra`.
pub fn skip_lengths(extra: impl IntoIterator<Item = u64>) -> Vec<u64> {
    [0, 1, 2, 3, 100, 12345].into_iter().chain(extra).collect()
}

/// For each `n` in `ns`: `skip(n)` from `start` is the same state as `n` calls of `next_u32`,
/// and the two continue with the same 9 outputs.
#[track_caller]
pub fn skip_matches_stepping<G: Skip + PartialEq + Debug>(start: G, ns: &[u64]) {
    for &n in ns {
        let (mut a, mut b) = (skipped(start, n), stepped(start, n));
        assert_eq!(a, b, "skip({n}) from {start:?}");
        assert_eq!(first(&mut a, 9), first(&mut b, 9), "outputs after skip({n}) from {start:?}");
    }
}

/// For each `(a, b)` in `pairs`: `skip(a)` then `skip(b)` from `start` is the same state as
/// `skip(a + b)` (`a + b` must not overflow `u64`).
#[track_caller]
pub fn skips_compose_for<G: Skip + PartialEq + Debug>(start: G, pairs: &[(u64, u64)]) {
    for &(a, b) in pairs {
        let sum = a.checked_add(b).expect("a + b overflows u64");
        assert_eq!(skipped(skipped(start, a), b), skipped(start, sum), "skip({a}) then skip({b}) from {start:?}");
    }
}

/// `skip` by every length of `ns` in turn, from `start`, takes under a second in all.
#[track_caller]
pub fn skips_are_cheap<G: Skip>(mut g: G, ns: impl IntoIterator<Item = u64>) {
    let t = std::time::Instant::now();
    for n in ns {
        g.skip(n);
    }
    assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
    std::hint::black_box(g);
}

/// For each `k` in `ks` (`k < u64::MAX`): stream `k` of `seed` skipped by `spacing` is stream
/// `k + 1`.
#[track_caller]
pub fn streams_are_spaced<G: Skip + PartialEq + Debug>(seed: u64, ks: &[u64], spacing: u64) {
    for &k in ks {
        assert_eq!(skipped(G::stream(seed, k), spacing), G::stream(seed, k + 1), "seed {seed}, k = {k}");
    }
}

/// Streams `0..count` of `seed` start from pairwise distinct states, compared after one step
/// (a step is a function, so distinct successors imply distinct starts, and raw bits that a
/// generator never reads cannot make two equivalent starts look different). Returns the
/// starts, for the caller's validity checks.
#[track_caller]
pub fn streams_start_distinct<G: Generator>(seed: u64, count: u64) -> Vec<G> {
    let mut seen = HashSet::new();
    let starts: Vec<G> = (0..count).map(|k| G::stream(seed, k)).collect();
    for (k, g) in starts.iter().enumerate() {
        assert!(seen.insert(state_words(&stepped(*g, 1))), "stream {k} of seed {seed} repeats a state");
    }
    starts
}

/// For each `k` in `ks`: streams `k` and `k + 1` of `seed` have no output value in common among
/// their first `len` (for generators whose streams are blocks of one cycle, so this also rules
/// out shifted copies).
#[track_caller]
pub fn neighbours_share_no_value<G: Generator>(seed: u64, ks: impl IntoIterator<Item = u64>, len: usize) {
    for k in ks {
        let seen: HashSet<u32> = first(&mut G::stream(seed, k), len).into_iter().collect();
        let next = first(&mut G::stream(seed, k + 1), len);
        assert!(next.iter().all(|v| !seen.contains(v)), "streams {k} and {} of seed {seed} overlap", k + 1);
    }
}

/// For each `k` in `ks`: streams `k` and `k + 1` of `seed` agree in fewer than 3 of their first
/// `len` positions (for independent uniform words, each position agrees with probability 2^-32).
#[track_caller]
pub fn neighbours_rarely_agree<G: Generator>(seed: u64, ks: impl IntoIterator<Item = u64>, len: usize) {
    for k in ks {
        let (a, b) = (first(&mut G::stream(seed, k), len), first(&mut G::stream(seed, k + 1), len));
        let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
        assert!(same < 3, "streams {k} and {} of seed {seed} agree on {same} of {len} outputs", k + 1);
    }
}

/// Both halves of the seed and of the stream number change the stream: streams `(1, 0)` and
/// `(2, 0)`, `(2^32, 0)` and `(0, 0)`, `(0, 2^32)` and `(0, 0)` (as `(seed, stream)`) differ.
#[track_caller]
pub fn seed_and_stream_halves_matter<G: Generator + PartialEq + Debug>() {
    assert_ne!(G::stream(1, 0), G::stream(2, 0));
    assert_ne!(G::stream(1 << 32, 0), G::stream(0, 0));
    assert_ne!(G::stream(0, 1 << 32), G::stream(0, 0));
}

/// Philox4x32-10 at counter `(stream mod 2^32, stream >> 32, 0, tag)` and key `(seed mod 2^32,
/// seed >> 32)`: the first candidate of the Philox-derived stream rule
/// ([`super::streams::philox_derived`]), written out independently of it.
pub fn first_philox_candidate(seed: u64, stream: u64, tag: u32) -> [u32; 4] {
    let key = [seed as u32, (seed >> 32) as u32];
    super::philox::philox4x32_10([stream as u32, (stream >> 32) as u32, 0, tag], key)
}

/// `from_raw_state` rejects each of `wrong` (none has `RAW_STATE_WORDS` words) as a rule about
/// the whole state, `InvalidState { generator: G::NAME, word: None, value: 0, rule }` with `rule`
/// starting with `rule_start`; and `RAW_STATE` names `RAW_STATE_WORDS` words.
#[track_caller]
pub fn rejects_word_counts<G: Generator + Debug>(wrong: &[&[u32]], rule_start: &str) {
    assert_eq!(G::RAW_STATE.split(',').count(), G::RAW_STATE_WORDS);
    for words in wrong {
        assert_ne!(words.len(), G::RAW_STATE_WORDS);
        let e = G::from_raw_state(words).unwrap_err();
        assert_eq!((e.generator, e.word, e.value), (G::NAME, None, 0), "{words:?}");
        assert!(e.rule.starts_with(rule_start), "{}", e.rule);
    }
}

/// `from_raw_state(&words)` then `n` calls of `next_u32` give the outputs of `reference_step`
/// stepping its own copy of `words`, and end in the state whose words are that copy.
#[track_caller]
pub fn follows_reference_step<G: Generator, const N: usize>(
    words: [u32; N],
    n: usize,
    mut reference_step: impl FnMut(&mut [u32; N]) -> u32,
) {
    let mut g = G::from_raw_state(&words).unwrap();
    let mut z = words;
    for i in 0..n {
        assert_eq!(g.next_u32(), reference_step(&mut z), "output {i} from {words:?}");
    }
    assert_eq!(state_words(&g), z);
}

/// `m^e` for a 32x32 bit matrix over GF(2) (column `j` is the image of `1 << j`).
pub fn gf2_pow(m: &[u32; 32], mut e: u64) -> [u32; 32] {
    let mut r: [u32; 32] = core::array::from_fn(|j| 1 << j);
    let mut b = *m;
    while e > 0 {
        if e & 1 == 1 {
            r = mat_mul(&b, &r);
        }
        b = mat_mul(&b, &b);
        e >>= 1;
    }
    r
}

/// The facts a Tausworthe component's `skip` relies on: `primes` (distinct) multiply to its
/// period `p`, `T^(p+1) = T` on the whole word, `p` is the exact period (`T^(p/q + 1) != T` for
/// every `q` in `primes`), and its jump table holds `T^(2^i)`.
#[track_caller]
pub fn tausworthe_period_is_exact(c: Tausworthe, primes: &[u64]) {
    let p = c.period as u64;
    assert_eq!(primes.iter().product::<u64>(), p);
    let t = c.matrix();
    assert_eq!(gf2_pow(&t, p + 1), t);
    for &q in primes {
        assert_ne!(gf2_pow(&t, p / q + 1), t, "period of {c:?} divides {}", p / q);
    }
    let table = c.jump_table();
    for (i, m) in table.iter().enumerate() {
        assert_eq!(*m, gf2_pow(&t, 1 << i));
    }
}
