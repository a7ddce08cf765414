//! `cargo xtask device-bundle`: `target/device-bundle/`, everything a GPU machine without Rust
//! needs: the release CLI, every test executable of the workspace (as `<target>-test`), `run.sh`
//! (runs them all with `WARPMC_REQUIRE_GPU=1`, then a GPU pricing job and the benchmark) and
//! `README.txt`; and `target/device-pack/device-bundle.tar.xz`, the same packed, which must stay
//! under 64 MiB (what one carried folder may hold on the lent GPU machines). The executables each
//! embed the kernels' module (already deflated, some 17 MiB since the distributions issue), so
//! gzip's 32 KiB window packs every copy again; xz at level 9 with a dictionary as large as the
//! bundle reaches back to the earlier executables' copies and stores them once.

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
/// The folder that travels: the bundle packed.
const PACK_DIR: &str = "target/device-pack";
const PACK: &str = "target/device-pack/device-bundle.tar.xz";
const LIMIT_BYTES: u64 = 64 * 1024 * 1024;
const RUN_SH: &str = include_str!("device_run.sh");
const README: &str = include_str!("device_readme.txt");
/// Integration tests (`tests/tests/<name>.rs`) that never open a GPU: CI runs them on its CPU, and
/// the bundle leaves them out, since each executable embeds the kernel module and the packed
/// bundle must stay under [`LIMIT_BYTES`] (it was 67.9 MiB with them, 2026-11-26). A test below
/// checks that none of their sources can reach a GPU.
const CPU_ONLY_TESTS: &[&str] = &[
    "generators",
    "normal_statistics",
    "pricing",
    "wallace",
    "math_accuracy",
    "precision",
    "gamma_poisson",
    "ziggurat_polar",
];

/// What in a test's source can open a GPU.
#[cfg(test)]
const GPU_MARKERS: &[&str] = &["gpu_or_skip", "gpu_with", "BackendKind::Gpu", "BackendKind::Auto", "backend::open"];

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

    heading("the example integrand's PTX module (examples/user-integrand), for the compiled-integrand test");
    let ptx = crate::integrand::build_integrand(Path::new("examples/user-integrand/Cargo.toml"), None)?;
    fs::copy(&ptx, bundle.join("warpmc_example_integrand.ptx"))?;

    heading("the test executables (without the CPU-only integration tests, which CI runs)");
    let tests: Vec<_> = test_executables()?
        .into_iter()
        .filter(|(name, _)| !CPU_ONLY_TESTS.iter().any(|t| name == &format!("{t}-test")))
        .collect();
    if tests.is_empty() {
        bail!("cargo reported no test executables");
    }
    for (name, exe) in &tests {
        add_binary(Path::new(exe), &bundle.join(name), strip)?;
    }

    // The quality tests of the warpmc executable run TestU01's SmallCrush: ship the TestU01Drv
    // that `cargo xtask setup --quality` built (libc only), when there is one.
    let testu01 = Path::new(warpmc_testu01_root()).join("bin/TestU01Drv");
    if testu01.is_file() {
        add_binary(&testu01, &bundle.join("TestU01Drv"), strip)?;
    } else {
        println!(
            "  note: no {} (cargo xtask setup --quality): run.sh will skip the SmallCrush test",
            testu01.display()
        );
    }

    // And warpmc's own TestU01 driver, for the test-by-test SmallCrush test.
    let tests_driver = Path::new(warpmc_testu01_root()).join("bin/warpmc-testu01");
    if tests_driver.is_file() {
        add_binary(&tests_driver, &bundle.join("warpmc-testu01"), strip)?;
    } else {
        println!("  note: no {}: run.sh will skip the test-by-test SmallCrush test", tests_driver.display());
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
    println!("  {:>9}  total ({} files)", mib(total), fs::read_dir(bundle)?.count());

    heading("packed");
    if Path::new(PACK_DIR).exists() {
        fs::remove_dir_all(PACK_DIR).with_context(|| format!("cannot clear {PACK_DIR}"))?;
    }
    fs::create_dir_all(PACK_DIR)?;
    // Single-threaded level 9 (a threaded xz cuts the input into blocks, which no match crosses),
    // with a dictionary as large as the bundle: the executables (about 60 MiB each since the
    // distributions issue) each embed the same module and much the same host code, and a
    // dictionary shorter than one executable no longer reaches the previous copy (64 MiB packed
    // 637 MiB into 104 MiB; the whole bundle's dictionary into 49 MiB). Compression takes about
    // 11 times the dictionary in memory, decompression the dictionary.
    let dict_mib = (total.div_ceil(1 << 20) + 63) / 64 * 64;
    let dict_mib = dict_mib.clamp(64, 1024);
    let xz_opt = format!("--lzma2=preset=9,dict={dict_mib}MiB -T1");
    run(Command::new("tar").env("XZ_OPT", &xz_opt).args(["-cJf", PACK, "-C", "target", "device-bundle"]))?;
    let packed = fs::metadata(PACK)?.len();
    println!("  {:>9}  {PACK} (limit {})", mib(packed), mib(LIMIT_BYTES));
    if packed > LIMIT_BYTES {
        bail!("{PACK} is {} (over {}): it would not travel to the GPU machine", mib(packed), mib(LIMIT_BYTES));
    }
    println!(
        "\nxtask device-bundle: wrote {} ({}, {} test executables{}) and {PACK} ({}).\n\
         On the GPU machine: bash {BUNDLE}/run.sh [OUT_DIR], or from the packed copy:\n  \
         tar -xJf {PACK} -C /tmp && bash /tmp/device-bundle/run.sh [OUT_DIR]",
        bundle.canonicalize()?.display(),
        mib(total),
        tests.len(),
        if strip { ", debug info stripped" } else { "" },
        mib(packed),
    );
    Ok(())
}

/// Where `cargo xtask setup --quality` installs TestU01Drv (host/src/quality.rs, TESTU01_ROOT).
fn warpmc_testu01_root() -> &'static str {
    "target/tools/testu01"
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
    use super::{CPU_ONLY_TESTS, GPU_MARKERS, pick_tests};

    #[test]
    fn tests_left_out_of_the_bundle_cannot_reach_a_gpu() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/tests");
        for t in CPU_ONLY_TESTS {
            let src = std::fs::read_to_string(dir.join(format!("{t}.rs"))).expect("the test's source");
            for m in GPU_MARKERS {
                assert!(!src.contains(m), "tests/tests/{t}.rs has {m}: it must travel in the device bundle");
            }
        }
    }

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
