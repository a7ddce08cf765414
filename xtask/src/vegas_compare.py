#!/usr/bin/env python3
"""Compare `warpmc integrate` with Lepage's `vegas` (Python package) on warpmc's built-in integrands.

For every family and dimension this runs warpmc (``--json``), reads the integrand's parameters
(a_i, u_i, width) and the closed-form value from its output, integrates the same function with
`vegas` using the same evaluations per iteration, iterations, warm-up, alpha and beta, and prints
a Markdown table: each side's error bar, |estimate - exact| / error, evaluations and wall time,
the ratio of the error bars (warpmc / vegas) and of the wall times (vegas / warpmc).

    python3 xtask/src/vegas_compare.py --warpmc target/release/warpmc --backend gpu \\
        --dims 4,8 --evals-per-iteration 1000000 --iterations 12 --out cmp.md --json cmp.json

Notes on matching the two:

* Grid increments: warpmc uses ``--bins`` (128) increments per axis. vegas has no way to fix the
  count: ``Integrator.set`` takes ``ni = min(neval / 10, maxinc_axis)`` and rounds it down to a
  multiple of the strata per axis, ``ninc = floor(ni / nstrat) * nstrat`` (or ``nstrat`` itself
  when ``nstrat > ni``). We pass ``maxinc_axis=--bins`` (128), so vegas gets at most 128 increments
  per axis, exactly 128 only when its strata per axis divide 128. The increments and strata
  vegas actually used are recorded (JSON: vegas.ninc, vegas.nstrat, vegas.nhcube).
* Stratification: left at vegas's defaults (``neval_frac=0.75``: about neval/8 hypercubes with 2
  points each plus 75% of neval redistributed), where warpmc takes the largest s with
  s^d <= N/4 (and <= 2^22). Both are "VEGAS+", not the same allocation rule.
* Evaluations: counted inside the vegas integrand (the sum of batch sizes, warm-up included);
  ``RAvg.sum_neval`` of both calls is recorded next to it as a cross-check. The count is larger
  by one per ``Integrator`` call: vegas first evaluates a single point to learn the shape of the
  integrand's output (JSON: vegas.probe_evals). warpmc's ``evals`` is
  its own count, warm-up included; both use at most N per iteration.
* Wall time: vegas is timed with ``time.perf_counter`` around Integrator construction, warm-up and
  the measured iterations (one Python process by default; ``nproc=1`` so that the integrand's
  counter sees every batch; ``--vegas-nproc K`` spreads the batches over K worker processes and
  takes the count from ``sum_neval``). warpmc's time is its JSON ``wall_seconds`` (the integration itself, device set-up
  and process start excluded); the subprocess's wall time is recorded as well.
* Random numbers: vegas draws from gvar's generator, seeded with ``gvar.ranseed(--seed)``.

Failures are reported in the row (the error text), never replaced by numbers. The exit status
is 1 when any run failed or a cross-check of the Python integrands failed, 0 otherwise.
"""

import argparse
import datetime
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time
import traceback

import numpy as np

FAMILIES = [
    "oscillatory",
    "product-peak",
    "corner-peak",
    "gaussian",
    "continuous",
    "discontinuous",
    "narrow-gaussians",
]

# |mean - exact| / sdev above this counts as a (per-row) disagreement in the cross-check note.
Z_WARN = 3.0
# Relative difference between warpmc's closed form and the independent one computed here.
EXACT_RTOL = 1e-9


# --------------------------------------------------------------------------------------------
# The integrands, numpy-vectorised over x of shape (n, d), as documented by warpmc.
# --------------------------------------------------------------------------------------------

def make_integrand(family, a, u, width):
    """Return f(x) for x of shape (n, d) -> shape (n,)."""
    a = np.asarray(a, dtype=float)
    u = np.asarray(u, dtype=float)
    d = len(a)
    if family == "oscillatory":
        phase = 2.0 * math.pi * u[0]

        def f(x):
            return np.cos(phase + x @ a)
    elif family == "product-peak":
        inv_a2 = a ** -2.0

        def f(x):
            return np.prod(1.0 / (inv_a2 + (x - u) ** 2), axis=1)
    elif family == "corner-peak":
        def f(x):
            return (1.0 + x @ a) ** (-(d + 1))
    elif family == "gaussian":
        a2 = a * a

        def f(x):
            return np.exp(-(((x - u) ** 2) @ a2))
    elif family == "continuous":
        def f(x):
            return np.exp(-(np.abs(x - u) @ a))
    elif family == "discontinuous":
        def f(x):
            out = np.exp(x @ a)
            zero = x[:, 0] > u[0]
            if d > 1:
                zero |= x[:, 1] > u[1]
            out[zero] = 0.0
            return out
    elif family == "narrow-gaussians":
        w2 = width * width
        norm = (width * math.sqrt(math.pi)) ** (-d)

        def f(x):
            s1 = np.sum((x - 1.0 / 3.0) ** 2, axis=1)
            s2 = np.sum((x - 2.0 / 3.0) ** 2, axis=1)
            return norm * 0.5 * (np.exp(-s1 / w2) + np.exp(-s2 / w2))
    else:
        raise ValueError(f"unknown family {family!r}")
    return f


class BatchIntegrand:
    """A module-level (so picklable) batch integrand, for vegas with ``nproc > 1``: its worker
    processes receive the integrand by pickling."""

    def __init__(self, family, a, u, width):
        self.args = (family, list(a), list(u), width)
        self.f = make_integrand(*self.args)

    def __getstate__(self):
        return self.args

    def __setstate__(self, state):
        self.args = state
        self.f = make_integrand(*state)

    def __call__(self, x):
        return self.f(x)


def independent_exact(family, a, u, width):
    """The closed form computed here (mpmath, 50 digits), independently of warpmc's code.

    Returns (value, method) or (None, reason)."""
    import mpmath as mp

    mp.mp.dps = 50
    a = [mp.mpf(x) for x in a]
    u = [mp.mpf(x) for x in u]
    d = len(a)
    w = mp.mpf(width)
    if family == "oscillatory":
        # Re[e^{2 pi i u_1} prod (e^{i a_j} - 1) / (i a_j)]
        z = mp.expj(2 * mp.pi * u[0])
        for aj in a:
            z *= (mp.expj(aj) - 1) / (1j * aj)
        return float(mp.re(z)), "complex product"
    if family == "product-peak":
        return float(mp.fprod(aj * (mp.atan(aj * (1 - uj)) + mp.atan(aj * uj)) for aj, uj in zip(a, u))), "atan"
    if family == "gaussian":
        return float(mp.fprod(mp.sqrt(mp.pi) / (2 * aj) * (mp.erf(aj * (1 - uj)) + mp.erf(aj * uj))
                              for aj, uj in zip(a, u))), "erf"
    if family == "continuous":
        return float(mp.fprod((2 - mp.exp(-aj * uj) - mp.exp(-aj * (1 - uj))) / aj for aj, uj in zip(a, u))), "exp"
    if family == "discontinuous":
        return float(mp.fprod((mp.exp(aj * (uj if j < 2 else 1)) - 1) / aj
                              for j, (aj, uj) in enumerate(zip(a, u)))), "exp"
    if family == "narrow-gaussians":
        def one(c):
            return mp.fprod((mp.erf((1 - c) / w) + mp.erf(c / w)) / 2 for _ in range(d))
        return float((one(mp.mpf(1) / 3) + one(mp.mpf(2) / 3)) / 2), "erf"
    if family == "corner-peak":
        # Inclusion-exclusion: (1 / (d! prod a)) sum_v (-1)^|v| / (1 + a.v), in 50 digits.
        norm = mp.factorial(d) * mp.fprod(a)
        if all(x == a[0] for x in a):
            s = mp.fsum((-1) ** k * mp.binomial(d, k) / (1 + k * a[0]) for k in range(d + 1))
            return float(s / norm), "inclusion-exclusion (equal a)"
        if d <= 16:
            s = mp.mpf(0)
            for v in range(1 << d):
                dot = mp.fsum(a[j] for j in range(d) if v >> j & 1)
                s += (-1) ** bin(v).count("1") / (1 + dot)
            return float(s / norm), "inclusion-exclusion"
        return None, "not computed (unequal a_i, d > 16)"
    return None, f"unknown family {family!r}"


# --------------------------------------------------------------------------------------------
# The two runs.
# --------------------------------------------------------------------------------------------

def tail(text, n=400):
    text = (text or "").strip()
    return text if len(text) <= n else "..." + text[-n:]


def run_warpmc(args, family, dim):
    cmd = [
        args.warpmc, "integrate", "--json",
        "--backend", args.backend,
        "--integrand", family,
        "--dim", str(dim),
        "--evals-per-iteration", str(args.evals_per_iteration),
        "--iterations", str(args.iterations),
        "--warmup", str(args.warmup),
        "--bins", str(args.bins),
        "--alpha", repr(args.alpha),
        "--beta", repr(args.beta),
        "--seed", str(args.seed),
    ]
    for p in args.param:
        cmd += ["--param", p]
    for extra in args.warpmc_arg:
        cmd += shlex.split(extra)
    out = {"command": shlex.join(cmd)}
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        out["error"] = f"warpmc timed out after {args.timeout} s"
        return out
    except OSError as e:
        out["error"] = f"warpmc could not start: {e}"
        return out
    out["process_wall_seconds"] = time.perf_counter() - t0
    if proc.returncode != 0:
        out["error"] = f"warpmc exit {proc.returncode}: {tail(proc.stderr) or tail(proc.stdout)}"
        return out
    try:
        j = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        out["error"] = f"warpmc printed no valid JSON ({e}): {tail(proc.stdout)}"
        return out
    try:
        integrand = j["integrand"]
        est, err, exact = float(j["estimate"]), float(j["std_error"]), float(j["exact"])
        out.update(
            estimate=est,
            std_error=err,
            exact=exact,
            abs_z=abs(est - exact) / err if err > 0 else (0.0 if est == exact else math.inf),
            z=j.get("z"),
            chi2_per_dof=j.get("chi2_per_dof"),
            dof=j.get("dof"),
            evals=int(j["evals"]),
            iterations=j.get("iterations"),
            wall_seconds=float(j["wall_seconds"]),
            evals_per_second=j.get("evals_per_second"),
            backend=j.get("backend"),
            strata=j.get("strata"),
            cubes=j.get("cubes"),
            stopped_by=j.get("stopped_by"),
            integrand=integrand,
        )
        if len(integrand["a"]) != dim or len(integrand["u"]) != dim:
            raise ValueError(f"integrand block has {len(integrand['a'])} a, {len(integrand['u'])} u for dim {dim}")
    except (KeyError, TypeError, ValueError) as e:
        out["error"] = f"warpmc JSON lacks or mangles a field ({type(e).__name__}: {e})"
    if proc.stderr.strip():
        out["stderr"] = tail(proc.stderr, 2000)
    return out


def run_vegas(args, family, dim, integrand):
    import gvar
    import vegas

    out = {}
    try:
        width = float(integrand.get("width", 0.1))
        count = [0]
        if args.vegas_nproc == 1:
            fn = make_integrand(family, integrand["a"], integrand["u"], width)

            @vegas.lbatchintegrand
            def f(x):
                count[0] += x.shape[0]
                return fn(x)
        else:
            # Worker processes evaluate the batches: no counter sees them (sum_neval counts).
            f = vegas.lbatchintegrand(BatchIntegrand(family, integrand["a"], integrand["u"], width))

        gvar.ranseed(args.seed)
        n = args.evals_per_iteration
        t0 = time.perf_counter()
        # maxinc_axis caps the grid increments per axis (vegas rounds them down to a multiple of
        # the strata per axis; see the module docstring). nproc=1 (the default) keeps every
        # batch in this process, where the counter above sees it.
        integ = vegas.Integrator(dim * [[0.0, 1.0]], maxinc_axis=args.bins, alpha=args.alpha,
                                 beta=args.beta, nproc=args.vegas_nproc)
        warm_neval = 0
        if args.warmup > 0:
            warm = integ(f, nitn=args.warmup, neval=n)
            warm_neval = int(warm.sum_neval)
        result = integ(f, nitn=args.iterations - args.warmup, neval=n)
        wall = time.perf_counter() - t0
        mean, sdev = float(result.mean), float(result.sdev)
        out.update(
            mean=mean,
            sdev=sdev,
            chi2_per_dof=float(result.chi2 / result.dof) if result.dof > 0 else None,
            dof=int(result.dof),
            Q=float(result.Q) if result.dof > 0 else None,
            evals=int(count[0]) if args.vegas_nproc == 1 else None,
            nproc=args.vegas_nproc,
            sum_neval=warm_neval + int(result.sum_neval),
            wall_seconds=wall,
            ninc=[int(x) for x in integ.map.ninc],
            nstrat=[int(x) for x in integ.nstrat],
            nhcube=int(integ.nhcube),
            itn=[[float(r.mean), float(r.sdev)] for r in result.itn_results],
        )
    except Exception as e:  # noqa: BLE001 -- any failure goes into the row
        out["error"] = f"vegas failed: {type(e).__name__}: {e}"
        out["traceback"] = traceback.format_exc()
    return out


# --------------------------------------------------------------------------------------------
# Output.
# --------------------------------------------------------------------------------------------

def cpu_name():
    name = platform.processor()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return name or platform.machine() or "unknown CPU"


def g(x, fmt):
    return "—" if x is None else format(x, fmt)


def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(rows):
    head = [
        "family", "d",
        "warpmc err", "warpmc \\|Δ\\|/err", "warpmc χ²/dof", "warpmc evals", "warpmc wall s",
        "vegas err", "vegas \\|Δ\\|/err", "vegas χ²/dof", "vegas evals", "vegas wall s",
        "err w/v", "wall v/w", "w err ≤ 1.5× v", "notes",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
    for r in rows:
        w, v, notes = r["warpmc"], r["vegas"], list(r["notes"])
        cells = [r["family"], str(r["dim"])]
        if "error" in w and "std_error" not in w:
            cells += ["FAILED"] + ["—"] * 4
        else:
            cells += [g(w["std_error"], ".3e"), g(w["abs_z"], ".2f"), g(w["chi2_per_dof"], ".2f"),
                      str(w["evals"]), g(w["wall_seconds"], ".3f")]
        if "error" in v or "sdev" not in v:
            cells += ["FAILED" if "error" in v else "—"] + ["—"] * 4
        else:
            cells += [g(v["sdev"], ".3e"), g(v["abs_z"], ".2f"), g(v["chi2_per_dof"], ".2f"),
                      str(v["evals"]), g(v["wall_seconds"], ".3f")]
        cells += [g(r.get("err_ratio"), ".3f"), g(r.get("wall_ratio"), ".2f")]
        within = r.get("within_1_5x")
        cells.append("—" if within is None else ("yes" if within else "**no**"))
        cells.append(md_cell("; ".join(notes)) if notes else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_list(text, name):
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        sys.exit(f"--{name}: expected a comma-separated list of integers, not {text!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warpmc", required=True, help="path to the warpmc binary")
    ap.add_argument("--backend", default="cpu", choices=["cpu", "gpu", "auto"], help="warpmc's backend (default cpu)")
    ap.add_argument("--dims", default="4,8", help="comma-separated dimensions (default 4,8)")
    ap.add_argument("--evals-per-iteration", type=int, default=1_000_000, help="N for both (default 10^6)")
    ap.add_argument("--iterations", type=int, default=12, help="M, warm-up included (default 12)")
    ap.add_argument("--warmup", type=int, default=2, help="W leading iterations left out of the estimate (default 2)")
    ap.add_argument("--bins", type=int, default=128,
                    help="warpmc --bins; vegas maxinc_axis (an upper bound there, see above) (default 128)")
    ap.add_argument("--alpha", type=float, default=0.5, help="grid damping for both (default 0.5)")
    ap.add_argument("--beta", type=float, default=0.75, help="stratification damping for both (default 0.75)")
    ap.add_argument("--seed", type=int, default=1, help="warpmc --seed and gvar.ranseed (default 1)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="passed to warpmc as --param (repeatable); vegas reads the result from warpmc's JSON")
    ap.add_argument("--warpmc-arg", action="append", default=[], metavar="ARGS",
                    help="extra warpmc arguments, shell-split (repeatable), e.g. '--threads 8' or '--gpus all'")
    ap.add_argument("--vegas-nproc", type=int, default=1,
                    help="vegas's nproc: worker processes that evaluate the batches (default 1; with more, "
                         "evaluations are taken from sum_neval plus vegas's one-point probe per call)")
    ap.add_argument("--families", default="all", help="all or a comma-separated list of: " + ", ".join(FAMILIES))
    ap.add_argument("--timeout", type=float, default=1800, help="seconds allowed per warpmc run (default 1800)")
    ap.add_argument("--out", help="also write the Markdown report here")
    ap.add_argument("--json", help="write every number here")
    args = ap.parse_args()

    dims = parse_list(args.dims, "dims")
    families = FAMILIES if args.families.strip() == "all" else [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        sys.exit(f"--families: unknown {', '.join(unknown)}; known: all, {', '.join(FAMILIES)}")
    if not (0 <= args.warmup < args.iterations):
        sys.exit(f"--warmup {args.warmup} must be in [0, --iterations {args.iterations})")

    import gvar
    import vegas

    now = datetime.datetime.now(datetime.timezone.utc)
    machine = {
        "cpu": cpu_name(),
        "platform_processor": platform.processor(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "vegas": vegas.__version__,
        "gvar": gvar.__version__,
        "numpy": np.__version__,
    }
    settings = {
        "backend": args.backend, "dims": dims, "families": families,
        "evals_per_iteration": args.evals_per_iteration, "iterations": args.iterations,
        "warmup": args.warmup, "bins": args.bins, "alpha": args.alpha, "beta": args.beta,
        "seed": args.seed, "param": args.param, "warpmc_arg": args.warpmc_arg, "warpmc": args.warpmc,
        "vegas_nproc": args.vegas_nproc,
    }

    rows = []
    failed = False
    for family in families:
        for dim in dims:
            print(f"[{family} d={dim}] warpmc ...", file=sys.stderr, flush=True)
            w = run_warpmc(args, family, dim)
            row = {"family": family, "dim": dim, "warpmc": w, "vegas": {}, "notes": []}
            if "error" in w:
                failed = True
                row["notes"].append(w["error"])
            if "integrand" in w and "exact" in w:
                print(f"[{family} d={dim}] vegas ...", file=sys.stderr, flush=True)
                v = run_vegas(args, family, dim, w["integrand"])
                row["vegas"] = v
                exact = w["exact"]
                if "error" in v:
                    failed = True
                    row["notes"].append(v["error"])
                else:
                    v["abs_z"] = (abs(v["mean"] - exact) / v["sdev"] if v["sdev"] > 0
                                  else (0.0 if v["mean"] == exact else math.inf))
                    # Each Integrator call first evaluates one point to learn the integrand's
                    # output shape: that probe is counted in evals but not in sum_neval.
                    calls = 2 if args.warmup > 0 else 1
                    if v["evals"] is None:
                        v["evals"] = v["sum_neval"] + calls
                    v["probe_evals"] = v["evals"] - v["sum_neval"]
                    if not 0 <= v["probe_evals"] <= calls:
                        row["notes"].append(f"vegas counted {v['evals']} evals, sum_neval says {v['sum_neval']}")
                    if v["abs_z"] > Z_WARN:
                        row["notes"].append(f"vegas |Δ|/err {v['abs_z']:.1f} > {Z_WARN:g}")
                # The Python closed form, computed independently, against warpmc's.
                try:
                    ind, method = independent_exact(family, w["integrand"]["a"], w["integrand"]["u"],
                                                    float(w["integrand"].get("width", 0.1)))
                except Exception as e:  # noqa: BLE001
                    ind, method = None, f"failed: {type(e).__name__}: {e}"
                row["python_exact"] = ind
                row["python_exact_method"] = method
                if ind is not None:
                    rel = abs(ind - exact) / max(abs(exact), 1e-300)
                    row["exact_rel_diff"] = rel
                    if rel > EXACT_RTOL:
                        failed = True
                        row["notes"].append(f"warpmc exact {exact:.12g} vs Python closed form {ind:.12g} (rel {rel:.1e})")
                if "error" not in v:
                    err_ratio = w["std_error"] / v["sdev"] if v["sdev"] > 0 else None
                    row["err_ratio"] = err_ratio
                    row["wall_ratio"] = v["wall_seconds"] / w["wall_seconds"] if w["wall_seconds"] > 0 else None
                    row["within_1_5x"] = None if err_ratio is None else bool(err_ratio <= 1.5)
                    # The error ratio at equal evaluations (errors scale as 1/sqrt(evals) at best).
                    if err_ratio is not None and w["evals"] > 0 and v["evals"] > 0:
                        row["err_ratio_per_sqrt_eval"] = err_ratio * math.sqrt(w["evals"] / v["evals"])
                    if w["abs_z"] > Z_WARN:
                        row["notes"].append(f"warpmc |Δ|/err {w['abs_z']:.1f} > {Z_WARN:g}")
            else:
                row["vegas"] = {"skipped": "warpmc gave no integrand parameters or exact value"}
                row["notes"].append("vegas not run: needs warpmc's integrand parameters")
            rows.append(row)

    backends = sorted({r["warpmc"]["backend"] for r in rows if r["warpmc"].get("backend")})
    header = (
        f"warpmc vs vegas {machine['vegas']} — {now.strftime('%Y-%m-%d %H:%M:%S UTC')} — "
        f"{machine['cpu']} ({machine['cpu_count']} logical CPUs; platform.processor() = "
        f"{machine['platform_processor'] or 'empty'}), {machine['platform']}, Python {machine['python']}, "
        f"numpy {machine['numpy']}, gvar {machine['gvar']} — warpmc backend: "
        f"{', '.join(backends) or args.backend}"
    )
    setting_line = (
        f"N = {args.evals_per_iteration} evaluations per iteration, {args.iterations} iterations "
        f"({args.warmup} warm-up, left out of both estimates), alpha = {args.alpha}, beta = {args.beta}, "
        f"warpmc --bins {args.bins} / vegas maxinc_axis = {args.bins}, seed {args.seed}"
        + (f", params {' '.join(args.param)}" if args.param else "")
        + (f", warpmc extra args {' '.join(args.warpmc_arg)}" if args.warpmc_arg else "")
        + f". vegas runs with nproc={args.vegas_nproc}; wall v/w = vegas wall / warpmc wall_seconds; "
        "err w/v = warpmc std_error / vegas sdev; evals include the warm-up."
    )
    ninc_seen = sorted({tuple(sorted(set(r["vegas"]["ninc"]))) for r in rows if "ninc" in r["vegas"]})
    if ninc_seen:
        setting_line += " vegas increments per axis used: " + ", ".join(
            "/".join(str(x) for x in t) for t in ninc_seen) + "."
    report = f"{header}\n\n{setting_line}\n\n{table(rows)}\n"
    print(report)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(report)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"date_utc": now.isoformat(), "machine": machine, "settings": settings, "rows": rows},
                      fh, indent=2, default=str)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
