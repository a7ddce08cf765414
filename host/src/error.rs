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

    /// Parameters whose prices are too heavy-tailed for the number of paths: the message says
    /// which parameters to change and how far.
    #[error("these parameters cannot be priced by Monte Carlo with this many paths: {0}")]
    Unsampleable(String),

    /// A finished run whose closed-form check failed: its price is not to be trusted.
    #[error("the closed-form check failed, so the price above is not trustworthy: {0}")]
    CheckFailed(String),

    /// A finished quality run in which at least one statistic failed (its report was printed).
    #[error("the generator failed the battery: {0}")]
    BatteryFailed(String),

    /// Reading or writing a file or stream failed; `what` names the file and the operation.
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
}

impl Error {
    /// An I/O error with what was being done to which file (`"cannot create output file x"`).
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { what: what.into(), source }
    }

    pub(crate) fn invalid(field: &'static str, value: impl std::fmt::Display, allowed: impl Into<String>) -> Self {
        Error::InvalidParameter { field, value: value.to_string(), allowed: allowed.into() }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
