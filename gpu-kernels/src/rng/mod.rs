//! Uniform 32-bit generators and the rules that give each path its own stream.
//!
//! - [`HybridTaus`]: GPU Gems 3 ch. 37's hybrid generator (taus88 XOR a 32-bit LCG).
//! - [`philox`]: Philox4x32-10 (Salmon et al., SC11), a counter-based bijection, used here to
//!   derive independent per-path states from `(seed, stream)`.
//! - [`streams`]: the documented derivation rule.

pub mod hybrid_taus;
pub mod philox;
pub mod streams;

pub use hybrid_taus::{HybridTaus, InvalidState};

/// A generator of uniformly distributed 32-bit words.
pub trait Uniform32 {
    /// The next word of the stream.
    fn next_u32(&mut self) -> u32;
}
