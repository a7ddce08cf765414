//! `cargo xtask test`: the project's whole test command. Each step must pass before the next.

use std::path::Path;

use anyhow::{Result, bail};

use crate::util::{capture, cargo, describe, heading, run, tee};
use crate::{ptx, setup};

/// The GPU tests' source: the step that reports on them waits until it exists.
const GPU_TESTS: &str = "tests/tests/gpu.rs";

pub fn test() -> Result<()> {
    heading("1/7 setup: the pinned nightly, its rust-src, ptxas, the quality batteries, Open MPI");
    setup::setup(true)?;
    // The tests run SmallCrush and a few dieharder tests on some generators.
    setup::install_quality_tools()?;
    // Step 4 builds the `mpi` feature and runs two and three ranks.
    setup::install_mpi()?;

    // Step 4 builds in a target directory of its own, beside step 2: most of step 2's time is the
    // kernels' nightly build and ptxas, each on one core, and CI's two cores leave the other one
    // idle meanwhile. Its output is shown when it has finished.
    let mut mpi = cargo();
    let mpi_dir = crate::util::workspace_root().join("target/cpu-mpi");
    mpi.args(["test", "--target-dir"]).arg(&mpi_dir).args([
        "-p",
        "warpmc",
        "--no-default-features",
        "--features",
        "mpi",
        "--test",
        "cli",
        "--",
        "integrate",
    ]);
    let mpi_shown = describe(&mpi);
    let side = std::thread::spawn(move || capture(&mut mpi));

    heading("2/7 release build with the GPU backend (compiles the kernels to PTX; step 4 builds beside it)");
    run(cargo().args(["build", "--release", "-p", "warpmc"]))?;

    heading("3/7 ptxas: the PTX assembles for sm_90");
    ptx::report()?;

    heading("4/7 the CPU-only build with MPI (--no-default-features --features mpi): the integrator's CLI tests, mpirun -n 2 and 3");
    // A debug build (minutes, not the release build's quarter of an hour); its CLI tests run
    // the CPU integrator, and `integrate_under_mpirun_matches_one_process` compares 2 and 3 ranks
    // with one process bit for bit.
    let out = side.join().map_err(|_| anyhow::anyhow!("the thread of step 4 panicked"))??;
    println!("$ {mpi_shown}");
    print!("{}", String::from_utf8_lossy(&out.stderr));
    print!("{}", String::from_utf8_lossy(&out.stdout));
    if !out.status.success() {
        bail!("`{mpi_shown}` failed ({})", out.status);
    }

    heading("5/7 the example integrand crate: its PTX module (cargo xtask build-integrand), and the program on the CPU (and the GPU when present)");
    let ptx = crate::integrand::build_integrand(Path::new("examples/user-integrand/Cargo.toml"), None)?;
    let mut example = cargo();
    example.args(["run", "--release", "-p", "warpmc-example-integrand", "--", "--ptx"]).arg(&ptx);
    run(&mut example)?;

    heading("6/7 all tests, release");
    run(cargo().args(["test", "--workspace", "--release"]))?;

    heading("7/7 GPU tests: on a GPU, or skipped?");
    let gpu_summary = gpu_tests()?;

    println!("\n{gpu_summary}");
    println!("cargo xtask test: all steps passed");
    Ok(())
}

/// Run the GPU test target with its output shown and captured, and say whether it used a GPU.
fn gpu_tests() -> Result<String> {
    if !Path::new(GPU_TESTS).exists() {
        return Ok(format!("GPU tests: none yet ({GPU_TESTS} does not exist)"));
    }
    // `--workspace` keeps the feature resolution of the full test run, so nothing is rebuilt.
    let (status, output) =
        tee(cargo().args(["test", "--release", "--workspace", "--test", "gpu", "--", "--nocapture"]))?;
    if !status.success() {
        bail!("the GPU tests failed ({status})");
    }
    Ok(gpu_summary(&output))
}

fn gpu_summary(output: &str) -> String {
    let skipped = output.lines().filter(|l| l.starts_with("SKIPPED")).count();
    if skipped > 0 {
        format!("GPU tests: {skipped} skipped (no GPU; set WARPMC_REQUIRE_GPU=1 to make a missing GPU a failure)")
    } else {
        "GPU tests: ran on the GPU".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::gpu_summary;

    #[test]
    fn counts_skipped_tests() {
        let out = "running 2 tests\nSKIPPED a: no driver (set ...)\nSKIPPED b: no driver\ntest a ... ok\n";
        assert!(gpu_summary(out).starts_with("GPU tests: 2 skipped (no GPU;"));
        assert_eq!(gpu_summary("test a ... ok\n"), "GPU tests: ran on the GPU");
    }
}
