//! `cargo xtask setup`: the pinned nightly toolchain (Cargo.toml, `[workspace.metadata.warpmc]
//! ptx-toolchain`), its rust-src, and ptxas. Each step checks first and does nothing when its
//! part is already there.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};

use crate::ptx_pin::parse_ptx_toolchain;
use crate::util::{capture, run, workspace_root};

/// The `nvidia-cuda-nvcc` wheel that provides ptxas: CUDA 13.0, the test GPUs' driver.
pub const NVCC_VERSION: &str = "13.0.88";
/// Where the wheel is unpacked.
pub const NVCC_DIR: &str = "target/tools/nvcc";
/// The ptxas binary inside it.
pub const PTXAS: &str = "target/tools/nvcc/nvidia/cu13/bin/ptxas";

/// Run every step. `verbose` also prints the steps that had nothing to do.
pub fn setup(verbose: bool) -> Result<()> {
    let toolchain = ptx_toolchain()?;
    nightly(verbose, &toolchain)?;
    rust_src(verbose, &toolchain)?;
    ptxas(verbose)?;
    Ok(())
}

fn say(verbose: bool, line: &str) {
    if verbose {
        eprintln!("setup: {line}");
    }
}

fn rustup() -> Command {
    let mut cmd = Command::new("rustup");
    // Install what setup names, nothing implicitly.
    cmd.env("RUSTUP_AUTO_INSTALL", "0");
    cmd
}

/// The nightly that compiles the kernels to PTX: `[workspace.metadata.warpmc] ptx-toolchain`
/// in the workspace Cargo.toml (host/build.rs reads the same key).
pub fn ptx_toolchain() -> Result<String> {
    let path = workspace_root().join("Cargo.toml");
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    parse_ptx_toolchain(&text).map_err(|e| anyhow!("{e} (in {})", path.display()))
}

fn nightly(verbose: bool, toolchain: &str) -> Result<()> {
    let out = capture(rustup().args(["toolchain", "list"]))
        .context("rustup is needed to install the pinned nightly toolchain (https://rustup.rs)")?;
    if !out.status.success() {
        bail!("`rustup toolchain list` failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    if has_toolchain(&String::from_utf8_lossy(&out.stdout), toolchain) {
        say(verbose, &format!("{toolchain}: installed"));
        return Ok(());
    }
    eprintln!("setup: {toolchain} (the kernels' compiler): missing, installing it with rust-src");
    run(rustup().args(["toolchain", "install", toolchain, "--profile", "minimal", "--component", "rust-src"]))
}

/// Whether `rustup toolchain list` shows `toolchain` (`nightly-2026-05-20` is listed as
/// `nightly-2026-05-20-<host triple>`; the moving `nightly` channel does not count).
fn has_toolchain(list: &str, toolchain: &str) -> bool {
    list.lines().filter_map(|l| l.split_whitespace().next()).any(|name| {
        name == toolchain
            || name.strip_prefix(toolchain).and_then(|rest| rest.strip_prefix('-')).is_some_and(|triple| {
                // A host triple, not a later part of a longer date.
                triple.starts_with(|c: char| c.is_ascii_alphabetic())
            })
    })
}

fn rust_src(verbose: bool, toolchain: &str) -> Result<()> {
    let out = capture(rustup().args(["component", "list", "--toolchain", toolchain, "--installed"]))?;
    let listed = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && listed.lines().any(|l| l.trim().starts_with("rust-src")) {
        say(verbose, &format!("rust-src for {toolchain}: installed"));
        return Ok(());
    }
    eprintln!("setup: rust-src for {toolchain}: missing, adding it");
    run(rustup().args(["component", "add", "rust-src", "--toolchain", toolchain]))
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

/// The crates.io crate that runs TestU01's batteries on words read from stdin.
pub const TESTU01DRV_VERSION: &str = "0.1.1";
/// Where it is installed (`cargo install --root`); warpmc's quality module looks there.
pub const TESTU01_ROOT: &str = "target/tools/testu01";
/// The binary inside it.
pub const TESTU01DRV: &str = "target/tools/testu01/bin/TestU01Drv";
/// warpmc's own TestU01 driver (xtask/src/testu01_tests.c): chosen tests of a battery, so that
/// `warpmc quality --jobs N` can run a battery's tests side by side.
pub const TESTU01_TESTS: &str = "target/tools/testu01/bin/warpmc-testu01";
/// dieharder, from the Debian package of that name.
pub const DIEHARDER: &str = "/usr/bin/dieharder";

/// The external batteries of `warpmc quality`: TestU01Drv (`cargo install TestU01Drv --locked
/// --root target/tools/testu01`, which compiles TestU01's C code with cc: a minute or two) and
/// dieharder (`apt-get install -y dieharder`, when we are root). Each is installed only when
/// missing.
pub fn install_quality_tools() -> Result<()> {
    let root = workspace_root();
    let drv = root.join(TESTU01DRV);
    if drv.exists() {
        eprintln!("setup: TestU01Drv: installed ({TESTU01DRV})");
    } else {
        eprintln!(
            "setup: TestU01Drv {TESTU01DRV_VERSION} (TestU01's batteries): missing, installing it into {TESTU01_ROOT} \
             (it compiles TestU01 with cc: a minute or two)"
        );
        run(&mut install_testu01drv(&root, false))
            .context("installing TestU01Drv needs a C compiler (cc) and access to crates.io")?;
        if !drv.exists() {
            bail!("`cargo install TestU01Drv` succeeded, but {} is not there", drv.display());
        }
    }
    build_testu01_tests(&root)?;
    if Path::new(DIEHARDER).exists() {
        eprintln!("setup: dieharder: installed ({DIEHARDER})");
        return Ok(());
    }
    if !is_root() {
        bail!("dieharder is missing and we are not root: install it (Debian: `apt-get install dieharder`)");
    }
    eprintln!("setup: dieharder: missing, installing it with apt-get (apt-get update, apt-get install -y dieharder)");
    run(Command::new("apt-get").arg("update").env("DEBIAN_FRONTEND", "noninteractive"))?;
    run(Command::new("apt-get").args(["install", "-y", "dieharder"]).env("DEBIAN_FRONTEND", "noninteractive"))?;
    if !Path::new(DIEHARDER).exists() {
        bail!("apt-get installed dieharder, but {DIEHARDER} is not there");
    }
    Ok(())
}

/// Debian's packages behind the `mpi` feature: Open MPI (library, headers, `mpirun`), and the
/// libclang and clang headers that rsmpi's bindgen reads `mpi.h` with.
pub const MPI_PACKAGES: [&str; 4] = ["libopenmpi-dev", "openmpi-bin", "libclang1-14", "libclang-common-14-dev"];

/// Whether the `mpi` feature's build and `mpirun` are available: each package installed
/// (`dpkg-query`) and `mpirun` on the path.
fn mpi_present() -> bool {
    let installed = |pkg: &str| {
        capture(Command::new("dpkg-query").args(["-W", "-f=${Status}", pkg]))
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
    };
    MPI_PACKAGES.iter().all(|p| installed(p)) && capture(Command::new("mpirun").arg("--version")).is_ok()
}

/// Open MPI and libclang for the `mpi` feature (`apt-get install -y` [`MPI_PACKAGES`] when we
/// are root), only when missing.
pub fn install_mpi() -> Result<()> {
    if mpi_present() {
        eprintln!("setup: Open MPI and libclang (the mpi feature): installed");
        return Ok(());
    }
    if !is_root() {
        bail!(
            "Open MPI or libclang is missing and we are not root: install them (Debian: `apt-get install {}`)",
            MPI_PACKAGES.join(" ")
        );
    }
    eprintln!("setup: Open MPI and libclang (the mpi feature): missing, installing {} with apt-get", MPI_PACKAGES.join(" "));
    run(Command::new("apt-get").arg("update").env("DEBIAN_FRONTEND", "noninteractive"))?;
    run(Command::new("apt-get").args(["install", "-y"]).args(MPI_PACKAGES).env("DEBIAN_FRONTEND", "noninteractive"))?;
    if !mpi_present() {
        bail!("apt-get installed {}, but mpirun or a package is still missing", MPI_PACKAGES.join(" "));
    }
    Ok(())
}

/// `cargo install TestU01Drv` into [`TESTU01_ROOT`] (with `--force`: again, over an installed
/// copy), built in cargo's own temporary folder, not in the workspace's target.
fn install_testu01drv(root: &Path, force: bool) -> Command {
    let mut install = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    install.env_remove("CARGO_TARGET_DIR");
    install.args(["install", "TestU01Drv", "--version", TESTU01DRV_VERSION, "--locked"]);
    if force {
        install.arg("--force");
    }
    install.arg("--root").arg(root.join(TESTU01_ROOT));
    install
}

/// TestU01's C sources as the crates.io package TestU01Drv ships them: the copy cargo unpacked
/// into its registry when it installed TestU01Drv (`$CARGO_HOME/registry/src/*/TestU01Drv-V/`).
fn testu01_sources() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let registries = std::fs::read_dir(home.join("registry/src")).ok()?;
    registries
        .filter_map(|r| r.ok())
        .map(|r| r.path().join(format!("TestU01Drv-{TESTU01DRV_VERSION}/TestU01-1.2.3")))
        .find(|p| p.join("include/bbattery.h").is_file())
}

/// Builds [`TESTU01_TESTS`] from xtask/src/testu01_tests.c and TestU01's C sources (compiled
/// once into target/tools/testu01/obj, two compilers at a time: about 15 s on two cores). Rebuilt
/// when the driver's source is newer than the binary.
fn build_testu01_tests(root: &Path) -> Result<()> {
    let out = root.join(TESTU01_TESTS);
    let driver = root.join("xtask/src/testu01_tests.c");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if out.is_file() && modified(&out) >= modified(&driver) {
        eprintln!("setup: warpmc-testu01: built ({TESTU01_TESTS})");
        return Ok(());
    }
    let sources = match testu01_sources() {
        Some(s) => s,
        None => {
            // TestU01Drv is installed but cargo's unpacked copy is gone: installing it again
            // unpacks it.
            eprintln!("setup: warpmc-testu01: TestU01's sources are not in cargo's registry, reinstalling TestU01Drv");
            run(&mut install_testu01drv(root, true))?;
            testu01_sources().context("TestU01's sources are not in cargo's registry after installing TestU01Drv")?
        }
    };
    eprintln!("setup: warpmc-testu01: compiling TestU01 1.2.3 from {} and {}", sources.display(), driver.display());
    let obj = root.join(TESTU01_ROOT).join("obj");
    std::fs::create_dir_all(&obj)?;
    let lib = obj.join("libtestu01.a");
    if !lib.is_file() {
        let mut files = Vec::new();
        for dir in ["mylib", "probdist", "testu01"] {
            for e in std::fs::read_dir(sources.join(dir))? {
                let p = e?.path();
                if p.extension().is_some_and(|x| x == "c") {
                    files.push(p);
                }
            }
        }
        files.sort();
        let include = sources.join("include");
        let compile = |f: &Path| -> Result<PathBuf> {
            let o = obj.join(f.file_stem().expect("a C file has a name")).with_extension("o");
            run(Command::new("cc").args(["-O2", "-w", "-c"]).arg("-I").arg(&include).arg(f).arg("-o").arg(&o))?;
            Ok(o)
        };
        let (a, b) = files.split_at(files.len() / 2);
        let (oa, ob) = std::thread::scope(|s| {
            let first = s.spawn(|| a.iter().map(|f| compile(f)).collect::<Result<Vec<_>>>());
            let second = b.iter().map(|f| compile(f)).collect::<Result<Vec<_>>>();
            (first.join().expect("the compiler thread does not panic"), second)
        });
        let objects: Vec<PathBuf> = oa?.into_iter().chain(ob?).collect();
        // An archive, so that the linker takes only what the driver needs (TestU01's sources
        // also hold a program's main and a few duplicated helpers).
        let partial = obj.join("libtestu01.a.part");
        let _ = std::fs::remove_file(&partial);
        run(Command::new("ar").arg("rcs").arg(&partial).args(&objects))?;
        std::fs::rename(&partial, &lib)?;
    }
    std::fs::create_dir_all(out.parent().expect("the binary has a folder"))?;
    run(Command::new("cc")
        .args(["-O2", "-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(sources.join("include"))
        .arg(&driver)
        .arg(&lib)
        .arg("-lm")
        .arg("-o")
        .arg(&out))
    .context("compiling warpmc-testu01 needs a C compiler (cc) and ar")?;
    Ok(())
}

/// Whether we run as root (`id -u` is 0).
fn is_root() -> bool {
    capture(Command::new("id").arg("-u")).is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

#[cfg(test)]
mod tests {
    use super::has_toolchain;
    use crate::ptx_pin::{is_dated_nightly, parse_ptx_toolchain};

    #[test]
    fn finds_exactly_the_pinned_toolchain() {
        let pin = "nightly-2026-05-20";
        let list = "stable-x86_64-unknown-linux-gnu (active, default)\nnightly-2026-05-20-x86_64-unknown-linux-gnu\n";
        assert!(has_toolchain(list, pin));
        assert!(has_toolchain("nightly-2026-05-20\n", pin));
        assert!(!has_toolchain("nightly-x86_64-unknown-linux-gnu (default)\n", pin));
        assert!(!has_toolchain("nightly-2026-05-19-x86_64-unknown-linux-gnu\n", pin));
        assert!(!has_toolchain("no installed toolchains\n", pin));
    }

    #[test]
    fn reads_the_pin_and_rejects_moving_channels() {
        let good = "[workspace]\nmembers = []\n[workspace.metadata.warpmc]\nptx-toolchain = \"nightly-2026-05-20\"\n";
        assert_eq!(parse_ptx_toolchain(good).unwrap(), "nightly-2026-05-20");
        let moving = good.replace("nightly-2026-05-20", "nightly");
        assert!(parse_ptx_toolchain(&moving).unwrap_err().contains("dated nightly"));
        assert!(parse_ptx_toolchain("[workspace]\n").is_err());
        assert!(is_dated_nightly("nightly-2026-10-30") && !is_dated_nightly("nightly-2026-1-30"));
    }

    #[test]
    fn the_workspace_pins_a_dated_nightly() {
        super::ptx_toolchain().unwrap();
    }
}
