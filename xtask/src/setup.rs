//! `cargo xtask setup`: the nightly toolchain, its rust-src, and ptxas. Each step checks first
//! and does nothing when its part is already there.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::util::{capture, run};

/// The `nvidia-cuda-nvcc` wheel that provides ptxas: CUDA 13.0, the test GPUs' driver.
pub const NVCC_VERSION: &str = "13.0.88";
/// Where the wheel is unpacked.
pub const NVCC_DIR: &str = "target/tools/nvcc";
/// The ptxas binary inside it.
pub const PTXAS: &str = "target/tools/nvcc/nvidia/cu13/bin/ptxas";

/// Run every step. `verbose` also prints the steps that had nothing to do.
pub fn setup(verbose: bool) -> Result<()> {
    nightly(verbose)?;
    rust_src(verbose)?;
    ptxas(verbose)?;
    Ok(())
}

fn say(verbose: bool, line: &str) {
    if verbose {
        eprintln!("setup: {line}");
    }
}

fn rustup() -> Command {
    Command::new("rustup")
}

fn nightly(verbose: bool) -> Result<()> {
    let out = capture(rustup().args(["toolchain", "list"]))
        .context("rustup is needed to install the nightly toolchain (https://rustup.rs)")?;
    if !out.status.success() {
        bail!("`rustup toolchain list` failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    if has_nightly(&String::from_utf8_lossy(&out.stdout)) {
        say(verbose, "nightly toolchain: installed");
        return Ok(());
    }
    eprintln!("setup: nightly toolchain: missing, installing it");
    run(rustup().args(["toolchain", "install", "nightly", "--profile", "minimal"]))
}

/// Whether `rustup toolchain list` shows the `nightly` channel (not only a dated nightly, which
/// `cargo +nightly` would not use).
fn has_nightly(list: &str) -> bool {
    list.lines().filter_map(|l| l.split_whitespace().next()).any(|name| {
        name == "nightly"
            || name.strip_prefix("nightly-").is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_digit()))
    })
}

fn rust_src(verbose: bool) -> Result<()> {
    let out = capture(rustup().args(["component", "list", "--toolchain", "nightly", "--installed"]))?;
    let listed = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && listed.lines().any(|l| l.trim().starts_with("rust-src")) {
        say(verbose, "rust-src for nightly: installed");
        return Ok(());
    }
    eprintln!("setup: rust-src for nightly: missing, adding it");
    run(rustup().args(["component", "add", "rust-src", "--toolchain", "nightly"]))
}

fn ptxas(verbose: bool) -> Result<()> {
    let dist_info = format!("{NVCC_DIR}/nvidia_cuda_nvcc-{NVCC_VERSION}.dist-info");
    if Path::new(PTXAS).exists() && Path::new(&dist_info).exists() {
        say(verbose, &format!("ptxas {NVCC_VERSION}: installed ({PTXAS})"));
        return Ok(());
    }
    eprintln!("setup: ptxas {NVCC_VERSION}: missing, installing nvidia-cuda-nvcc=={NVCC_VERSION} into {NVCC_DIR}");
    ensure_pip()?;
    let mut pip = Command::new("python3");
    // pip's warning about running as root does not apply to a --target folder.
    pip.env("PIP_ROOT_USER_ACTION", "ignore");
    run(pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        // Replaces a partial or different version left in the folder.
        "--upgrade",
        "--target",
        NVCC_DIR,
        &format!("nvidia-cuda-nvcc=={NVCC_VERSION}"),
    ]))?;
    if !Path::new(PTXAS).exists() {
        bail!("the nvidia-cuda-nvcc wheel installed, but {PTXAS} is not there");
    }
    eprintln!("setup: ptxas {NVCC_VERSION}: installed ({PTXAS})");
    Ok(())
}

/// Make sure `python3 -m pip` works, with apt-get when we are root.
fn ensure_pip() -> Result<()> {
    let pip = capture(Command::new("python3").args(["-m", "pip", "--version"]))
        .context("python3 is needed to install ptxas (PyPI package nvidia-cuda-nvcc)")?;
    if pip.status.success() {
        return Ok(());
    }
    let uid = capture(Command::new("id").arg("-u")).map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if uid.ok().as_deref() != Some("0") {
        bail!("`python3 -m pip` is missing and we are not root: install pip (Debian: `apt-get install python3-pip`)");
    }
    eprintln!(
        "setup: `python3 -m pip` is missing: installing python3-pip with apt-get (apt-get update, apt-get install -y python3-pip)"
    );
    run(Command::new("apt-get").arg("update").env("DEBIAN_FRONTEND", "noninteractive"))?;
    run(Command::new("apt-get").args(["install", "-y", "python3-pip"]).env("DEBIAN_FRONTEND", "noninteractive"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::has_nightly;

    #[test]
    fn finds_the_nightly_channel() {
        let list = "stable-x86_64-unknown-linux-gnu (active, default)\nnightly-x86_64-unknown-linux-gnu\n";
        assert!(has_nightly(list));
        assert!(has_nightly("nightly (default)\n"));
        assert!(!has_nightly("stable-x86_64-unknown-linux-gnu (default)\n"));
        assert!(!has_nightly("nightly-2026-05-19-x86_64-unknown-linux-gnu\n"));
        assert!(!has_nightly("no installed toolchains\n"));
    }
}
