//! Running commands, and the paths every command shares.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::thread;

use anyhow::{Context, Result, bail};

/// The workspace root: the parent of this crate's directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

/// `cargo`, the one that runs xtask when there is one, building into `<root>/target`.
pub fn cargo() -> Command {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(program);
    cmd.env("CARGO_TARGET_DIR", workspace_root().join("target"));
    cmd
}

/// A command as one line, for messages.
pub fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    if s.ends_with("/cargo") {
        s = "cargo".into();
    }
    for a in cmd.get_args() {
        let a = a.to_string_lossy();
        if a.is_empty() || a.contains(' ') {
            s += &format!(" '{a}'");
        } else {
            s += &format!(" {a}");
        }
    }
    s
}

/// Run with the terminal's stdin/stdout/stderr and return its exit status. Commands are echoed
/// on stderr, so that `run-pricing --json > FILE` keeps FILE clean.
pub fn status(cmd: &mut Command) -> Result<ExitStatus> {
    let shown = describe(cmd);
    eprintln!("$ {shown}");
    cmd.status().with_context(|| format!("could not start `{shown}`"))
}

/// Run with the terminal's stdio; fail unless it succeeds.
pub fn run(cmd: &mut Command) -> Result<()> {
    let shown = describe(cmd);
    let st = status(cmd)?;
    if !st.success() {
        bail!("`{shown}` failed ({st})");
    }
    Ok(())
}

/// Run quietly, capturing stdout and stderr (without checking the exit status).
pub fn capture(cmd: &mut Command) -> Result<Output> {
    let shown = describe(cmd);
    cmd.stdin(Stdio::null()).output().with_context(|| format!("could not start `{shown}`"))
}

/// Run, showing stdout and stderr as they come and also returning them (interleaved by line).
pub fn tee(cmd: &mut Command) -> Result<(ExitStatus, String)> {
    let shown = describe(cmd);
    eprintln!("$ {shown}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("could not start `{shown}`"))?;
    let out = child.stdout.take().expect("piped stdout");
    let err = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let tx2 = tx.clone();
    let t_out = thread::spawn(move || forward(out, std::io::stdout(), tx));
    let t_err = thread::spawn(move || forward(err, std::io::stderr(), tx2));
    let status = child.wait().with_context(|| format!("waiting for `{shown}`"))?;
    t_out.join().expect("stdout reader");
    t_err.join().expect("stderr reader");
    Ok((status, rx.into_iter().collect()))
}

/// Copy `from` to `to` line by line, sending each line to `lines` too.
fn forward(from: impl Read, mut to: impl Write, lines: std::sync::mpsc::Sender<String>) {
    let mut reader = BufReader::new(from);
    let mut line = Vec::new();
    while matches!(reader.read_until(b'\n', &mut line), Ok(n) if n > 0) {
        let _ = to.write_all(&line);
        let _ = to.flush();
        let _ = lines.send(String::from_utf8_lossy(&line).into_owned());
        line.clear();
    }
}

/// A heading for one step of a longer command.
pub fn heading(text: &str) {
    println!("\n==> {text}");
}

/// A byte count as MiB, for size messages.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}
