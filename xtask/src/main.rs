//! `cargo xtask`: the project's own commands (`cargo xtask` is an alias for
//! `cargo run --quiet --package xtask --`, see `.cargo/config.toml`).
//!
//! Every command runs with the workspace root as its working directory and builds into
//! `<root>/target` (it sets `CARGO_TARGET_DIR` for the cargo commands it starts), so it knows
//! where the binaries, the PTX and the tools are.
//!
//! - `setup [--quality]`: installs what the GPU build and the PTX check need, and nothing when all is there:
//!   the pinned nightly toolchain named by `[workspace.metadata.warpmc] ptx-toolchain` in the
//!   workspace Cargo.toml (`rustup toolchain install nightly-YYYY-MM-DD --profile minimal
//!   --component rust-src`), its `rust-src` component (for `-Zbuild-std=core`), and `ptxas` from the PyPI wheel `nvidia-cuda-nvcc==13.0.88`
//!   in `target/tools/nvcc` (installing `python3-pip` with apt-get first if pip is missing and we
//!   are root). One line per step. With `--quality`, also the external batteries of `warpmc
//!   quality`: TestU01Drv (`cargo install TestU01Drv --locked --root target/tools/testu01`, which
//!   compiles TestU01 with cc) and dieharder (`apt-get install -y dieharder`, as root).
//! - `test`: the whole test command, used by CI (`.ci/run`). setup; `cargo build --release -p
//!   warpmc` (compiles the kernels to `target/ptx/warpmc_kernels.ptx`); `ptxas -arch=sm_90 -v` on
//!   that PTX with a table of registers, stack and spills per kernel (a ptxas error fails the run,
//!   spills only warn); `cargo check -p warpmc --no-default-features` (the CPU-only build keeps
//!   compiling); `cargo test --workspace --release`; then the GPU tests once more with their output
//!   captured, to say whether they ran on a GPU or were skipped. The first failing step stops it.
//! - `run-pricing [ARGS]...`: setup (quiet), then `cargo run --release -p warpmc -- price ARGS...`
//!   (`price --suite` without arguments: the chapter's two options and the validation
//!   instruments in one table), exiting with its status.
//! - `bench [--quick] [--from FILE.json]`: runs `warpmc bench` (release build) writing
//!   `target/bench/bench-<unix-seconds>.{json,md}`, or with `--from` takes an existing report and
//!   the Markdown beside it (say, `bench.json`/`bench.md` brought back from a GPU machine); either
//!   way it inserts the Markdown into `BENCHMARKS.md` right after `<!-- bench-results -->`,
//!   newest first.
//! - `device-bundle`: `target/device-bundle/` with the release CLI, every test executable of the
//!   workspace, `run.sh` and `README.txt`: what a GPU machine without Rust needs to run the tests
//!   (with `WARPMC_REQUIRE_GPU=1`), a GPU pricing job and the benchmark. Fails above 64 MiB.
//! - `ptx-report`: the build and the ptxas table only.
//! - `fresh-check [--keep]`: not part of CI (it downloads toolchains and builds from scratch, many
//!   minutes). Checks that a newcomer with only rustup and python3 can run the README's two
//!   commands: clones the committed HEAD into a temporary folder, installs stable with rustup-init
//!   into empty `RUSTUP_HOME`/`CARGO_HOME`, and runs the `## On a fresh machine` commands there with
//!   a clean environment (empty `HOME`, no other cargo, rustc or rustup on `PATH`), then reports
//!   each step with its time. `--keep` keeps the folder (clone, toolchains, log).

mod bench;
mod bundle;
mod fresh;
mod integrand;
mod ptx;
mod ptx_pin;
mod setup;
mod test;
mod util;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", about = "warpmc's project commands")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Install the pinned nightly toolchain, its rust-src and ptxas when missing (idempotent).
    Setup {
        /// Also the external quality batteries: TestU01Drv (crates.io, compiles TestU01) and
        /// dieharder (Debian package, needs root).
        #[arg(long)]
        quality: bool,
    },
    /// The project's whole test command (what CI runs).
    Test,
    /// Price the suite (the chapter's two options and the validation instruments), or with
    /// arguments anything `warpmc price ARGS...` prices.
    // `--help` goes through to `warpmc price`; `cargo xtask help run-pricing` shows this one.
    #[command(disable_help_flag = true)]
    RunPricing {
        /// Arguments for `warpmc price` (`cargo xtask run-pricing --help` lists them).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run the benchmark (or take a finished report) and add it to BENCHMARKS.md.
    Bench {
        /// Small sizes: a smoke run, not figures to report.
        #[arg(long, conflicts_with = "from")]
        quick: bool,
        /// Do not run anything: take this report and the .md beside it (same stem).
        #[arg(long, value_name = "FILE.json")]
        from: Option<PathBuf>,
    },
    /// Compile a user's integrand crate (examples/user-integrand shows one) to a PTX module for
    /// `warpmc integrate` on the GPU: target/integrands/<crate>.ptx.
    BuildIntegrand {
        /// The crate's Cargo.toml.
        #[arg(long, default_value = "examples/user-integrand/Cargo.toml")]
        manifest_path: PathBuf,
        /// Where to write the module [default: target/integrands].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Build target/device-bundle/ (and packed, target/device-pack/): the CLI, the test executables and run.sh for a GPU machine.
    DeviceBundle,
    /// Build, then print ptxas's registers, stack and spills per kernel.
    PtxReport,
    /// Run the README's two commands in a clean clone with fresh toolchains (slow; not CI).
    FreshCheck {
        /// Keep the temporary folder (the clone, the toolchains and the log) and print its path.
        #[arg(long)]
        keep: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Paths given by the user are relative to where they ran the command; resolve them before
    // moving to the workspace root.
    let from = match &cli.command {
        Command::Bench { from: Some(p), .. } => std::path::absolute(p).ok(),
        _ => None,
    };
    let root = util::workspace_root();
    if let Err(e) = std::env::set_current_dir(&root) {
        eprintln!("xtask: error: cannot enter the workspace root {}: {e}", root.display());
        return ExitCode::FAILURE;
    }
    let result = match cli.command {
        Command::Setup { quality } => {
            setup::setup(true).and_then(|()| if quality { setup::install_quality_tools() } else { Ok(()) })
        }
        Command::Test => test::test(),
        Command::RunPricing { args } => run_pricing(&args),
        Command::Bench { quick, .. } => bench::bench(quick, from.as_deref()),
        Command::DeviceBundle => bundle::device_bundle(),
        Command::BuildIntegrand { manifest_path, out } => {
            integrand::build_integrand(&manifest_path, out.as_deref()).map(|_| ())
        }
        Command::PtxReport => ptx_report(),
        Command::FreshCheck { keep } => fresh::fresh_check(keep),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\nxtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_pricing(args: &[String]) -> anyhow::Result<()> {
    setup::setup(false)?;
    let mut cmd = util::cargo();
    cmd.args(["run", "--release", "-p", "warpmc", "--", "price"]);
    if args.is_empty() {
        cmd.arg("--suite");
    } else {
        cmd.args(args);
    }
    let status = util::status(&mut cmd)?;
    // Pass the CLI's own exit status on (2 for a bad parameter, say).
    std::process::exit(status.code().unwrap_or(1));
}

fn ptx_report() -> anyhow::Result<()> {
    setup::setup(false)?;
    util::run(util::cargo().args(["build", "--release", "-p", "warpmc"]))?;
    ptx::report()?;
    Ok(())
}
