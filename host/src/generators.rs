//! The generators users can name (`--generator`), from the kernel crate's one list
//! ([`warpmc_kernels::for_each_generator!`]).
//!
//! [`GeneratorKind`] is the run-time name of a generator; [`with_generator!`] turns it into the
//! generator's type once per job, so every hot loop below it is monomorphic. Adding a generator
//! to the kernel crate's list adds it here, to the CLI, the executors and the tests.

use warpmc_kernels::rng::{Generator, InvalidState};

macro_rules! generator_registry {
    ([] $(($G:ident, $id:ident $(, $kind:ident)?)),* $(,)?) => {
        /// A uniform generator, by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum GeneratorKind {
            $(
                #[doc = concat!("[`warpmc_kernels::rng::", stringify!($G), "`]")]
                $G,
            )*
        }

        impl GeneratorKind {
            /// Every generator, in the registry's order.
            pub const ALL: &'static [GeneratorKind] = &[$(GeneratorKind::$G),*];

            /// The name users type (`--generator`).
            pub fn name(self) -> &'static str {
                match self {
                    $(GeneratorKind::$G => <warpmc_kernels::rng::$G as Generator>::NAME,)*
                }
            }

            /// The suffix of its GPU kernels' names (`fill_u32__<suffix>`).
            pub fn kernel_suffix(self) -> &'static str {
                match self {
                    $(GeneratorKind::$G => stringify!($id),)*
                }
            }
        }
    };
}

/// The body of [`with_generator!`], given the registry's list.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_generator_match {
    ([$kind:expr, $T:ident, $body:expr] $(($G:ident, $id:ident $(, $collective:ident)?)),* $(,)?) => {
        match $kind {
            $($crate::generators::GeneratorKind::$G => {
                type $T = warpmc_kernels::rng::$G;
                $body
            })*
        }
    };
}

/// Evaluate `$body` with `$T` the type of generator `$kind` (a
/// [`generators::GeneratorKind`](crate::generators::GeneratorKind)): one match per job, so the
/// code inside is monomorphic.
#[macro_export]
macro_rules! with_generator {
    ($kind:expr, $T:ident => $body:expr) => {
        warpmc_kernels::for_each_generator!(__with_generator_match, $kind, $T, $body)
    };
}

warpmc_kernels::for_each_generator!(generator_registry);

impl GeneratorKind {
    /// The raw state words of `--state`, in the definition's order.
    pub fn raw_state(self) -> &'static str {
        crate::with_generator!(self, G => G::RAW_STATE)
    }

    /// How many raw state words `--state` takes.
    pub fn raw_state_words(self) -> usize {
        crate::with_generator!(self, G => G::RAW_STATE_WORDS)
    }

    /// The period in outputs, as the generator's module establishes it.
    pub fn period(self) -> &'static str {
        crate::with_generator!(self, G => G::PERIOD)
    }

    /// Bytes of state a GPU thread keeps for its stream between launches (for a collective
    /// generator, its lane's word of the warp's state).
    pub fn gpu_state_bytes(self) -> usize {
        crate::with_generator!(self, G => if G::LANES == 1 { size_of::<G>() } else { size_of::<u32>() })
    }

    /// Lanes sharing one state (32 for the warp generator, 1 otherwise).
    pub fn lanes(self) -> u32 {
        crate::with_generator!(self, G => G::LANES)
    }

    /// GPU threads that set up and fill one stream together (32 for mt19937, whose fill gives
    /// each stream a warp; 1 otherwise).
    pub fn threads_per_stream(self) -> u32 {
        crate::with_generator!(self, G => G::THREADS_PER_STREAM)
    }

    /// Check a raw state (`--state`) without keeping it.
    pub fn check_raw_state(self, words: &[u32]) -> Result<(), InvalidState> {
        crate::with_generator!(self, G => G::from_raw_state(words).map(|_| ()))
    }

    /// The generator named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|g| g.name() == name)
    }
}

impl Default for GeneratorKind {
    /// Philox4x32-10, the recommended generator (README.md, "Which generator"): its quality
    /// record is the best of the fast generators in warpmc's own battery runs (QUALITY.md), its
    /// streams are a counter and a key (any stream of any seed in O(1), none overlapping), and its
    /// streams are cuRAND's, so results can be compared with cuRAND's. The hybrid Tausworthe of GPU Gems 3,
    /// the default until issue 6, stays for the chapter's kernels: its low bits are GF(2)-linear.
    fn default() -> Self {
        GeneratorKind::Philox4x32x10
    }
}

impl std::fmt::Display for GeneratorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for GeneratorKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl clap::ValueEnum for GeneratorKind {
    fn value_variants<'a>() -> &'a [Self] {
        Self::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for &g in GeneratorKind::ALL {
            assert!(seen.insert(g.name()), "{} twice", g.name());
            assert!(g.name().chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{}", g.name());
            assert_eq!(GeneratorKind::from_name(g.name()), Some(g));
            assert_eq!(g.raw_state().split(',').count(), g.raw_state_words(), "{}", g.name());
        }
    }
}
