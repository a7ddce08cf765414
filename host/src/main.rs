//! The `warpmc` command-line tool: `price`, `generate`, `bench`, `info`.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use warpmc::backend::{self, BackendKind, BackendOptions};
use warpmc::curand_host::CurandOrdering;
use warpmc::distributions::{DistKind, DistSpec, Transform};
use warpmc::generate::{CurandLayout, Distribution, Format, GenerateSpec, Precision};
use warpmc::generators::GeneratorKind;
use warpmc::pricing::{AsianBasket, CheckStatus, Mode, PriceReport, PricingJob, price_asian_basket_with_progress};
use warpmc::{Error, bench};

#[derive(Parser)]
#[command(name = "warpmc", version, about = "Monte Carlo on NVIDIA GPUs, with a CPU backend from the same code")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Price GPU Gems 3's Asian basket option (Listing 37-8), or a one-asset instrument
    /// (--instrument), with error bars.
    Price(PriceArgs),
    /// Write a generator's output to stdout or a file.
    Generate(GenerateArgs),
    /// Measure generator and pricing throughput (GPU beside cuRAND and copy bandwidth; CPU).
    Bench(BenchArgs),
    /// Run a statistical test battery on a generator's words.
    Quality(QualityArgs),
    /// Adaptive multidimensional integration (VEGAS with adaptive stratification) of a built-in
    /// integrand on the CPU, one GPU or several (--gpus), with an error bar and chi^2/dof.
    Integrate(IntegrateArgs),
    /// Show which backends and generators are available.
    Info,
    /// Demonstrations: `pipeline`, the TI example (generation overlapped with host consumption).
    #[command(subcommand)]
    Demo(DemoCommand),
    /// Run every GPU kernel once at a small size (for compute-sanitizer in the device bundle).
    #[command(hide = true)]
    CheckKernels,
}

#[derive(Subcommand)]
enum DemoCommand {
    /// TI's Monte Carlo example rebuilt: normals from parallel LCG streams (prime increments) by
    /// the polar method, a host consumer, and ns per element host-only, serial and overlapped.
    Pipeline(PipelineArgs),
}

#[derive(Args)]
struct PipelineArgs {
    #[arg(long, value_enum, default_value_t = GeneratorKind::LcgPrime)]
    generator: GeneratorKind,
    #[arg(long, value_enum, default_value_t = Transform::Polar)]
    transform: Transform,
    #[arg(long, value_enum, default_value_t = warpmc::pipeline::Consumer::Sign)]
    consumer: warpmc::pipeline::Consumer,
    /// Normals per run, in [1, 2^36].
    #[arg(long, default_value = "2^25", value_parser = parse_count, allow_negative_numbers = true)]
    count: i128,
    /// Parallel streams, in [1, 2^20].
    #[arg(long, default_value = "4096", value_parser = parse_count, allow_negative_numbers = true)]
    streams: i128,
    /// Normals per block, in [1, 2^28].
    #[arg(long, default_value = "2^20", value_parser = parse_count, allow_negative_numbers = true)]
    block: i128,
    /// Buffers, in [2, 64].
    #[arg(long, default_value_t = 4)]
    buffers: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    backend: BackendArgs,
}

#[derive(Args)]
struct IntegrateArgs {
    /// The integrand: oscillatory, product-peak, corner-peak, gaussian, continuous,
    /// discontinuous (the Genz families) or narrow-gaussians (Lepage's test).
    #[arg(long)]
    integrand: String,
    /// Dimensions, in [1, 32].
    #[arg(long)]
    dim: u32,
    /// Integrand parameters NAME=VALUE (repeatable): a=X or a=X1:X2:..:Xd (Genz's a_i, in
    /// (0, 1e6]), u=.. (Genz's shifts u_i, in [0, 1]), width=W (narrow-gaussians, in (0.001, 10]).
    #[arg(long = "param")]
    params: Vec<String>,
    /// Stop once the combined relative error is at most this, in (0, 1).
    #[arg(long, allow_negative_numbers = true)]
    target_rel_error: Option<f64>,
    /// Evaluation budget of the whole run (with --iterations M and no target: M iterations of
    /// evals/M points each), in [1000, 2^50].
    #[arg(long, value_parser = parse_count, allow_negative_numbers = true)]
    evals: Option<i128>,
    /// Iterations, warm-up included [default: 12; with a target, at most 1000].
    #[arg(long)]
    iterations: Option<u32>,
    /// Evaluations per iteration [default: 10^6, or evals / iterations], in [1000, 2^40].
    #[arg(long, value_parser = parse_count, allow_negative_numbers = true)]
    evals_per_iteration: Option<i128>,
    /// Leading iterations that adapt the grid but are left out of the estimate.
    #[arg(long, default_value_t = 2)]
    warmup: u32,
    /// Grid increments per axis, in [2, 512].
    #[arg(long, default_value_t = 128)]
    bins: u32,
    /// Strata per axis [default: the largest s with s^dim <= evals per iteration / 4, s^dim <= 2^22].
    #[arg(long)]
    strata: Option<u32>,
    /// Grid damping alpha, in [0, 2] (0: no grid adaptation).
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    alpha: f64,
    /// Stratification damping beta, in [0, 1] (0: the same points in every hypercube).
    #[arg(long, default_value_t = 0.75, allow_negative_numbers = true)]
    beta: f64,
    #[arg(long, value_enum, default_value_t = GeneratorKind::Philox4x32x10)]
    generator: GeneratorKind,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// GPUs: all, a count N (devices 0..N-1) or a list 0,1 [default: --gpu-device alone].
    #[arg(long)]
    gpus: Option<String>,
    #[arg(long)]
    json: bool,
    /// Print each iteration's estimate as it finishes (standard error).
    #[arg(long)]
    verbose: bool,
    /// Draw the run: each iteration's estimate with its error bar, and the adapted grid of two
    /// axes (--plot-axes), as FILE.svg or FILE.png.
    #[arg(long, value_name = "FILE.svg|png")]
    plot: Option<PathBuf>,
    /// The two axes of the grid panel of --plot, each below --dim.
    #[arg(long, default_value = "0,1", value_name = "I,J")]
    plot_axes: String,
    /// After the run, time one iteration's kernel on the first GPU against a fused kernel that
    /// evaluates the same integrand at plain uniform points (the grid's overhead).
    #[arg(long)]
    kernel_rates: bool,
    #[command(flatten)]
    backend: BackendArgs,
}

#[derive(Args, Clone, Copy)]
struct BackendArgs {
    /// Where to run: `auto` takes the GPU when a driver and a device are present.
    #[arg(long, value_enum, default_value_t = BackendKind::Auto)]
    backend: BackendKind,
    /// CPU worker threads [default: all cores].
    #[arg(long)]
    threads: Option<usize>,
    /// GPU threads per block (a multiple of 32) [default: 256; 512 for MT19937's fills and the
    /// cuRAND layout's Philox and MRG32k3a 32-bit values].
    #[arg(long)]
    gpu_block: Option<u32>,
    /// GPU blocks [default: enough to fill every multiprocessor].
    #[arg(long)]
    gpu_grid: Option<u32>,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    gpu_device: usize,
}

impl BackendArgs {
    fn options(&self) -> BackendOptions {
        BackendOptions {
            kind: self.backend,
            cpu_threads: self.threads,
            gpu_block: self.gpu_block,
            gpu_grid: self.gpu_grid,
            gpu_device: self.gpu_device,
        }
    }
}

#[derive(Args)]
struct PriceArgs {
    /// A job file (TOML) with one or more instruments and their run settings (README.md,
    /// "Job files"); flags other than --json and the backend's do not apply to it.
    job: Option<PathBuf>,
    /// Monte Carlo paths, in [2, 2^40] (also accepts 1e6, 2^20, 1_000_000).
    #[arg(long, default_value = "1048576", value_parser = parse_count, allow_negative_numbers = true)]
    paths: i128,
    /// Averaging dates per path, in [1, 1000000] (default 256 for the basket; for an
    /// --instrument, the same as --param steps=N).
    #[arg(long, allow_negative_numbers = true)]
    steps: Option<i64>,
    /// Price an instrument instead of the chapter's basket: asian-basket (N assets),
    /// european-call, european-put, asian-arithmetic, asian-geometric, asian-barrier,
    /// lookback-floating, lookback-fixed or lookback-garch (parameters in README.md).
    #[arg(long)]
    instrument: Option<String>,
    /// An --instrument's parameter as KEY=VALUE, repeatable (spot=100 strike=110 ...).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// Antithetic variates: each sample averages a path and its mirror image (--instrument).
    #[arg(long)]
    antithetic: bool,
    /// Also estimate delta, gamma and vega with their standard errors, on the same paths
    /// (--instrument; pathwise or finite differences, README.md "Greeks").
    #[arg(long)]
    greeks: bool,
    /// Compare the plain, antithetic and control-variate estimators at equal time: run
    /// --instrument plainly and with antithetic variates on the same seed and paths, and print
    /// each one's error, time, variance reduction and speed-up (README.md "Variance reduction").
    #[arg(long)]
    efficiency: bool,
    /// Randomised quasi-Monte Carlo (--instrument, one asset): Sobol' points (Joe and Kuo's
    /// directions) through a Brownian bridge and inversion, in --replicates independent
    /// randomisations whose spread gives the standard error; --paths is the total over them.
    #[arg(long)]
    qmc: bool,
    /// QMC replicates, in [2, 4096]; --paths must be a multiple (a power of two per replicate is best).
    #[arg(long, default_value_t = 16)]
    replicates: u32,
    /// QMC randomisation: owen (nested scrambling, hashed) or shift (a random digital shift).
    #[arg(long, value_enum, default_value_t = warpmc::qmc::Scramble::Owen)]
    scramble: warpmc::qmc::Scramble,
    /// QMC path construction: bridge (Brownian bridge) or increments (in time order).
    #[arg(long, value_enum, default_value_t = warpmc::qmc::Construction::Bridge)]
    construction: warpmc::qmc::Construction,
    /// Draw the price's convergence (plain, antithetic, control variate and QMC estimates with
    /// their 95% bands against the number of paths) and the payoff histogram into FILE.svg or
    /// FILE.png (--instrument).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Price the chapter's two options (the Asian basket and the GARCH lookback) and the
    /// validation instruments, each with --paths paths, in one table with references and
    /// z-scores (what `cargo xtask run-pricing` runs without arguments).
    #[arg(long)]
    suite: bool,
    /// Seed: path k uses stream k of this seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// `exact`: bit-identical on CPU and GPU; `fast`: hardware approximations, within a tolerance.
    #[arg(long, value_enum, default_value_t = Mode::Exact)]
    mode: Mode,
    /// The uniform generator feeding the paths (`warpmc info` lists them).
    #[arg(long, value_enum, default_value_t = GeneratorKind::default())]
    generator: GeneratorKind,
    /// The normal transform between the generator and the paths: box-muller (the chapter's),
    /// inversion, inversion-naive, polar or ziggurat (not wallace).
    #[arg(long, value_enum, default_value_t = Transform::BoxMuller)]
    transform: Transform,
    /// Initial price of asset a, in (0, 1e12].
    #[arg(long, default_value_t = 100.0, allow_negative_numbers = true)]
    spot_a: f64,
    /// Initial price of asset b, in (0, 1e12].
    #[arg(long, default_value_t = 100.0, allow_negative_numbers = true)]
    spot_b: f64,
    /// Volatility of asset a per year, in (0, 5].
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    vol_a: f64,
    /// Volatility of asset b per year, in (0, 5].
    #[arg(long, default_value_t = 0.3, allow_negative_numbers = true)]
    vol_b: f64,
    /// Correlation of the two assets, in [-1, 1].
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    corr: f64,
    /// Risk-free rate (drift and discounting), in [-1, 1].
    #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
    rate: f64,
    /// Maturity in years, in (0, 100].
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    maturity: f64,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    backend: BackendArgs,
}

#[derive(Args)]
struct GenerateArgs {
    /// The uniform generator (`warpmc info` lists them with their state words).
    #[arg(long, value_enum, default_value_t = GeneratorKind::default())]
    generator: GeneratorKind,
    #[arg(long, value_enum, default_value_t = Distribution::U32)]
    distribution: Distribution,
    /// Precision of uniforms and distributions: f32 (one word per uniform) or f64 (53 random
    /// bits from two words).
    #[arg(long, value_enum, default_value_t = Precision::F32)]
    precision: Precision,
    /// How uniforms become the distribution: normal and lognormal box-muller (default),
    /// inversion, inversion-naive, polar, ziggurat; exponential inversion (default), ziggurat;
    /// gamma box-muller (default), ziggurat (its normals).
    #[arg(long, value_enum)]
    transform: Option<Transform>,
    /// Thomas's warp pre-caching for the rejection transforms (normal/lognormal polar, gamma):
    /// each lane of a warp of 32 streams keeps a candidate it accepted while the warp waited
    /// for its slowest lane, as its next value.
    #[arg(long)]
    pre_cache: bool,
    /// Mean of --distribution normal (of the logarithm for lognormal).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    mean: f64,
    /// Standard deviation of --distribution normal (of the logarithm for lognormal), > 0.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    sd: f64,
    /// Shape of --distribution gamma, in (0, 1e9].
    #[arg(long, allow_negative_numbers = true)]
    shape: Option<f64>,
    /// Mean of --distribution poisson, in [0, 2^31]; rate of exponential (default 1), > 0.
    #[arg(long, allow_negative_numbers = true)]
    lambda: Option<f64>,
    /// The layout: warpmc's streams (--stream, --streams), or cuRAND's host-API layout
    /// (curandGenerate*, CURAND_ORDERING_PSEUDO_LEGACY or _DEFAULT) for xorwow, mrg32k3a-curand and
    /// philox4x32-10: cuRAND's values, bit for bit.
    #[arg(long, value_enum, default_value_t = OrderingArg::Streams)]
    ordering: OrderingArg,
    /// cuRAND's generator offset (curandSetGeneratorOffset), with a cuRAND ordering.
    #[arg(long, value_parser = parse_count, allow_negative_numbers = true)]
    offset: Option<i128>,
    /// Number of values, in [1, 2^50], or `inf`: without end, until the reader closes the pipe
    /// (`warpmc generate --count inf --format binary | dieharder -g 200 -a`).
    #[arg(long, value_parser = parse_count_or_inf, allow_negative_numbers = true)]
    count: GenCount,
    /// Values per block: the backend produces the next blocks while one is written. Rounded up
    /// to whole rows of 4 x --streams values; in [1, 2^28].
    #[arg(long, default_value = "2^22", value_parser = parse_count, allow_negative_numbers = true)]
    block: i128,
    /// Blocks in flight (buffers; on the GPU each page-locked with its own copy stream), in
    /// [2, 64].
    #[arg(long, default_value_t = warpmc::stream::DEFAULT_BUFFERS)]
    buffers: usize,
    /// A progress bar on stderr (with a finite --count).
    #[arg(long)]
    progress: bool,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// First stream (the stream of path k of a pricing job with the same seed is k).
    #[arg(long, default_value_t = 0)]
    stream: u64,
    /// Number of streams, interleaved in groups of four values, in [1, 2^26].
    #[arg(long, default_value = "1", value_parser = parse_count, allow_negative_numbers = true)]
    streams: i128,
    /// A raw generator state instead of a seed: one stream, comma-separated 32-bit words in the
    /// definition's order (hybrid-taus: z1,z2,z3,z4 with z1 >= 2, z2 >= 8, z3 >= 16).
    #[arg(long, value_parser = parse_state, conflicts_with_all = ["seed", "stream", "streams"])]
    state: Option<RawState>,
    /// Arithmetic of the distributions: exact (the same bits on the CPU and the GPU) or fast
    /// (the GPU's approximate instructions; f64 has exact mode only).
    #[arg(long, value_enum, default_value_t = Mode::Exact)]
    mode: Mode,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write here instead of stdout.
    #[arg(long, short)]
    output: Option<PathBuf>,
    #[command(flatten)]
    backend: BackendArgs,
}

/// Statistical test batteries on a generator's words: warpmc's own quick and long batteries, TestU01's
/// SmallCrush, Crush and BigCrush (through TestU01Drv) and dieharder. Exit status 0 when no test
/// failed, 3 when one did, 2 for an error (a missing battery program names its install command).
#[derive(Args)]
struct QualityArgs {
    /// The generator whose words are tested.
    #[arg(long, value_enum, default_value_t = GeneratorKind::default())]
    generator: GeneratorKind,
    /// The battery: quick (seconds), smallcrush (seconds), crush (an hour or more), bigcrush
    /// (many hours), dieharder (tens of minutes), long (PractRand's class: 2^30 words in tens of
    /// seconds on 2 cores, 2^37 in about 10 minutes on 16; see --words).
    #[arg(long, value_enum, default_value_t = warpmc::quality::Battery::Quick)]
    battery: warpmc::quality::Battery,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// 1: stream 0 of the seed. K > 1: streams 0..K one word of each in turn (word i is word
    /// i / K of stream i % K), the order K GPU threads consume their streams in.
    #[arg(long, default_value = "1", value_parser = parse_count, allow_negative_numbers = true)]
    interleave: i128,
    /// The quick battery's words per test (default 2^24; [2^20, 2^36]), or the long battery's
    /// words in all (default 2^30, 4 GiB; [2^24, 2^40]).
    #[arg(long, value_parser = parse_count, allow_negative_numbers = true)]
    words: Option<i128>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    /// Also write an external battery's own output to this file as it runs (for runs of hours).
    #[arg(long)]
    log: Option<PathBuf>,
    /// TestU01 batteries only: run each test of the battery in its own process, this many at a
    /// time, each on the words from their start ([1, 1024]; 1: the battery in one process on one
    /// unbroken stream, TestU01's own way).
    #[arg(long, default_value_t = 1)]
    jobs: u32,
    /// TestU01 batteries only: run only these tests (numbered from 1 as in TestU01's guide:
    /// "1-50,77"), each in its own process; for a battery split over several runs.
    #[arg(long, value_parser = parse_tests)]
    tests: Option<TestList>,
    /// With --log, TestU01 batteries: take the tests the log already holds from an earlier,
    /// stopped run of the same generator, seed, interleave and battery, and run only the rest
    /// (without it, a run test by test refuses to overwrite such a log).
    #[arg(long)]
    resume: bool,
}

/// The numbers of `--tests`.
#[derive(Clone, Debug)]
struct TestList(Vec<u32>);

/// `1-50,77`: numbers and inclusive ranges (the battery checks the range).
fn parse_tests(s: &str) -> Result<TestList, String> {
    let bad = || format!("'{s}' is not a list of test numbers and ranges (example: 1-50,77)");
    let mut out = Vec::new();
    for part in s.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().map_err(|_| bad())?, b.trim().parse::<u32>().map_err(|_| bad())?),
            None => {
                let v = part.trim().parse::<u32>().map_err(|_| bad())?;
                (v, v)
            }
        };
        if lo > hi || hi - lo > 10_000 {
            return Err(bad());
        }
        out.extend(lo..=hi);
    }
    Ok(TestList(out))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum OrderingArg {
    Streams,
    CurandLegacy,
    CurandDefault,
}

#[derive(Args)]
struct BenchArgs {
    /// Small sizes: a smoke run, not figures to report.
    #[arg(long)]
    quick: bool,
    /// Run only part of the benchmark.
    #[arg(long, value_enum, default_value_t = bench::Parts::All)]
    only: bench::Parts,
    /// Write the full results as JSON here.
    #[arg(long)]
    json_out: Option<PathBuf>,
    /// Write the Markdown table here.
    #[arg(long)]
    markdown_out: Option<PathBuf>,
}

/// A count: decimal with optional underscores, `AeB` (1e6) or `2^N`. Signed, so that a
/// negative count reaches the range check and gets its message.
fn parse_count(s: &str) -> Result<i128, String> {
    let t = s.trim().replace('_', "");
    let v = if let Some(e) = t.strip_prefix("2^") {
        e.parse::<u32>().ok().filter(|&e| e < 100).map(|e| 1i128 << e)
    } else if t.contains(['e', 'E']) {
        t.parse::<f64>().ok().filter(|v| v.fract() == 0.0 && v.abs() < 1e30).map(|v| v as i128)
    } else {
        t.parse::<i128>().ok()
    };
    v.ok_or_else(|| format!("'{s}' is not a whole number (examples: 1048576, 1e6, 2^20)"))
}

/// `--count`: a whole number, or `None` for `inf`.
#[derive(Clone, Copy, Debug)]
struct GenCount(Option<i128>);

fn parse_count_or_inf(s: &str) -> Result<GenCount, String> {
    if matches!(s.trim(), "inf" | "infinite" | "unbounded") {
        return Ok(GenCount(None));
    }
    parse_count(s).map(|v| GenCount(Some(v))).map_err(|e| format!("{e}, or inf"))
}

/// A count flag's value as `u64`, or the range error naming it.
fn count_in(field: &'static str, v: i128, lo: u64, hi: u64, allowed: &str) -> warpmc::Result<u64> {
    u64::try_from(v).ok().filter(|x| (lo..=hi).contains(x)).ok_or_else(|| Error::InvalidParameter {
        field,
        value: v.to_string(),
        allowed: allowed.to_string(),
    })
}

/// The words of `--state` (one argument; clap would read a bare `Vec` as repeated values).
#[derive(Clone, Debug)]
struct RawState(Vec<u32>);

/// Comma-separated `u32` words (the generator checks how many and their values).
fn parse_state(s: &str) -> Result<RawState, String> {
    s.split(',')
        .map(|p| p.trim().parse::<u32>())
        .collect::<Result<Vec<u32>, _>>()
        .map(RawState)
        .map_err(|_| format!("'{s}' is not comma-separated 32-bit unsigned integers (e.g. z1,z2,z3,z4)"))
}

/// The CLI's rendering of a library error: parameters are named as flags.
fn render(e: &Error) -> String {
    match e {
        Error::InvalidParameter { field, value, allowed } if allowed.starts_with(['[', '(']) => {
            format!("invalid --{}: {value} is outside the allowed range {allowed}", field.replace('_', "-"))
        }
        Error::InvalidParameter { field, value, allowed } => {
            format!("invalid --{}: {value}: expected {allowed}", field.replace('_', "-"))
        }
        other => other.to_string(),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Under mpirun (the `mpi` feature), `price` and `integrate` split their work between the
    // ranks; MPI lives until the end of main, and only rank 0 writes to standard output.
    #[cfg(feature = "mpi")]
    let _universe = if warpmc::mpi_split::launched_by_mpirun() && matches!(cli.command, Command::Price(_) | Command::Integrate(_)) {
        match warpmc::mpi_split::initialize() {
            Ok(u) => {
                if warpmc::mpi_split::rank() != 0 {
                    warpmc::mpi_split::silence_stdout();
                }
                Some(u)
            }
            Err(e) => {
                eprintln!("error: {}", render(&e));
                return ExitCode::from(2);
            }
        }
    } else {
        None
    };
    let result = match cli.command {
        Command::Price(a) => price(a),
        Command::Generate(a) => generate(a),
        Command::Demo(DemoCommand::Pipeline(a)) => demo_pipeline(a),
        Command::Bench(a) => bench_cmd(a),
        Command::Quality(a) => quality(a),
        Command::Integrate(a) => integrate_cmd(a),
        Command::Info => info(),
        Command::CheckKernels => check_kernels(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", render(&e));
            // 3: the run finished and printed its report, but the report's own check failed
            // (a price's closed-form check, or a quality battery).
            ExitCode::from(if matches!(e, Error::CheckFailed(_) | Error::BatteryFailed(_)) { 3 } else { 2 })
        }
    }
}

fn integrate_cmd(a: IntegrateArgs) -> warpmc::Result<()> {
    use warpmc::integrands::{Family, IntegrandSpec};
    use warpmc::integrate::{Integrand, IntegrateReport, IntegrateSpec, Runners, integrate};
    let mut is = IntegrandSpec::new(Family::parse(&a.integrand)?, a.dim)?;
    for p in &a.params {
        is.set(p)?;
    }
    let mut spec = IntegrateSpec::new(a.dim);
    spec.generator = a.generator;
    spec.seed = a.seed;
    spec.warmup = a.warmup;
    spec.bins = a.bins;
    spec.strata = a.strata;
    spec.alpha = a.alpha;
    spec.beta = a.beta;
    spec.target_rel_error = a.target_rel_error;
    let evals = a.evals.map(|v| count_in("evals", v, 1000, 1 << 50, "[1000, 2^50]")).transpose()?;
    spec.max_evals = evals;
    spec.max_iterations = a.iterations.unwrap_or(if a.target_rel_error.is_some() { 1000 } else { 12 });
    spec.evals_per_iteration = match (a.evals_per_iteration, evals) {
        (Some(v), _) => count_in("evals_per_iteration", v, 1000, 1 << 40, "[1000, 2^40]")?,
        (None, Some(n)) if a.target_rel_error.is_none() => (n / spec.max_iterations.max(1) as u64).max(1),
        _ => 1_000_000,
    };
    let plot_axes = match a.plot_axes.split_once(',').map(|(i, j)| (i.trim().parse::<usize>(), j.trim().parse::<usize>())) {
        Some((Ok(i), Ok(j))) => (i, j),
        _ => {
            return Err(Error::InvalidParameter {
                field: "plot_axes",
                value: a.plot_axes.clone(),
                allowed: "two axis numbers I,J below dim".into(),
            });
        }
    };
    if let Some(path) = &a.plot {
        warpmc::integrate_plot::check(path, plot_axes, a.dim)?;
    }
    let runners = Runners::open(&a.backend.options(), a.gpus.as_deref())?;
    let params = is.params();
    // Under mpirun (the `mpi` feature), the ranks are the outer level of the split and only
    // rank 0 prints.
    #[cfg(feature = "mpi")]
    let mpi_runner = warpmc::mpi_split::active().then(|| warpmc::mpi_split::MpiRunner::new(runners.list()));
    #[cfg(feature = "mpi")]
    if let Some(m) = &mpi_runner {
        m.check_same_everywhere(&serde_json::to_vec(&(&is, &spec)).expect("settings serialise"))?;
    }
    #[cfg(feature = "mpi")]
    let (list, rank0, ranks): (Vec<&dyn warpmc::integrate::VegasRunner>, bool, usize) = match &mpi_runner {
        Some(m) => (vec![m], m.rank() == 0, m.size()),
        None => (runners.list(), true, 1),
    };
    #[cfg(not(feature = "mpi"))]
    let (list, rank0, ranks) = (runners.list(), true, 1usize);
    let verbose = a.verbose && rank0;
    let r = integrate(&spec, &Integrand::Builtin(&params), &list, |it| {
        if verbose {
            eprintln!(
                "iteration: {:.10e} ± {:.3e} ({} evals, {:.3} s{}{})",
                it.estimate,
                it.std_error,
                it.evals,
                it.seconds,
                if it.kept { "" } else { ", warm-up" },
                if it.rescaled > 0 { ", rescaled" } else { "" }
            );
        }
    })?;
    let mut report = IntegrateReport::new(&is, &spec, &list, &r);
    report.ranks = ranks;
    if a.kernel_rates {
        #[cfg(feature = "gpu")]
        if let Runners::Gpu(g) = &runners {
            report.kernel_rates = Some(warpmc::integrate::kernel_rates(&g[0], &spec, &params, &r)?);
        }
        if report.kernel_rates.is_none() {
            return Err(Error::InvalidParameter {
                field: "kernel_rates",
                value: "set".into(),
                allowed: "a GPU backend (--backend gpu or auto with a GPU)".into(),
            });
        }
    }
    if !rank0 {
        return Ok(());
    }
    if let Some(path) = &a.plot {
        let title = format!("warpmc integrate: {} in {} dimensions, {}", is.family.name(), is.dim, report.backend);
        warpmc::integrate_plot::draw(path, &title, &r, report.exact, plot_axes)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("the report serialises"));
        return Ok(());
    }
    println!("integrand  {} in {} dimensions", is.family.name(), is.dim);
    println!("estimate   {:.12e} ± {:.3e} (relative {:.2e})", report.estimate, report.std_error, report.rel_error);
    println!("exact      {:.12e}   z = {:+.2}", report.exact, report.z);
    println!("chi2/dof   {:.3} ({} dof)", report.chi2_per_dof, report.dof);
    println!(
        "evals      {} in {} iterations ({} warm-up), stopped by {}",
        report.evals, report.iterations, spec.warmup, report.stopped_by
    );
    println!(
        "plan       {} strata per axis ({} hypercubes), {} grid increments per axis, generator {}",
        report.strata,
        report.cubes,
        spec.bins,
        spec.generator.name()
    );
    println!(
        "wall       {:.3} s, {:.3e} evals/s on {}",
        report.wall_seconds, report.evals_per_second, report.backend
    );
    if let Some(k) = &report.kernel_rates {
        println!(
            "kernels    VEGAS {:.3e} evals/s, plain uniform points {:.3e} evals/s: {:.1}% ({} points)",
            k.vegas,
            k.plain,
            100.0 * k.ratio,
            k.points
        );
    }
    Ok(())
}

/// The backend of `warpmc price`: `a`'s, split between the MPI ranks under mpirun (the `mpi`
/// feature).
fn open_price_backend(a: &BackendArgs) -> warpmc::Result<Box<dyn warpmc::backend::Executor>> {
    let exec = backend::open(&a.options())?;
    #[cfg(feature = "mpi")]
    if warpmc::mpi_split::active() {
        return Ok(Box::new(warpmc::mpi_split::MpiExecutor::new(exec)));
    }
    Ok(exec)
}

fn price(a: PriceArgs) -> warpmc::Result<()> {
    if let Some(path) = &a.job {
        return price_job_file(&a, path);
    }
    if a.suite {
        return price_suite(&a);
    }
    if let Some(name) = a.instrument.as_deref() {
        return price_instrument(&a, name);
    }
    if !a.params.is_empty() || a.antithetic || a.greeks || a.efficiency || a.qmc || a.plot.is_some() {
        return Err(Error::InvalidParameter {
            field: "param",
            value: if a.antithetic {
                "--antithetic".into()
            } else if a.greeks {
                "--greeks".into()
            } else if a.efficiency {
                "--efficiency".into()
            } else if a.qmc {
                "--qmc".into()
            } else if a.plot.is_some() {
                "--plot".into()
            } else {
                a.params.join(" ")
            },
            allowed: "nothing without --instrument: the chapter's basket takes --spot-a, --vol-a and the other flags \
                      (--instrument asian-basket takes --param, --antithetic, --greeks, --efficiency and --plot)"
                .into(),
        });
    }
    let steps_arg = a.steps.unwrap_or(256);
    let steps = u32::try_from(steps_arg).map_err(|_| Error::InvalidParameter {
        field: "steps",
        value: steps_arg.to_string(),
        allowed: format!("[1, {}]", warpmc::pricing::limits::STEPS_MAX),
    })?;
    let job = PricingJob {
        option: AsianBasket {
            spot_a: a.spot_a,
            spot_b: a.spot_b,
            vol_a: a.vol_a,
            vol_b: a.vol_b,
            corr: a.corr,
            rate: a.rate,
            maturity: a.maturity,
        },
        steps,
        paths: count_in("paths", a.paths, 2, warpmc::pricing::limits::PATHS_MAX, "[2, 2^40]")?,
        seed: a.seed,
        mode: a.mode,
        generator: a.generator,
        transform: a.transform,
    };
    job.validate()?;
    let exec = open_price_backend(&a.backend)?;
    let bar = (!a.json && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(job.paths);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {wide_bar} {pos}/{len} paths, {eta} left")
                .expect("a valid template"),
        );
        bar
    });
    let report = price_asian_basket_with_progress(exec.as_ref(), &job, &mut |done, _| {
        if let Some(b) = &bar {
            b.set_position(done);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("serialisable report"));
    } else {
        print_report(&report);
    }
    if report.check.status == CheckStatus::Failed {
        return Err(Error::CheckFailed(report.check.note.clone().unwrap_or_default()));
    }
    Ok(())
}

/// `warpmc price --suite`: the chapter's two options and the validation instruments, one table.
fn price_suite(a: &PriceArgs) -> warpmc::Result<()> {
    use warpmc::instruments::{Instrument, InstrumentName, RunSettings, price};
    if a.instrument.is_some()
        || !a.params.is_empty()
        || a.steps.is_some()
        || a.antithetic
        || a.greeks
        || a.efficiency
        || a.qmc
        || a.plot.is_some()
    {
        return Err(Error::InvalidParameter {
            field: "suite",
            value: "--suite".into(),
            allowed: "--suite with --paths, --seed, --mode, --generator, --transform, --backend and --json only".into(),
        });
    }
    let paths = count_in("paths", a.paths, 2, warpmc::pricing::limits::PATHS_MAX, "[2, 2^40]")?;
    let exec = open_price_backend(&a.backend)?;
    let settings = RunSettings {
        paths,
        seed: a.seed,
        mode: a.mode,
        generator: a.generator,
        transform: a.transform,
        antithetic: false,
        greeks: false,
        qmc: None,
    };
    settings.validate(true)?;
    // The chapter's basket, with its defaults.
    let job = PricingJob {
        option: AsianBasket::default(),
        paths,
        steps: 256,
        seed: a.seed,
        mode: a.mode,
        generator: a.generator,
        transform: a.transform,
    };
    let basket = price_asian_basket_with_progress(exec.as_ref(), &job, &mut |_, _| {})?;
    let params = |kv: &[(&str, &str)]| -> std::collections::BTreeMap<String, String> {
        kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    let contracts: Vec<(&str, InstrumentName, std::collections::BTreeMap<String, String>)> = vec![
        ("the chapter's GARCH lookback", InstrumentName::LookbackGarch, params(&[])),
        (
            "GARCH lookback, a1 = a2 = 0",
            InstrumentName::LookbackGarch,
            params(&[("a1", "0"), ("a2", "0"), ("a0", "0.0001")]),
        ),
        ("European call", InstrumentName::EuropeanCall, params(&[])),
        ("European put, dividend 2%", InstrumentName::EuropeanPut, params(&[("strike", "95"), ("dividend", "0.02")])),
        ("geometric Asian, 64 dates", InstrumentName::AsianGeometric, params(&[("steps", "64")])),
        ("arithmetic Asian, 64 dates", InstrumentName::AsianArithmetic, params(&[("steps", "64")])),
        ("floating lookback, 250 dates", InstrumentName::LookbackFloating, params(&[("steps", "250")])),
        ("fixed lookback, 250 dates", InstrumentName::LookbackFixed, params(&[("steps", "250")])),
        (
            "Asian basket, 4 assets, average payoff, 64 dates",
            InstrumentName::AsianBasket,
            params(&[("payoff", "average"), ("assets", "4"), ("corr", "0.3"), ("steps", "64")]),
        ),
        ("European call, QMC", InstrumentName::EuropeanCall, params(&[])),
        ("geometric Asian, 64 dates, QMC", InstrumentName::AsianGeometric, params(&[("steps", "64")])),
    ];
    // The QMC rows: 16 replicates of Sobol' points, on the largest multiple of 16 paths.
    let qmc =
        RunSettings { paths: paths - paths % 16, qmc: Some(warpmc::qmc::QmcSettings::default()), ..settings.clone() };
    let mut reports = Vec::new();
    for (label, name, p) in &contracts {
        let i = Instrument::new(*name, p)?;
        if !a.json {
            eprintln!("pricing {label} ...");
        }
        let s = if label.ends_with("QMC") { &qmc } else { &settings };
        reports.push((*label, price(exec.as_ref(), &i, s)?));
    }
    if a.json {
        let mut all = vec![serde_json::to_value(&basket).expect("serialisable report")];
        all.extend(reports.iter().map(|(_, r)| serde_json::to_value(r).expect("serialisable report")));
        println!("{}", serde_json::to_string_pretty(&all).expect("serialisable reports"));
        return Ok(());
    }
    println!(
        "warpmc price --suite: {} paths each, seed {}, {} mode, {}, {}; backend {}: {}",
        paths,
        a.seed,
        a.mode.name(),
        a.generator,
        a.transform.name(),
        exec.kind(),
        exec.description()
    );
    println!();
    println!("| instrument | price | std error | reference | z | time s | paths/s |");
    println!("|---|---:|---:|---|---:|---:|---:|");
    let z = |z: Option<f64>| z.map_or("".to_string(), |z| format!("{z:+.2}"));
    println!(
        "| Asian basket (Listing 37-8), {} dates | {} | {} | none; check quantity z {} | | {:.2} | {:.3e} |",
        basket.steps,
        num(basket.price),
        num(basket.std_error),
        z(basket.check.z_score),
        basket.wall_seconds,
        basket.paths_per_second
    );
    for (label, r) in &reports {
        let reference = match (r.reference, r.control_variate) {
            (Some(rf), _) => format!("{} ({})", num(rf.price), rf.kind),
            (None, Some(cv)) if r.contract.basket.is_some() => format!("none; control's check z {:+.2}", cv.check_z),
            (None, _) => "none".to_string(),
        };
        println!(
            "| {label} | {} | {} | {reference} | {} | {:.2} | {:.3e} |",
            num(r.price),
            num(r.std_error),
            z(r.z),
            r.wall_seconds,
            r.paths_per_second
        );
    }
    println!();
    println!(
        "z = (price - reference) / std error; approximate (BGK) references carry their own error (0.06% at 250 dates). \
         The chapter's basket's check quantity is E[average - final] against its closed form; the 4-asset basket's is \
         its geometric control against its closed form. QMC rows: {} paths in 16 replicates of Sobol' points (bridge, \
         Owen scrambling), their std error from the replicates.",
        qmc.paths
    );
    Ok(())
}

/// `warpmc price --instrument NAME --param key=value ...`.
fn price_instrument(a: &PriceArgs, name: &str) -> warpmc::Result<()> {
    use warpmc::instruments::{Instrument, InstrumentName, RunSettings, price_with_progress};
    let name = InstrumentName::from_name(name)?;
    // The basket's own flags mean nothing here: refuse them rather than ignore them.
    let basket = AsianBasket::default();
    for (flag, v, d) in [
        ("--spot-a", a.spot_a, basket.spot_a),
        ("--spot-b", a.spot_b, basket.spot_b),
        ("--vol-a", a.vol_a, basket.vol_a),
        ("--vol-b", a.vol_b, basket.vol_b),
        ("--corr", a.corr, basket.corr),
        ("--rate", a.rate, basket.rate),
        ("--maturity", a.maturity, basket.maturity),
    ] {
        if v.to_bits() != d.to_bits() {
            return Err(Error::InvalidParameter {
                field: "param",
                value: format!("{flag} {v}"),
                allowed: format!("--param KEY=VALUE for {} ({flag} is the Asian basket's)", name.name()),
            });
        }
    }
    let mut params = std::collections::BTreeMap::new();
    for kv in &a.params {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(Error::InvalidParameter { field: "param", value: kv.clone(), allowed: "KEY=VALUE".into() });
        };
        if params.insert(k.trim().to_string(), v.trim().to_string()).is_some() {
            return Err(Error::InvalidParameter {
                field: "param",
                value: kv.clone(),
                allowed: format!("each key once ({} is repeated)", k.trim()),
            });
        }
    }
    if let Some(steps) = a.steps
        && params.insert("steps".to_string(), steps.to_string()).is_some()
    {
        return Err(Error::InvalidParameter {
            field: "steps",
            value: steps.to_string(),
            allowed: "--steps or --param steps=N, not both".into(),
        });
    }
    // A parameter's error names it as the user wrote it: `--param vol=-1`.
    let instrument = Instrument::new(name, &params).map_err(|e| match e {
        Error::InvalidParameter { field, value, allowed }
            if warpmc::instruments::PARAMS.iter().any(|p| p.0 == field) && !(field == "steps" && a.steps.is_some()) =>
        {
            Error::InvalidParameter { field: "param", value: format!("{field}={value}"), allowed }
        }
        other => other,
    })?;
    let settings = RunSettings {
        paths: count_in("paths", a.paths, 2, warpmc::pricing::limits::PATHS_MAX, "[2, 2^40]")?,
        seed: a.seed,
        mode: a.mode,
        generator: a.generator,
        transform: a.transform,
        antithetic: a.antithetic,
        greeks: a.greeks,
        qmc: a.qmc.then_some(warpmc::qmc::QmcSettings {
            replicates: a.replicates,
            scramble: a.scramble,
            construction: a.construction,
        }),
    };
    settings.validate_for(&instrument)?;
    let exec = instrument_backend(a)?;
    if a.efficiency {
        return print_efficiency(a, exec.as_ref(), &instrument, &settings);
    }
    let bar = (!a.json && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(settings.paths);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {wide_bar} {pos}/{len} samples, {eta} left")
                .expect("a valid template"),
        );
        bar
    });
    let r = price_with_progress(exec.as_ref(), &instrument, &settings, &mut |done, _| {
        if let Some(b) = &bar {
            b.set_position(done);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let greeks = if a.greeks { Some(warpmc::greeks::greeks(exec.as_ref(), &instrument, &settings)?) } else { None };
    if let Some(path) = &a.plot {
        draw_plot(path, exec.as_ref(), &instrument, &settings, &r, a.json)?;
    }
    if a.json {
        let mut v = serde_json::to_value(&r).expect("serialisable report");
        if let Some(g) = &greeks {
            v["greeks"] = serde_json::to_value(&g.greeks).expect("serialisable Greeks");
        }
        println!("{}", serde_json::to_string_pretty(&v).expect("serialisable report"));
    } else {
        print_instrument_report(&r);
        if let Some(g) = &greeks {
            print_greeks(g);
        }
    }
    Ok(())
}

/// `--plot FILE`: the estimators' convergence and the payoff histogram of `i` (see
/// `warpmc::convergence`), drawn by `warpmc::plot`.
fn draw_plot(
    path: &std::path::Path,
    exec: &dyn warpmc::backend::Executor,
    i: &warpmc::instruments::Instrument,
    s: &warpmc::instruments::RunSettings,
    r: &warpmc::instruments::InstrumentReport,
    quiet: bool,
) -> warpmc::Result<()> {
    // The format is checked before the runs: a wrong extension costs nothing.
    warpmc::plot::check_path(path)?;
    if !quiet {
        eprintln!("plotting: the plain, antithetic, control-variate and QMC estimators up to {} paths ...", s.paths);
    }
    let series = warpmc::convergence::convergence(exec, i, s)?;
    let sample = s.paths.min(1 << 16);
    let payoffs = warpmc::convergence::payoff_sample(i, s, sample);
    let plot = warpmc::plot::PricePlot {
        title: format!("{} ({} dates, seed {}, {})", r.instrument, r.steps, r.seed, r.backend),
        series,
        reference: r.reference.map(|rf| (rf.price, rf.kind.to_string())),
        payoffs: &payoffs,
        payoff_caption: format!("discounted payoffs of the first {sample} paths"),
    };
    warpmc::plot::draw(path, &plot)?;
    if !quiet {
        eprintln!("plot written to {}", path.display());
    }
    Ok(())
}

/// `--efficiency`: the plain, antithetic and control-variate estimators at equal time.
fn print_efficiency(
    a: &PriceArgs,
    exec: &dyn warpmc::backend::Executor,
    i: &warpmc::instruments::Instrument,
    s: &warpmc::instruments::RunSettings,
) -> warpmc::Result<()> {
    if a.antithetic || a.greeks || a.qmc || a.plot.is_some() {
        return Err(Error::InvalidParameter {
            field: "efficiency",
            value: if a.antithetic {
                "--antithetic".into()
            } else if a.greeks {
                "--greeks".into()
            } else if a.qmc {
                "--qmc".into()
            } else {
                "--plot".into()
            },
            allowed: "--efficiency alone: it runs the plain, antithetic and QMC estimators itself".into(),
        });
    }
    let r = warpmc::efficiency::efficiency(exec, i, s)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).expect("serialisable report"));
        return Ok(());
    }
    println!(
        "warpmc: {} estimators at equal time ({} samples each, seed {}, {})",
        r.instrument, r.paths, r.seed, r.backend
    );
    println!(
        "| estimator | price | std error | paths simulated | time s | variance reduction per path | speed-up at equal time |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for e in &r.estimators {
        println!(
            "| {} | {} | {} | {} | {:.3} | {:.2} | {:.2} |",
            e.estimator,
            num(e.price),
            num(e.std_error),
            e.paths_simulated,
            e.wall_seconds,
            e.variance_reduction,
            e.speedup_at_equal_time
        );
    }
    println!("speed-up = (se_plain^2 x t_plain) / (se^2 x t); the control variate comes from the plain run itself.");
    if let Some(note) = &r.qmc_note {
        println!("{note}");
    }
    Ok(())
}

fn print_greeks(g: &warpmc::greeks::GreeksReport) {
    use warpmc::greeks::Method;
    println!("  Greeks ({:.3} s, same paths and seed)", g.wall_seconds);
    for e in &g.greeks {
        let method = match (e.method, e.bump) {
            (Method::Pathwise, _) => "pathwise".to_string(),
            (Method::PathwiseDifference, Some(h)) => format!("difference of pathwise deltas, h = {h}"),
            (_, Some(h)) => format!("central difference, h = {h}"),
            (_, None) => "central difference".to_string(),
        };
        let reference = match (e.reference, e.z) {
            (Some(r), Some(z)) => format!("; closed form {}, z = {z:+.2}", num(r)),
            (Some(r), None) => format!("; closed form {}", num(r)),
            _ => String::new(),
        };
        println!("  {:<12} {} ± {} ({method}{reference})", e.greek, num(e.value), num(e.std_error));
    }
}

/// The backend the one-asset instruments run on (`auto`: the GPU where one opens).
fn instrument_backend(a: &PriceArgs) -> warpmc::Result<Box<dyn warpmc::backend::Executor>> {
    open_price_backend(&a.backend)
}

/// `warpmc price JOB.toml`: every instrument of the file, in order.
fn price_job_file(a: &PriceArgs, path: &std::path::Path) -> warpmc::Result<()> {
    if a.instrument.is_some()
        || !a.params.is_empty()
        || a.steps.is_some()
        || a.antithetic
        || a.greeks
        || a.efficiency
        || a.qmc
        || a.plot.is_some()
    {
        return Err(Error::InvalidParameter {
            field: "job",
            value: path.display().to_string(),
            allowed:
                "a job file alone: --instrument, --param, --steps, --antithetic, --greeks and --qmc go in the file \
                      (--efficiency and --plot take one --instrument)"
                    .into(),
        });
    }
    let jobs = warpmc::jobfile::read(path)?;
    let exec = instrument_backend(a)?;
    let mut reports = Vec::with_capacity(jobs.len());
    for (i, job) in jobs.iter().enumerate() {
        let bar = (!a.json && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(job.settings.paths);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {msg} {wide_bar} {pos}/{len} samples, {eta} left")
                    .expect("a valid template"),
            );
            bar.set_message(format!("{}/{} {}", i + 1, jobs.len(), job.instrument.name.name()));
            bar
        });
        let mut progress = |done: u64, _: u64| {
            if let Some(b) = &bar {
                b.set_position(done);
            }
        };
        if !a.json && i > 0 {
            println!();
        }
        let instrument = &job.instrument;
        let r = warpmc::instruments::price_with_progress(exec.as_ref(), instrument, &job.settings, &mut progress)?;
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        let greeks = if job.settings.greeks {
            Some(warpmc::greeks::greeks(exec.as_ref(), instrument, &job.settings)?)
        } else {
            None
        };
        if !a.json {
            print_instrument_report(&r);
            if let Some(g) = &greeks {
                print_greeks(g);
            }
        }
        let mut value = serde_json::to_value(&r).expect("serialisable report");
        if let Some(g) = &greeks {
            value["greeks"] = serde_json::to_value(&g.greeks).expect("serialisable Greeks");
        }
        reports.push(value);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&reports).expect("serialisable reports"));
    }
    Ok(())
}

fn print_instrument_report(r: &warpmc::instruments::InstrumentReport) {
    use warpmc::instruments::InstrumentName;
    let c = &r.contract;
    let name = c.name;
    println!("warpmc: {}", r.instrument);
    let list = |v: &[f64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
    let mut terms = match &c.basket {
        Some(b) => {
            let n = b.assets();
            let off: Vec<f64> =
                (0..n).flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| b.correlation[i][j])).collect();
            let corr = if n == 1 {
                "one asset".to_string()
            } else if off.windows(2).all(|w| w[0] == w[1]) {
                format!("correlation {} for every pair", off[0])
            } else {
                format!("correlation matrix [{}]", b.correlation.iter().map(|r| list(r)).collect::<Vec<_>>().join("; "))
            };
            vec![
                format!("{n} assets, payoff {}", b.payoff.name()),
                format!("spots [{}]", list(&b.spots)),
                format!("vols [{}]", list(&b.vols)),
                format!("dividends [{}]", list(&b.dividends)),
                format!("weights [{}]", list(&b.weights)),
                corr,
            ]
        }
        None => vec![format!("spot {}", c.spot)],
    };
    let average_basket = c.basket.as_ref().is_some_and(|b| b.payoff == warpmc::basket::BasketPayoff::Average);
    for (k, v) in [("strike", c.strike), ("barrier", c.barrier)] {
        if name.params().contains(&k) && (c.basket.is_none() || average_basket) {
            terms.push(format!("{k} {v}"));
        }
    }
    terms.push(format!("rate {}", c.rate));
    if c.basket.is_some() {
        // The assets' terms are above.
    } else if name == InstrumentName::LookbackGarch {
        let [a0, a1, a2, v0, e0] = c.garch;
        terms.push(format!("A0 {a0}, A1 {a1}, A2 {a2}, vol0 {v0}, eps0 {e0}"));
    } else {
        terms.push(format!("vol {}, dividend {}", c.vol, c.dividend));
    }
    terms.push(format!("maturity {} y", c.maturity));
    if name.params().contains(&"option") && (c.basket.is_none() || average_basket) {
        terms.push((if c.put { "put" } else { "call" }).to_string());
    }
    if name == InstrumentName::AsianBarrier {
        terms.push(format!("knock-out {}", if c.barrier_up { "up" } else { "down" }));
    }
    println!("  contract     {}", terms.join(", "));
    println!("  backend      {}: {}", r.backend, r.device);
    println!("  paths        {}{}", r.paths, if r.antithetic { " (antithetic pairs)" } else { "" });
    println!("  steps        {}", r.steps);
    println!("  seed         {}", r.seed);
    println!("  mode         {}", r.mode.name());
    match &r.qmc {
        Some(q) => println!(
            "  sampler      randomised QMC: Sobol' points ({}), {} scrambling, {} construction, inversion; {} \
             replicates of {} points",
            q.directions,
            q.scramble.name(),
            q.construction.name(),
            q.replicates,
            q.points_per_replicate
        ),
        None => {
            println!("  generator    {}", r.generator);
            println!("  transform    {}", r.transform.name());
        }
    }
    println!("  price        {}", num(r.price));
    println!("  std error    {}", num(r.std_error));
    println!("  95% CI       [{}, {}]", num(r.ci95[0]), num(r.ci95[1]));
    match r.control_variate {
        Some(cv) => println!(
            "  with control variate  {} ± {} (β {:.4}, variance / {:.1}; control's check z = {:+.2})",
            num(cv.price),
            num(cv.std_error),
            cv.beta,
            cv.variance_reduction,
            cv.check_z
        ),
        None if r
            .contract
            .basket
            .as_ref()
            .is_some_and(|b| b.assets() > 2 && b.payoff == warpmc::basket::BasketPayoff::Chapter) =>
        {
            println!(
                "  with control variate  none (the chapter's payoff has a closed-form control for one or two assets only)"
            )
        }
        None => println!("  with control variate  none (the control has no variance here)"),
    }
    match (r.reference, r.z) {
        (Some(rf), Some(z)) => println!("  reference    {} ({}), z = {z:+.2}", num(rf.price), rf.kind),
        (Some(rf), None) => println!("  reference    {} ({})", num(rf.price), rf.kind),
        _ => println!("  reference    none (no closed form for this contract)"),
    }
    println!("  wall time    {:.3} s", r.wall_seconds);
    println!("  paths/s      {:.4e}", r.paths_per_second);
    println!("  steps/s      {:.4e}", r.steps_per_second);
}

/// A money amount with six decimals, or six significant digits in scientific notation where
/// six decimals would hide it (a price of 3e-8 must not print as 0.000000).
fn num(x: f64) -> String {
    if x == 0.0 || (1e-3..1e12).contains(&x.abs()) { format!("{x:.6}") } else { format!("{x:.5e}") }
}

fn print_report(r: &PriceReport) {
    let o = &r.option;
    println!("warpmc: Asian basket option (GPU Gems 3, Listing 37-8)");
    println!(
        "  option       spots {} / {}, vols {} / {}, corr {}, rate {}, maturity {} y",
        o.spot_a, o.spot_b, o.vol_a, o.vol_b, o.corr, o.rate, o.maturity
    );
    println!("  backend      {}: {}", r.backend, r.device);
    println!("  paths        {}", r.paths);
    println!("  steps        {}", r.steps);
    println!("  seed         {}", r.seed);
    println!("  mode         {}", r.mode.name());
    println!("  generator    {}", r.generator);
    println!("  transform    {}", r.transform.name());
    println!("  price        {}", num(r.price));
    println!("  std error    {}", num(r.std_error));
    println!("  95% CI       [{}, {}]", num(r.ci95[0]), num(r.ci95[1]));
    println!("  rounding     at most {:.3e} (single-precision paths)", r.rounding_bound);
    if let Some(note) = &r.precision_note {
        println!("               {note}");
    }
    match (r.price_control_variate, r.std_error_control_variate) {
        (Some(p), Some(se)) => println!("  with control variate  {} ± {} (std error)", num(p), num(se)),
        _ => println!("  with control variate  {}", r.control_variate_note.as_deref().unwrap_or("not reported")),
    }
    let c = &r.check;
    let z = c.z_score.map_or_else(|| "no z: zero standard error".to_string(), |z| format!("z = {z:+.2}"));
    println!(
        "  check        E[average - final], unfloored: MC {} vs closed form {} ({z}): {}",
        num(c.monte_carlo),
        num(c.closed_form),
        match c.status {
            CheckStatus::Passed => "passed",
            CheckStatus::Failed => "FAILED",
            CheckStatus::NoInformation => "no information",
        }
    );
    if let Some(note) = &c.note {
        println!("               {note}");
    }
    println!("  wall time    {:.3} s", r.wall_seconds);
    println!("  paths/s      {:.4e}", r.paths_per_second);
    println!("  MSteps/s     {:.1}", r.msteps_per_second);
}

fn generate(a: GenerateArgs) -> warpmc::Result<()> {
    let count =
        a.count.0.map(|c| count_in("count", c, 1, warpmc::generate::COUNT_MAX, "[1, 2^50], or inf")).transpose()?;
    let block = count_in("block", a.block, 1, warpmc::stream::BLOCK_MAX, "[1, 2^28]")?;
    let streams = count_in("streams", a.streams, 1, warpmc::generate::STREAMS_MAX, "[1, 2^26]")?;
    let init = match &a.state {
        Some(RawState(words)) => GenerateSpec::explicit(a.generator, words)?,
        None => GenerateSpec::seeded(a.generator, a.seed, a.stream, streams),
    };
    let offset = a.offset.map(|o| count_in("offset", o, 0, u64::MAX, "[0, 2^64 - 1]")).transpose()?;
    let curand = match (a.ordering, offset) {
        (OrderingArg::Streams, None) => None,
        (OrderingArg::Streams, Some(o)) => {
            return Err(Error::InvalidParameter {
                field: "offset",
                value: o.to_string(),
                allowed: "an offset with --ordering curand-legacy or curand-default (with streams, use --stream)"
                    .into(),
            });
        }
        (OrderingArg::CurandLegacy, o) => {
            Some(CurandLayout { ordering: CurandOrdering::Legacy, offset: o.unwrap_or(0) })
        }
        (OrderingArg::CurandDefault, o) => {
            Some(CurandLayout { ordering: CurandOrdering::Default, offset: o.unwrap_or(0) })
        }
    };
    let spec = GenerateSpec {
        curand,
        distribution: a.distribution,
        dist: DistSpec {
            transform: a.transform,
            mean: a.mean,
            sd: a.sd,
            shape: a.shape,
            lambda: a.lambda,
            pre_cache: a.pre_cache,
            ..DistSpec::new(DistKind::Normal)
        },
        precision: a.precision,
        mode: a.mode,
        count,
        init,
        format: a.format,
        block,
        buffers: a.buffers,
    };
    spec.validate()?;
    let exec: std::sync::Arc<dyn warpmc::backend::Executor> = backend::open(&a.backend.options())?.into();
    let (mut out, name): (Box<dyn Write>, String) = match &a.output {
        Some(p) => {
            let file =
                File::create(p).map_err(|e| Error::io(format!("cannot create the output file {}", p.display()), e))?;
            (Box::new(BufWriter::new(file)), format!("the output file {}", p.display()))
        }
        None => (raw_stdout(), "standard output".to_string()),
    };
    let bar = match count {
        Some(n) if a.progress => {
            let bar = indicatif::ProgressBar::new(n);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {wide_bar} {pos}/{len} values, {per_sec}, {eta} left")
                    .expect("a valid template"),
            );
            Some(bar)
        }
        _ => None,
    };
    let result = warpmc::generate::generate(&exec, &spec, &mut out, |done| {
        if let Some(b) = &bar {
            b.set_position(done);
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    match result {
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(Error::Io { what, source }) => Err(Error::io(format!("{what} to {name}"), source)),
        other => other,
    }
}

/// Standard output without Rust's line buffering: `io::stdout()` is a `LineWriter`, which
/// searches every write for its last newline, a pass over each 16 MiB block of binary output
/// that costs more than the block's copy from the GPU. A duplicate of descriptor 1 writes to the
/// same file or pipe directly.
fn raw_stdout() -> Box<dyn Write> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() {
            return Box::new(BufWriter::with_capacity(1 << 16, File::from(fd)));
        }
    }
    Box::new(BufWriter::new(std::io::stdout().lock()))
}

fn demo_pipeline(a: PipelineArgs) -> warpmc::Result<()> {
    let spec = warpmc::pipeline::PipelineSpec {
        generator: a.generator,
        transform: a.transform,
        seed: a.seed,
        streams: count_in("streams", a.streams, 1, 1 << 20, "[1, 2^20]")?,
        count: count_in("count", a.count, 1, 1 << 36, "[1, 2^36]")?,
        block: count_in("block", a.block, 1, warpmc::stream::BLOCK_MAX, "[1, 2^28]")?,
        buffers: a.buffers,
        consumer: a.consumer,
    };
    spec.validate()?;
    let exec: std::sync::Arc<dyn warpmc::backend::Executor> = backend::open(&a.backend.options())?.into();
    let report = warpmc::pipeline::run(exec, &spec)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("serialisable report"));
    } else {
        print!("{report}");
    }
    Ok(())
}

fn quality(a: QualityArgs) -> warpmc::Result<()> {
    use warpmc::quality::long::LONG_WORDS_MAX;
    use warpmc::quality::{INTERLEAVE_MAX, QualitySpec, WORDS_MIN, run};
    let spec = QualitySpec {
        generator: a.generator,
        seed: a.seed,
        battery: a.battery,
        interleave: count_in("interleave", a.interleave, 1, INTERLEAVE_MAX, "[1, 2^24]")?,
        words: a
            .words
            .map(|w| count_in("words", w, WORDS_MIN, LONG_WORDS_MAX, "[2^20, 2^36] for quick, [2^24, 2^40] for long"))
            .transpose()?,
        log: a.log,
        jobs: a.jobs,
        tests: a.tests.map(|t| t.0),
        resume: a.resume,
    };
    let report = run(&spec)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("serialisable report"));
    } else {
        print!("{report}");
    }
    if !report.passed() {
        let fails = report.count(warpmc::quality::Verdict::Fail);
        return Err(Error::BatteryFailed(format!(
            "{fails} of {} statistics of {} on {} failed (p outside [1e-10, 1 - 1e-10])",
            report.tests.len(),
            report.battery,
            report.generator
        )));
    }
    Ok(())
}

fn bench_cmd(a: BenchArgs) -> warpmc::Result<()> {
    let sizes = if a.quick { bench::BenchSizes::quick() } else { bench::BenchSizes::full() };
    let report = bench::run(sizes, a.only, &mut |s| eprintln!("bench: {s}"))?;
    let md = report.markdown();
    let write = |p: &PathBuf, text: &str| {
        std::fs::write(p, text).map_err(|e| Error::io(format!("cannot write {}", p.display()), e))
    };
    if let Some(p) = &a.json_out {
        write(p, &serde_json::to_string_pretty(&report).expect("serialisable report"))?;
    }
    if let Some(p) = &a.markdown_out {
        write(p, &md)?;
    }
    println!("{md}");
    Ok(())
}

/// Every kernel of the module once, small: each generator's stream set-up, five fills, its
/// distribution fills (every distribution and transform it can drive) and its Asian basket kernels
/// with every normal transform it can drive, in both modes, the constant-RNG baseline, and cuRAND's host-API layout for the three
/// generators cuRAND has. Prints one line per generator.
fn check_kernels() -> warpmc::Result<()> {
    use warpmc::backend::{FillKind, StreamInit};
    let gpu = backend::open(&BackendOptions { kind: BackendKind::Gpu, ..Default::default() })?;
    for &generator in GeneratorKind::ALL {
        let init = StreamInit::Seeded { generator, seed: 3, first: 5, count: 77 };
        for kind in [
            FillKind::Words,
            FillKind::Uniforms,
            FillKind::UniformsF64,
            FillKind::Normals(Mode::Exact),
            FillKind::Normals(Mode::Fast),
        ] {
            warpmc::generate::generate_words(gpu.as_ref(), kind, &init, 1003)?;
            // Long enough per stream for a large state's fill to regenerate its block several
            // times (MT19937's warp fill twists in shared memory every 624 words).
            let long = StreamInit::Seeded { generator, seed: 3, first: 0, count: 3 };
            warpmc::generate::generate_words(gpu.as_ref(), kind, &long, 20011)?;
        }
        // Every distribution kernel (f32 exact, f32 fast, f64, counts) through every arm of its
        // dispatch: each distribution and transform the generator can drive.
        let mut dists = 0;
        for d in warpmc::distributions::every_spec() {
            if d.check_generator(generator).is_ok() {
                warpmc::generate::generate_words(gpu.as_ref(), FillKind::Dist(d.fill()), &init, 1003)?;
                dists += 1;
            }
        }
        // The Asian basket with every normal transform the generator can drive (Box-Muller's
        // kernels and the any-transform kernels), in both modes.
        let mut baskets = 0;
        for t in [
            Transform::BoxMuller,
            Transform::Inversion,
            Transform::InversionNaive,
            Transform::Polar,
            Transform::Ziggurat,
        ] {
            let p = warpmc_kernels::asian::AsianBasketSteps {
                normals: t.code(),
                ..AsianBasket::default().kernel_job(8).steps
            };
            if warpmc::backend::check_asian(&p, generator).is_err() {
                continue;
            }
            for mode in [Mode::Exact, Mode::Fast] {
                gpu.asian_basket(&p, generator, 3, 0..5000, mode)?;
                baskets += 1;
            }
        }
        // The instrument kernels, both modes, every transform the generator can drive: a GARCH
        // lookback (replayed) with antithetic halves, and a three-leg Greek.
        let mut instruments = 0;
        for t in [
            Transform::BoxMuller,
            Transform::Inversion,
            Transform::InversionNaive,
            Transform::Polar,
            Transform::Ziggurat,
        ] {
            if warpmc::backend::basket_transform_refusal(t.code(), generator).is_some() {
                continue;
            }
            let garch = nine_steps(warpmc::instruments::InstrumentName::LookbackGarch).kernel_steps(t, true);
            let barrier = nine_steps(warpmc::instruments::InstrumentName::AsianBarrier).kernel_steps(t, false);
            let legs =
                warpmc_kernels::instrument::Legs { legs: [barrier; 3], weights: [-2.0, 1.0, 1.0], count: 3, pad: 0 };
            for mode in [Mode::Exact, Mode::Fast] {
                gpu.instrument(&garch, generator, 3, 5..3000, mode)?;
                gpu.instrument_legs(&legs, generator, 3, 5..3000, mode)?;
                instruments += 2;
            }
            // The N-asset basket: 5 assets with antithetic pairs, and three coefficient sets.
            let basket = warpmc::instruments::Instrument::new(
                warpmc::instruments::InstrumentName::AsianBasket,
                &[("steps", "9"), ("assets", "5"), ("payoff", "average")]
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )?;
            let job = basket.basket_job(t, true, 3);
            let u = basket.unit();
            let sets = [basket.basket_leg_in(u, 1.0), basket.basket_leg_in(u, -2.0), basket.basket_leg_in(u, 1.0)];
            for mode in [Mode::Exact, Mode::Fast] {
                gpu.basket(&job, &sets, generator, 3, 5..3000, mode)?;
                instruments += 1;
            }
        }
        println!(
            "{generator}: init, 5 fills (short and long), {dists} distribution fills, {baskets} Asian basket runs, \
             {instruments} instrument and N-asset basket runs"
        );
    }
    gpu.asian_basket_constant(&AsianBasket::default().kernel_job(8).steps, 0..5000)?;
    println!("constant-RNG Asian basket");
    #[cfg(feature = "gpu")]
    check_curand_kernels(gpu.as_ref())?;
    #[cfg(feature = "gpu")]
    check_study_kernels(gpu.as_ref())?;
    #[cfg(feature = "gpu")]
    check_vegas_kernels(gpu.as_ref())?;
    Ok(())
}

/// Every generator's VEGAS kernel, the warp generators' collective one included (two-iteration
/// runs: bins in shared memory, 32 x 128 bins in shared memory above the 48 KiB a launch takes
/// without opting in, and 32 x 512 bins in global memory) and the plain-points baseline.
#[cfg(feature = "gpu")]
fn check_vegas_kernels(gpu: &dyn warpmc::backend::Executor) -> warpmc::Result<()> {
    use warpmc::integrands::{Family, IntegrandSpec};
    use warpmc::integrate::{Integrand, IntegrateSpec, integrate};
    let device = gpu.as_gpu().expect("a GPU executor");
    let mut runs = 0;
    for &generator in GeneratorKind::ALL {
        for (family, dim, bins) in [(Family::NarrowGaussians, 3, 128), (Family::Oscillatory, 32, 128), (Family::Oscillatory, 32, 512)] {
            let is = IntegrandSpec::new(family, dim)?;
            let p = is.params();
            let spec = IntegrateSpec {
                generator,
                bins,
                evals_per_iteration: 3000,
                max_iterations: 2,
                warmup: 1,
                ..IntegrateSpec::new(dim)
            };
            integrate(&spec, &Integrand::Builtin(&p), &[device], |_| {})?;
            runs += 1;
        }
    }
    let p = IntegrandSpec::new(Family::Gaussian, 4)?.params();
    let job = warpmc_kernels::vegas::VegasJob { seed: 3, points: 5000, dim: 4, ..Default::default() };
    device.time_vegas_plain(&job, &p, 5000, 1)?;
    println!("VEGAS: {runs} integrations (every generator), the plain-points baseline");
    Ok(())
}

/// `name` with its default parameters and nine dates: a short job for `check-kernels`.
fn nine_steps(name: warpmc::instruments::InstrumentName) -> warpmc::instruments::Instrument {
    warpmc::instruments::Instrument::new(name, &[("steps".to_string(), "9".to_string())].into())
        .expect("the defaults with nine steps are valid")
}

/// The Wallace pool kernels, the divergence diagnostics and the inversion sweep, once each.
#[cfg(feature = "gpu")]
fn check_study_kernels(gpu: &dyn warpmc::backend::Executor) -> warpmc::Result<()> {
    use warpmc::backend::{FillKind, StreamInit};
    use warpmc::distributions::{DistKind, DistSpec, Transform};
    let device = gpu.as_gpu().expect("a GPU executor");
    let wallace = DistSpec::new(DistKind::Normal).with_transform(Transform::Wallace);
    let init = StreamInit::Seeded { generator: GeneratorKind::Philox4x32x10, seed: 3, first: 0, count: 3 };
    warpmc::generate::generate_words(gpu, FillKind::Dist(wallace.fill()), &init, 3 * 2048 * 2 + 5)?;
    let polar = DistSpec::new(DistKind::Normal).with_transform(Transform::Polar);
    device.diag_dist(polar.fill(), 4 * 77, 3, 77)?;
    device.diag_dist(polar.with_pre_cache(true).fill(), 4 * 77, 3, 77)?;
    device.diag_dist(DistSpec { lambda: Some(13.5), ..DistSpec::new(DistKind::Poisson) }.fill(), 4 * 77, 3, 77)?;
    device.inverse_cdf_sweep((1 << 32) - 100_000, 100_000)?;
    let garch =
        nine_steps(warpmc::instruments::InstrumentName::LookbackGarch).kernel_steps(Transform::BoxMuller, false);
    let legs = warpmc_kernels::instrument::Legs::single(garch);
    device.time_instrument_constant(&legs, 3000)?;
    device.time_garch_stored(&legs, 3, 3000)?;
    let basket = nine_steps(warpmc::instruments::InstrumentName::AsianBasket);
    if let warpmc::instruments::KernelLegs::Basket(job, sets) = basket.kernel_legs(Transform::BoxMuller, false) {
        device.time_basket_constant(&job, &sets, 3000)?;
    }
    // QMC: both kernels, both constructions and scrambles, a three-leg Greek with antithetic
    // halves and a GARCH replay, on 9 dates (16 coordinates with the bridge).
    for q in [
        warpmc::qmc::QmcSettings::default(),
        warpmc::qmc::QmcSettings {
            scramble: warpmc::qmc::Scramble::Shift,
            construction: warpmc::qmc::Construction::Increments,
            replicates: 2,
        },
    ] {
        let dims = q.dimensions(9);
        let (directions, keys, params) = (q.directions(dims)?, q.keys(3, 1, dims), q.params(dims));
        let barrier =
            nine_steps(warpmc::instruments::InstrumentName::AsianBarrier).kernel_steps(Transform::BoxMuller, true);
        let three =
            warpmc_kernels::instrument::Legs { legs: [barrier; 3], weights: [-2.0, 1.0, 1.0], count: 3, pad: 0 };
        for mode in [Mode::Exact, Mode::Fast] {
            gpu.instrument_qmc(&three, &params, &directions, &keys, 5..3000, mode)?;
            gpu.instrument_qmc(&legs, &params, &directions, &keys, 5..3000, mode)?;
        }
    }
    println!(
        "wallace pools, divergence diagnostics (f32, counts), inversion sweep, instrument and basket baselines, \
         stored-path GARCH, QMC instruments"
    );
    Ok(())
}

/// cuRAND's host-API layout, each value type into device memory, after an offset.
#[cfg(feature = "gpu")]
fn check_curand_kernels(gpu: &dyn warpmc::backend::Executor) -> warpmc::Result<()> {
    let device = gpu.as_gpu().expect("a GPU executor");
    for generator in [GeneratorKind::Xorwow, GeneratorKind::Mrg32k3aCurand, GeneratorKind::Philox4x32x10] {
        let mut b = warpmc::bulk::BulkGenerator::new(gpu, generator);
        b.set_offset(77);
        b.set_ordering(warpmc::bulk::Ordering::CurandLegacy)?;
        let err = |e| Error::Gpu(format!("check-kernels: {e:?}"));
        b.generate_device(&mut device.stream().alloc_zeros::<u32>(5003).map_err(err)?)?;
        b.generate_device(&mut device.stream().alloc_zeros::<f32>(5003).map_err(err)?)?;
        b.generate_device(&mut device.stream().alloc_zeros::<f64>(5003).map_err(err)?)?;
        println!("{generator}: cuRAND host layout, u32, f32, f64");
    }
    Ok(())
}

fn info() -> warpmc::Result<()> {
    println!("warpmc {}", env!("CARGO_PKG_VERSION"));
    let start = std::time::Instant::now();
    match backend::gpu_status() {
        Ok(d) => println!(
            "gpu: {d}; opened in {:.0} ms (CUDA context and kernel module)",
            start.elapsed().as_secs_f64() * 1e3
        ),
        Err(why) => println!("gpu: not available ({why})"),
    }
    let cpu = backend::cpu::CpuExecutor::new(None)?;
    println!("cpu: {} threads", cpu.threads());
    println!("generators (--generator NAME, --state words):");
    for &g in GeneratorKind::ALL {
        let names: Vec<&str> = g.raw_state().split(',').collect();
        let words = if names.len() > 8 {
            format!("{},...,{} ({} words)", names[..3].join(","), names[names.len() - 2..].join(","), names.len())
        } else {
            names.join(",")
        };
        println!("  {:<16} {words}", g.name());
    }
    Ok(())
}
