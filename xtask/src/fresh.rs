//! `cargo xtask fresh-check`: do the README's two commands work for a newcomer whose machine has
//! only rustup and python3? Not part of CI: it downloads the stable and nightly toolchains and
//! builds everything from scratch, which takes many minutes.
//!
//! Our own machines cannot answer that question: their toolchains, `~/.cargo` configuration and
//! `target/` folders hide whatever the project forgot to install or to say. So this command:
//!
//! 1. takes the committed state (`git rev-parse HEAD`; uncommitted changes are not checked, and it
//!    says so when there are some);
//! 2. clones it into a temporary folder (`warpmc-fresh-<unix seconds>` in the system's temp dir)
//!    and reads the commands of the first ```` ```sh ```` block after `## On a fresh machine` in the
//!    clone's README (exactly two, each starting with `cargo `);
//! 3. builds a clean environment: an empty `HOME`, empty `RUSTUP_HOME` and `CARGO_HOME`, and a `PATH`
//!    of `<cargo-home>/bin` then the system directories of the current `PATH` (outside `$HOME`)
//!    that hold no `cargo`, `rustc` or `rustup`; python3 and `cc` must still be found there;
//! 4. installs rustup and the stable toolchain into the empty homes with this machine's own rustup
//!    binary, copied as `rustup-init` (rustup acts as its installer under that name);
//! 5. runs both commands in the clone with that environment, through both even when the first
//!    fails, timing each;
//! 6. prints one line per step, the commit, the toolchains that ended up in the fresh
//!    `RUSTUP_HOME` and the python3 used, and fails if any step did.
//!
//! Everything the steps print also goes to `fresh-check.log` in the temporary folder. The folder
//! is deleted at the end, on failure too, unless `--keep` is given; the log is then copied to
//! `target/fresh-check.log` first. An interrupted run (Ctrl-C) leaves the folder behind.

use std::ffi::{OsStr, OsString};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};

use crate::util::{capture, describe, heading, run, tee, workspace_root};

/// The README section whose first code block holds the newcomer's commands.
const README_HEADING: &str = "## On a fresh machine";
/// The log inside the temporary folder, and its copy under `target/` when the folder goes.
const LOG: &str = "fresh-check.log";
/// What a directory must not hold to stay on the clean `PATH`.
const RUST_TOOLS: [&str; 3] = ["cargo", "rustc", "rustup"];

pub fn fresh_check(keep: bool) -> Result<()> {
    heading("1/6 the commit to check");
    let commit = git(&["rev-parse", "HEAD"])?;
    let dirty = !git(&["status", "--porcelain"])?.is_empty();
    println!("commit: {commit}");
    if dirty {
        println!("warning: the working tree has uncommitted changes; only the committed state ({commit}) is checked");
    }

    let stamp = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    let scratch = std::env::temp_dir().join(format!("warpmc-fresh-{stamp}"));
    fs::create_dir(&scratch).with_context(|| format!("cannot create the temporary folder {}", scratch.display()))?;
    let result = check(&scratch, &commit, dirty);
    clean_up(&scratch, keep);
    result
}

/// Steps 2 to 6, everything that happens in the temporary folder `scratch`.
fn check(scratch: &Path, commit: &str, dirty: bool) -> Result<()> {
    let log = scratch.join(LOG);
    let clone = scratch.join("warpmc");

    heading(&format!("2/6 a clone of {commit} in {}", scratch.display()));
    run(Command::new("git").args(["clone", "--no-local", "--quiet"]).arg(workspace_root()).arg(&clone))?;
    run(Command::new("git").arg("-C").arg(&clone).args(["checkout", "--quiet", "--detach", commit]))?;
    let readme_path = clone.join("README.md");
    let readme = fs::read_to_string(&readme_path).with_context(|| format!("cannot read {}", readme_path.display()))?;
    let commands =
        readme_commands(&readme).with_context(|| format!("cannot take the commands of {}", readme_path.display()))?;
    for c in &commands {
        println!("README command: {c}");
    }

    heading("3/6 a clean environment: empty HOME, RUSTUP_HOME and CARGO_HOME; no other Rust on PATH");
    let env = CleanEnv::new(scratch)?;

    heading("4/6 rustup-init: rustup and the stable toolchain into the empty homes");
    let rustup = find_executable(&split_path(&std::env::var_os("PATH").unwrap_or_default()), "rustup")
        .context("no `rustup` on PATH: this machine's rustup is copied to install the fresh one")?;
    let rustup = fs::canonicalize(&rustup).with_context(|| format!("cannot resolve {}", rustup.display()))?;
    let rustup_init = scratch.join("rustup-init");
    fs::copy(&rustup, &rustup_init)
        .with_context(|| format!("cannot copy {} to {}", rustup.display(), rustup_init.display()))?;
    println!("rustup-init: a copy of {}", rustup.display());
    let mut init = env.command(&rustup_init);
    init.args(["-y", "--no-modify-path", "--profile", "minimal", "--default-toolchain", "stable"])
        // rustup-init stops to ask when it finds another cargo or rustc. The clean PATH should have
        // none; this keeps a miss from hanging the check.
        .env("RUSTUP_INIT_SKIP_PATH_CHECK", "yes")
        .current_dir(&env.home);
    let mut steps = vec![Step::run("rustup-init", &mut init, &log)?];

    if steps[0].passed() {
        env.check_toolchain()?;
        for (i, c) in commands.iter().enumerate() {
            heading(&format!("{}/6 `{c}` (README command {} of 2)", i + 5, i + 1));
            let mut cmd = env.command(&env.bash);
            cmd.arg("-c").arg(c).current_dir(&clone);
            steps.push(Step::run(c, &mut cmd, &log)?);
        }
    } else {
        steps.extend(commands.iter().map(|c| Step { name: c.clone(), outcome: Outcome::NotRun }));
    }

    heading("report");
    println!("commit      {commit}{}", if dirty { " (uncommitted changes not checked)" } else { "" });
    println!("python3     {}", env.python3);
    let toolchains = env.toolchains();
    for (i, t) in toolchains.iter().enumerate() {
        println!("{:<12}{t}", if i == 0 { "toolchains" } else { "" });
    }
    let width = steps.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for s in &steps {
        println!("{:<width$}  {}", s.name, s.outcome);
    }
    let failed = steps.iter().filter(|s| matches!(s.outcome, Outcome::Failed(..))).count();
    if failed > 0 {
        let not_run = steps.iter().filter(|s| matches!(s.outcome, Outcome::NotRun)).count();
        let not_run = if not_run > 0 { format!(", {not_run} not run") } else { String::new() };
        bail!("fresh-check: {failed} of {} steps failed on a fresh toolchain{not_run}", steps.len());
    }
    println!("\nxtask fresh-check: both README commands pass on a fresh toolchain ({commit})");
    Ok(())
}

/// Keep the temporary folder, or delete it after copying its log to `target/`.
fn clean_up(scratch: &Path, keep: bool) {
    let log = scratch.join(LOG);
    if keep {
        println!("\nkept the temporary folder: {} (log: {})", scratch.display(), log.display());
        return;
    }
    if log.exists() {
        let target = workspace_root().join("target");
        let copy = target.join(LOG);
        match fs::create_dir_all(&target).and_then(|()| fs::copy(&log, &copy)) {
            Ok(_) => println!("\nlog: {}", copy.display()),
            Err(e) => eprintln!("\nxtask: warning: cannot copy {} to {}: {e}", log.display(), copy.display()),
        }
    }
    if let Err(e) = fs::remove_dir_all(scratch) {
        eprintln!("xtask: warning: cannot delete the temporary folder {}: {e}", scratch.display());
    }
}

/// `git ARGS` in the workspace root, its trimmed stdout; fails unless git succeeds.
fn git(args: &[&str]) -> Result<String> {
    let mut cmd = Command::new("git");
    cmd.args(args);
    let out = capture(&mut cmd)?;
    if !out.status.success() {
        bail!("`{}` failed ({}): {}", describe(&cmd), out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The commands of the first code block after the `## On a fresh machine` heading, which must be
/// a ```` ```sh ```` block of exactly two commands starting with `cargo `: its non-empty lines,
/// without their trailing `# comment`, trimmed.
fn readme_commands(readme: &str) -> Result<Vec<String>> {
    let mut lines = readme.lines().skip_while(|l| l.trim_end() != README_HEADING);
    if lines.next().is_none() {
        bail!("no `{README_HEADING}` heading");
    }
    let fence = loop {
        match lines.next() {
            None => bail!("no code block after `{README_HEADING}`"),
            Some(l) if l.starts_with("## ") => {
                bail!("no code block in `{README_HEADING}` (the next section, `{l}`, comes first)")
            }
            Some(l) if l.trim_start().starts_with("```") => break l.trim(),
            Some(_) => {}
        }
    };
    if fence != "```sh" {
        bail!("the first code block after `{README_HEADING}` opens with `{fence}`, not ```sh");
    }
    let mut commands = Vec::new();
    let mut closed = false;
    for line in lines {
        if line.trim_start().starts_with("```") {
            closed = true;
            break;
        }
        let command = strip_comment(line).trim();
        if !command.is_empty() {
            commands.push(command.to_string());
        }
    }
    if !closed {
        bail!("the ```sh block after `{README_HEADING}` is not closed");
    }
    if commands.len() != 2 || !commands.iter().all(|c| c.starts_with("cargo ")) {
        bail!(
            "the ```sh block after `{README_HEADING}` should hold two commands starting with `cargo `; found {}: {commands:?}",
            commands.len()
        );
    }
    Ok(commands)
}

/// A shell line without its trailing comment: from a `#` at the start or after whitespace.
fn strip_comment(line: &str) -> &str {
    let mut prev_is_space = true;
    for (i, c) in line.char_indices() {
        if c == '#' && prev_is_space {
            return &line[..i];
        }
        prev_is_space = c.is_whitespace();
    }
    line
}

/// The environment of the fresh machine: what `rustup-init` and the README commands run with.
struct CleanEnv {
    /// Every variable the commands get (they start from an empty environment).
    vars: Vec<(OsString, OsString)>,
    /// The `PATH` directories: `<cargo-home>/bin`, then the system ones kept.
    dirs: Vec<PathBuf>,
    /// The empty `HOME`.
    home: PathBuf,
    cargo_bin: PathBuf,
    bash: PathBuf,
    /// The python3 the commands will find, with its version, for the report.
    python3: String,
}

impl CleanEnv {
    /// Make the empty homes in `scratch`, choose the `PATH`, and check that python3, `cc` and bash
    /// are on it.
    fn new(scratch: &Path) -> Result<CleanEnv> {
        let home = scratch.join("home");
        let rustup_home = scratch.join("rustup-home");
        let cargo_home = scratch.join("cargo-home");
        for dir in [&home, &rustup_home, &cargo_home] {
            fs::create_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let cargo_bin = cargo_home.join("bin");

        let current = split_path(&std::env::var_os("PATH").unwrap_or_default());
        let real_home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let (kept, left_out) = system_dirs(&current, real_home.as_deref());
        for (dir, why) in &left_out {
            println!("left out of PATH: {} ({why})", dir.display());
        }
        let mut dirs = vec![cargo_bin.clone()];
        dirs.extend(kept);
        let path = std::env::join_paths(&dirs).context("cannot join the clean PATH")?;
        println!("PATH={}", path.to_string_lossy());

        // rustup notes that this HOME is not the user's home ("you may be using sudo") and goes on.
        let mut vars: Vec<(OsString, OsString)> = vec![
            ("HOME".into(), home.clone().into()),
            ("RUSTUP_HOME".into(), rustup_home.into()),
            ("CARGO_HOME".into(), cargo_home.into()),
            ("PATH".into(), path),
        ];
        for name in ["USER", "LANG", "LC_ALL", "TERM", "TMPDIR"] {
            if let Some(value) = std::env::var_os(name) {
                vars.push((name.into(), value));
            }
        }

        let python3_path = require(&dirs, &left_out, "python3", "the project's setup installs ptxas with pip")?;
        require(&dirs, &left_out, "cc", "rustc links with it")?;
        let bash = require(&dirs, &left_out, "bash", "the README commands run in it")?;
        match find_executable(&dirs, "git") {
            Some(git) => println!("git: {}", git.display()),
            None => println!("git: none on the clean PATH (the README commands should not need it)"),
        }
        let mut env = CleanEnv { vars, dirs, home, cargo_bin, bash, python3: String::new() };
        let version = capture(env.command(&python3_path).arg("--version")).ok().filter(|o| o.status.success());
        let version = version.map(|o| {
            // Python 2 printed its version on stderr.
            let text = if o.stdout.is_empty() { o.stderr } else { o.stdout };
            String::from_utf8_lossy(&text).trim().to_string()
        });
        env.python3 = format!("{} ({})", python3_path.display(), version.as_deref().unwrap_or("version unknown"));
        println!("python3: {}", env.python3);
        Ok(env)
    }

    /// `program` with this environment only.
    fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear().envs(self.vars.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// After rustup-init: `cargo` and `rustc` on the clean `PATH` must be the fresh ones.
    fn check_toolchain(&self) -> Result<()> {
        for tool in ["cargo", "rustc"] {
            let expected = self.cargo_bin.join(tool);
            match find_executable(&self.dirs, tool) {
                Some(found) if found == expected => println!("{tool}: {}", found.display()),
                Some(found) => bail!("`{tool}` on the clean PATH is {}, not {}", found.display(), expected.display()),
                None => bail!("rustup-init did not install `{tool}` into {}", self.cargo_bin.display()),
            }
        }
        Ok(())
    }

    /// The toolchains in the fresh `RUSTUP_HOME` (`rustup toolchain list`), each with its
    /// `rustc --version`; a line saying why when they cannot be listed.
    fn toolchains(&self) -> Vec<String> {
        let rustup = self.cargo_bin.join("rustup");
        if !rustup.exists() {
            return vec![format!("(none: there is no {})", rustup.display())];
        }
        let mut list = self.command(rustup);
        list.args(["toolchain", "list"]).current_dir(&self.home);
        let out = match capture(&mut list) {
            Ok(out) if out.status.success() => out,
            Ok(out) => return vec![format!("(`rustup toolchain list` failed: {})", out.status)],
            Err(e) => return vec![format!("({e:#})")],
        };
        let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|line| {
                let name = line.split_whitespace().next().unwrap_or_default();
                let mut rustc = self.command(self.cargo_bin.join("rustc"));
                rustc.arg(format!("+{name}")).arg("--version").current_dir(&self.home);
                match capture(&mut rustc) {
                    Ok(o) if o.status.success() => format!("{line}: {}", String::from_utf8_lossy(&o.stdout).trim()),
                    _ => line.to_string(),
                }
            })
            .collect();
        if lines.is_empty() { vec!["(none)".to_string()] } else { lines }
    }
}

/// The entries of a `PATH` value.
fn split_path(path: &OsStr) -> Vec<PathBuf> {
    std::env::split_paths(path).collect()
}

/// The directories of `path` that a fresh machine would also have: absolute, existing, outside
/// `home` (the clean environment has another `HOME`), and holding none of cargo, rustc and rustup.
/// Returns them in order, without repeats, and the others with the reason they were left out.
fn system_dirs(path: &[PathBuf], home: Option<&Path>) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
    let mut kept: Vec<PathBuf> = Vec::new();
    let mut left_out: Vec<(PathBuf, String)> = Vec::new();
    for dir in path {
        if kept.contains(dir) || left_out.iter().any(|(d, _)| d == dir) {
            continue;
        }
        let why = if !dir.is_absolute() {
            Some("not an absolute path".to_string())
        } else if !dir.is_dir() {
            Some("not a directory".to_string())
        } else if let Some(tool) = RUST_TOOLS.iter().find(|t| dir.join(t).symlink_metadata().is_ok()) {
            Some(format!("holds {tool}"))
        } else if home.is_some_and(|h| dir.starts_with(h)) {
            Some("under $HOME".to_string())
        } else {
            None
        };
        match why {
            Some(why) => left_out.push((dir.clone(), why)),
            None => kept.push(dir.clone()),
        }
    }
    (kept, left_out)
}

/// The first executable file called `name` in `dirs`.
fn find_executable(dirs: &[PathBuf], name: &str) -> Option<PathBuf> {
    dirs.iter()
        .map(|d| d.join(name))
        .find(|p| fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// `name` on the clean `PATH` `dirs`, or an error that says why it is missing (`what_for`), and
/// where it is when only a left-out directory has it.
fn require(dirs: &[PathBuf], left_out: &[(PathBuf, String)], name: &str, what_for: &str) -> Result<PathBuf> {
    if let Some(found) = find_executable(dirs, name) {
        return Ok(found);
    }
    let elsewhere: Vec<String> = left_out
        .iter()
        .filter(|(d, _)| find_executable(std::slice::from_ref(d), name).is_some())
        .map(|(d, why)| format!("{} ({why})", d.display()))
        .collect();
    if elsewhere.is_empty() {
        bail!("no `{name}` on the clean PATH ({what_for}); a fresh machine needs one in a system directory");
    }
    bail!(
        "`{name}` ({what_for}) is only in {}, left out of the clean PATH so that neither another Rust toolchain \
         nor anything of the real HOME leaks in; a fresh machine has `{name}` in a system directory without cargo, \
         rustc or rustup: install it there (Debian: apt-get install python3 gcc)",
        elsewhere.join(", ")
    );
}

/// One step of the report.
struct Step {
    name: String,
    outcome: Outcome,
}

enum Outcome {
    Passed(Duration),
    Failed(ExitStatus, Duration),
    NotRun,
}

impl Step {
    /// Run `cmd` (output shown as it comes and appended to `log`), timing it.
    fn run(name: &str, cmd: &mut Command, log: &Path) -> Result<Step> {
        let start = Instant::now();
        let (status, output) = tee(cmd)?;
        let elapsed = start.elapsed();
        let outcome = if status.success() { Outcome::Passed(elapsed) } else { Outcome::Failed(status, elapsed) };
        let entry = format!("$ {}\n{output}[{name}: {outcome}]\n\n", describe(cmd));
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut f| f.write_all(entry.as_bytes()))
            .with_context(|| format!("cannot append to {}", log.display()))?;
        Ok(Step { name: name.to_string(), outcome })
    }

    fn passed(&self) -> bool {
        matches!(self.outcome, Outcome::Passed(_))
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Passed(t) => write!(f, "ok ({:.1} s)", t.as_secs_f64()),
            Outcome::Failed(status, t) => match status.code() {
                Some(code) => write!(f, "FAILED (exit {code}, {:.1} s)", t.as_secs_f64()),
                None => write!(f, "FAILED ({status}, {:.1} s)", t.as_secs_f64()),
            },
            Outcome::NotRun => write!(f, "not run (rustup-init failed)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_two_commands_of_the_fresh_machine_block() {
        let readme = "# warpmc\n\n```sh\ncargo build\n```\n\n## On a fresh machine\n\nYou need rustup.\n\n\
                      ```sh\ncargo xtask run-pricing     # the main job\n\ncargo xtask test  # every test\n```\n\n\
                      ```sh\ncargo xtask bench\n```\n";
        let commands = readme_commands(readme).unwrap();
        assert_eq!(commands, ["cargo xtask run-pricing", "cargo xtask test"]);
    }

    #[test]
    fn fails_without_the_heading_or_with_other_commands() {
        let no_heading = "# warpmc\n\n## Install\n\n```sh\ncargo xtask run-pricing\ncargo xtask test\n```\n";
        let e = readme_commands(no_heading).unwrap_err();
        assert!(e.to_string().contains("no `## On a fresh machine` heading"), "{e}");

        let three = "## On a fresh machine\n```sh\ncargo a\ncargo b\ncargo c\n```\n";
        assert!(readme_commands(three).unwrap_err().to_string().contains("found 3"));
        let not_cargo = "## On a fresh machine\n```sh\ncargo a\nmake test\n```\n";
        assert!(readme_commands(not_cargo).is_err());
        let text_first = "## On a fresh machine\n```text\nout\n```\n```sh\ncargo a\ncargo b\n```\n";
        assert!(readme_commands(text_first).unwrap_err().to_string().contains("```text"));
        let next_section = "## On a fresh machine\nnone here\n## Next\n```sh\ncargo a\ncargo b\n```\n";
        assert!(readme_commands(next_section).is_err());
    }

    #[test]
    fn strips_shell_comments_only() {
        assert_eq!(strip_comment("cargo xtask test   # every test"), "cargo xtask test   ");
        assert_eq!(strip_comment("# a comment"), "");
        assert_eq!(strip_comment("cargo run -- --label a#b"), "cargo run -- --label a#b");
    }

    #[test]
    fn the_project_readme_has_its_two_commands() {
        let readme = fs::read_to_string(workspace_root().join("README.md")).unwrap();
        let commands = readme_commands(&readme).unwrap();
        assert!(commands.iter().all(|c| c.starts_with("cargo xtask ")), "{commands:?}");
    }

    #[test]
    fn keeps_only_system_dirs_without_rust() {
        let base = std::env::temp_dir().join(format!("warpmc-fresh-test-{}", std::process::id()));
        let (rust, plain, home) = (base.join("rust"), base.join("plain"), base.join("home"));
        let home_bin = home.join("bin");
        for d in [&rust, &plain, &home_bin] {
            fs::create_dir_all(d).unwrap();
        }
        fs::write(rust.join("rustc"), "").unwrap();
        let path = [rust.clone(), plain.clone(), home_bin.clone(), plain.clone(), base.join("missing"), "rel".into()];
        let (kept, left_out) = system_dirs(&path, Some(&home));
        fs::remove_dir_all(&base).unwrap();
        assert_eq!(kept, [plain]);
        let reasons: Vec<&str> = left_out.iter().map(|(_, why)| why.as_str()).collect();
        assert_eq!(reasons, ["holds rustc", "under $HOME", "not a directory", "not an absolute path"]);
    }
}
