//! Every registered generator through the library, the way consumers use it: words that fill the
//! whole 32 bits, normals with the right first two moments, distinct streams, output that does
//! not depend on how it is split into blocks. Each generator's own known answers, jumps and
//! state rules are tested beside its code (`gpu-kernels/src/rng/*.rs`).

use warpmc::backend::{FillKind, StreamInit};
use warpmc::generate::generate_words;
use warpmc::generators::GeneratorKind;
use warpmc::pricing::Mode;
use warpmc_tests::cpu;

/// Not a random number generator (a counter for the benchmark): exempt from statistics.
fn is_counter(g: GeneratorKind) -> bool {
    g == GeneratorKind::Adder
}

fn seeded(generator: GeneratorKind, streams: u64) -> StreamInit {
    StreamInit::Seeded { generator, seed: 2026, first: 0, count: streams }
}

/// Each of the 32 bit positions is set in about half the words: a generator with a dead bit
/// (Park-Miller's 31-bit values returned unshifted had a top bit always 0, which made every
/// Box-Muller sine non-negative) fails here. Park-Miller's low bit is 0 by construction, and
/// bit `k` of the power-of-two LCG has period `2^(k+1)`, so its low 20 bits are patterns, not
/// coin flips, over the 4096 outputs per stream used here (a documented weakness).
#[test]
fn every_bit_of_the_words_is_used() {
    let n = 1 << 16;
    for &g in GeneratorKind::ALL.iter().filter(|&&g| !is_counter(g)) {
        let words = generate_words(&*cpu(2), FillKind::Words, &seeded(g, 16), n).unwrap();
        for bit in 0..32 {
            if (g == GeneratorKind::ParkMiller && bit == 0) || (g == GeneratorKind::Lcg32 && bit < 20) {
                continue;
            }
            let ones = words.iter().filter(|&&w| w >> bit & 1 == 1).count() as f64;
            let z = (ones - n as f64 / 2.0) / (n as f64 / 4.0).sqrt();
            assert!(z.abs() < 6.0, "{g}: bit {bit} is set in {ones} of {n} words (z = {z:.1})");
        }
    }
}

/// Box-Muller normals from every generator have mean 0 and variance 1 within 5 standard errors.
#[test]
fn every_generator_feeds_box_muller() {
    let n = 1 << 18;
    for &g in GeneratorKind::ALL.iter().filter(|&&g| !is_counter(g)) {
        let words = generate_words(&*cpu(2), FillKind::Normals(Mode::Exact), &seeded(g, 64), n).unwrap();
        let x: Vec<f64> = words.iter().map(|&w| f32::from_bits(w) as f64).collect();
        let mean = x.iter().sum::<f64>() / n as f64;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        // Standard errors of the mean (1/sqrt n) and of the variance (sqrt(2/n)) for normals.
        let (z_mean, z_var) = (mean * (n as f64).sqrt(), (var - 1.0) / (2.0 / n as f64).sqrt());
        eprintln!("{g}: mean {mean:+.5} (z {z_mean:+.2}), variance {var:.5} (z {z_var:+.2})");
        assert!(z_mean.abs() < 5.0 && z_var.abs() < 5.0, "{g}: mean {mean}, variance {var}");
    }
}

/// Streams of a seed start differently: the first eight words of 256 streams are all distinct.
#[test]
fn streams_are_distinct() {
    for &g in GeneratorKind::ALL {
        let streams = 256;
        let words = generate_words(&*cpu(2), FillKind::Words, &seeded(g, streams), 8 * streams as usize).unwrap();
        // Interleaved in groups of four: stream s's first group is words 4s..4s+4.
        let mut firsts: Vec<&[u32]> = words.chunks(4).take(streams as usize).collect();
        firsts.sort();
        firsts.dedup();
        assert_eq!(firsts.len(), streams as usize, "{g}: two streams start with the same four words");
    }
}

/// The output of a stream does not depend on how many values one call asks for.
#[test]
fn output_does_not_depend_on_the_block_size() {
    for &g in GeneratorKind::ALL {
        let init = seeded(g, 3);
        let whole = generate_words(&*cpu(2), FillKind::Words, &init, 3 * 4 * 1000).unwrap();
        let exec = cpu(1);
        let mut filler = exec.filler(FillKind::Words, &init).unwrap();
        let mut parts = vec![0u32; whole.len()];
        let (a, b) = parts.split_at_mut(3 * 4 * 337);
        filler.fill(a).unwrap();
        filler.fill(b).unwrap();
        assert_eq!(parts, whole, "{g}");
    }
}

/// `f64` uniforms carry 53 random bits from two consecutive words of the stream: they are the
/// words' conversion, in (0, 1], with every one of the 52 fraction bits used (a double made from
/// one word, `z * 2^-32`, leaves the low 20 always zero), and uniform in mean and variance.
#[test]
fn f64_uniforms_use_53_bits() {
    let n = 1 << 16;
    for g in [GeneratorKind::Philox4x32x10, GeneratorKind::Mrg32k3a, GeneratorKind::WarpShfl] {
        let init = seeded(g, 8);
        let words = generate_words(&*cpu(2), FillKind::Words, &init, 2 * n).unwrap();
        let doubles = generate_words(&*cpu(2), FillKind::UniformsF64, &init, n).unwrap();
        assert_eq!(doubles.len(), 2 * n);
        let x: Vec<f64> =
            doubles.chunks_exact(2).map(|p| f64::from_bits(u64::from(p[0]) | (u64::from(p[1]) << 32))).collect();
        // Value i of the interleaved layout is made of words 2i and 2i + 1 of its stream, which
        // the word fill puts at the positions of values 2i and 2i + 1 of a fill twice as long.
        for (i, &v) in x.iter().enumerate().take(1000) {
            let (row, col) = (i / (4 * 8), i % (4 * 8));
            let (s, j) = (col / 4, col % 4);
            let w = |k: usize| words[(k / 4) * 32 + s * 4 + k % 4];
            let k = 2 * (row * 4 + j);
            assert_eq!(v, warpmc_kernels::convert::u32_pair_to_unit_f64(w(k), w(k + 1)), "{g}, value {i}");
        }
        assert!(x.iter().all(|&v| v > 0.0 && v <= 1.0), "{g}");
        let low_bits = x.iter().fold(0u64, |acc, v| acc | (v.to_bits() & ((1 << 20) - 1)));
        assert_eq!(low_bits, (1 << 20) - 1, "{g}: some of the low 20 fraction bits are never set");
        let mean = x.iter().sum::<f64>() / n as f64;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let (z_mean, z_var) =
            ((mean - 0.5) / (1.0 / 12.0 / n as f64).sqrt(), (var - 1.0 / 12.0) / (1.0 / 180.0 / n as f64).sqrt());
        assert!(z_mean.abs() < 5.0 && z_var.abs() < 5.0, "{g}: mean {mean}, variance {var}");
    }
}
