//! `cargo xtask device-bundle`: `target/device-bundle/`, everything a GPU machine without Rust
//! needs: the release CLI, every test executable of the workspace (as `<target>-test`), `run.sh`
//! (runs them all with `WARPMC_REQUIRE_GPU=1`, then a GPU pricing job and the benchmark) and
//! `README.txt`. It must stay under 64 MiB.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::setup;
use crate::util::{capture, cargo, describe, heading, mib, run};

const BUNDLE: &str = "target/device-bundle";
const LIMIT_BYTES: u64 = 64 * 1024 * 1024;
const RUN_SH: &str = include_str!("device_run.sh");
const README: &str = include_str!("device_readme.txt");
/// The cuRAND device-API reference program run.sh builds with nvcc on the GPU machine.
const CURAND_CHECK: &str = include_str!("curand_check.cu");
/// The cuRAND host-API reference program run.sh builds with nvcc on the GPU machine.
const CURAND_HOST_CHECK: &str = include_str!("curand_host_check.cu");

pub fn device_bundle() -> Result<()> {
    setup::setup(false)?;
    let bundle = Path::new(BUNDLE);
    if bundle.exists() {
        fs::remove_dir_all(bundle).with_context(|| format!("cannot clear {BUNDLE}"))?;
    }
    fs::create_dir_all(bundle)?;
    let strip = strip_available();

    heading("the CLI");
    run(cargo().args(["build", "--release", "-p", "warpmc"]))?;
    add_binary(Path::new("target/release/warpmc"), &bundle.join("warpmc"), strip)?;

    heading("the test executables");
    let tests = test_executables()?;
    if tests.is_empty() {
        bail!("cargo reported no test executables");
    }
    for (name, exe) in &tests {
        add_binary(Path::new(exe), &bundle.join(name), strip)?;
    }

    fs::write(bundle.join("run.sh"), RUN_SH)?;
    fs::set_permissions(bundle.join("run.sh"), fs::Permissions::from_mode(0o755))?;
    fs::write(bundle.join("README.txt"), README)?;
    fs::write(bundle.join("curand_check.cu"), CURAND_CHECK)?;
    fs::write(bundle.join("curand_host_check.cu"), CURAND_HOST_CHECK)?;

    heading("size");
    let mut total = 0;
    let mut entries: Vec<_> = fs::read_dir(bundle)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let len = e.metadata()?.len();
        total += len;
        println!("  {:>9}  {}", mib(len), e.file_name().to_string_lossy());
    }
    println!("  {:>9}  total ({} files; limit {})", mib(total), tests.len() + 4, mib(LIMIT_BYTES));
    if total > LIMIT_BYTES {
        bail!("{BUNDLE} is {} (over {}): it would not travel to the GPU machine", mib(total), mib(LIMIT_BYTES));
    }
    println!(
        "\nxtask device-bundle: wrote {} ({}, {} test executables{}).\nOn the GPU machine: bash {BUNDLE}/run.sh [OUT_DIR]",
        bundle.canonicalize()?.display(),
        mib(total),
        tests.len(),
        if strip { ", debug info stripped" } else { "" }
    );
    Ok(())
}

/// Whether `strip` is there to remove debug info.
fn strip_available() -> bool {
    Command::new("strip")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Copy an executable into the bundle, without its debug info when `strip` can (the symbol table
/// stays, so panics still name their functions).
fn add_binary(from: &Path, to: &Path, strip: bool) -> Result<()> {
    fs::copy(from, to).with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    if strip {
        let mut cmd = Command::new("strip");
        cmd.arg("--strip-debug").arg(to);
        let out = capture(&mut cmd)?;
        if !out.status.success() {
            println!("  note: `{}` failed, keeping the file as is", describe(&cmd));
        }
    }
    println!("  {} <- {}", to.display(), from.display());
    Ok(())
}

/// Build every test executable (release) and return `(bundle name, path)` for each.
fn test_executables() -> Result<Vec<(String, String)>> {
    let mut cmd = cargo();
    cmd.args(["test", "--release", "--workspace", "--no-run", "--message-format=json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    eprintln!("$ {}", describe(&cmd));
    let out = cmd.output().context("could not start cargo")?;
    if !out.status.success() {
        bail!("building the tests failed ({})", out.status);
    }
    Ok(pick_tests(&String::from_utf8_lossy(&out.stdout)))
}

/// From cargo's JSON messages: the test executables (`profile.test` with an `executable`),
/// leaving out xtask's own. Named `<target>-test` for libraries and integration tests,
/// `<target>-<kind>-test` for binaries, examples and benches (a binary may share its library's
/// name), with a number added should two still clash.
fn pick_tests(messages: &str) -> Vec<(String, String)> {
    let mut taken = BTreeSet::new();
    let mut picked = Vec::new();
    for line in messages.lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let is_test = msg["reason"] == "compiler-artifact" && msg["profile"]["test"] == true;
        let Some(exe) = msg["executable"].as_str().filter(|_| is_test) else {
            continue;
        };
        if msg["manifest_path"].as_str().is_some_and(|p| Path::new(p).parent().is_some_and(|d| d.ends_with("xtask"))) {
            continue;
        }
        let target = msg["target"]["name"].as_str().unwrap_or("unnamed");
        let kind = msg["target"]["kind"][0].as_str().unwrap_or("test");
        let base = match kind {
            "bin" | "example" | "bench" => format!("{target}-{kind}"),
            _ => target.to_string(), // a library (lib, rlib, ...) or an integration test
        };
        let mut name = format!("{base}-test");
        let mut n = 2;
        while taken.contains(&name) {
            name = format!("{base}-{n}-test");
            n += 1;
        }
        taken.insert(name.clone());
        picked.push((name, exe.to_string()));
    }
    picked
}

#[cfg(test)]
mod tests {
    use super::pick_tests;

    #[test]
    fn picks_test_executables_with_unique_names() {
        let m = r#"{"reason":"compiler-artifact","manifest_path":"/w/host/Cargo.toml","target":{"name":"warpmc","kind":["bin"]},"profile":{"test":true},"executable":"/t/warpmc-2"}
{"reason":"compiler-artifact","manifest_path":"/w/host/Cargo.toml","target":{"name":"warpmc","kind":["lib"]},"profile":{"test":true},"executable":"/t/warpmc-1"}
{"reason":"compiler-artifact","manifest_path":"/w/tests/Cargo.toml","target":{"name":"warpmc","kind":["test"]},"profile":{"test":true},"executable":"/t/warpmc-5"}
{"reason":"compiler-artifact","manifest_path":"/w/host/Cargo.toml","target":{"name":"warpmc","kind":["lib"]},"profile":{"test":false},"executable":null}
{"reason":"compiler-artifact","manifest_path":"/w/gpu-kernels/Cargo.toml","target":{"name":"warpmc_kernels","kind":["rlib"]},"profile":{"test":true},"executable":"/t/k-6"}
{"reason":"compiler-artifact","manifest_path":"/w/tests/Cargo.toml","target":{"name":"gpu","kind":["test"]},"profile":{"test":true},"executable":"/t/gpu-3"}
{"reason":"compiler-artifact","manifest_path":"/w/xtask/Cargo.toml","target":{"name":"xtask","kind":["bin"]},"profile":{"test":true},"executable":"/t/xtask-4"}
{"reason":"build-finished","success":true}
not json"#;
        let names: Vec<String> = pick_tests(m).into_iter().map(|(n, _)| n).collect();
        let expected = ["warpmc-bin-test", "warpmc-test", "warpmc-2-test", "warpmc_kernels-test", "gpu-test"];
        assert_eq!(names, expected);
    }
}
