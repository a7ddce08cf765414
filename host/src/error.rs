//! The library's error type: every failure a user can cause names what to change.

use warpmc_kernels::rng::InvalidState;

/// Errors from validating a job, selecting a backend or running it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter outside its allowed range. `field` is the parameter's name as the library
    /// spells it (`vol_a`); the CLI shows it as the flag (`--vol-a`).
    #[error("invalid {field}: {value} is outside the allowed range {allowed}")]
    InvalidParameter { field: &'static str, value: String, allowed: String },

    /// A raw generator state that would leave a component stuck at zero.
    #[error("invalid state: {0}")]
    InvalidState(#[from] InvalidState),

    /// `--backend gpu` (or a GPU-only operation) where no usable GPU is present.
    #[error("no usable GPU: {0}")]
    GpuUnavailable(String),

    /// A CUDA call failed on a GPU that was found.
    #[error("GPU error: {0}")]
    Gpu(String),

    /// Simulated values left the representable range; the result would be biased.
    #[error("{0}")]
    OutOfRange(String),

    /// Writing output failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Error {
    pub(crate) fn invalid(field: &'static str, value: impl std::fmt::Display, allowed: impl Into<String>) -> Self {
        Error::InvalidParameter { field, value: value.to_string(), allowed: allowed.into() }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
