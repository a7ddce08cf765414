#!/usr/bin/env bash
# warpmc on a GPU machine without Rust: the test executables, a GPU pricing job and the benchmark.
# Written by `cargo xtask device-bundle` (source: xtask/src/device_run.sh); see README.txt beside it.
#
# Usage: bash run.sh [OUT_DIR]        OUT_DIR defaults to $OUT, else ./device-out
#
# WARPMC_DEVICE_PARTS (default "tests cli stream integrate bench curand sanitizer") picks the parts to run, for a lent
# machine whose calls are limited in time: a part left out is reported as NOT RUN and fails the run.
#
# Writes 14 files to OUT_DIR: summary.txt, tests.log, run.log, price-gpu.json, suite-gpu.txt,
# greeks-gpu.txt, pipeline-gpu.json, stream.log, integrate.log, bench.json, bench.md, bench.log, curand.log, sanitizer.log. Exit status: 0 when every test passed, compute-sanitizer found no error
# in any kernel, and the price and bench runs succeeded, else 1. A compute-sanitizer that is
# missing or refuses the device is reported as NOT RUN in the summary (and does not pass silently).
# Only reads the GPU's settings (nvidia-smi --query-gpu); never changes them.
set -u

BUNDLE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT_DIR="${1:-${OUT:-./device-out}}"
mkdir -p "$OUT_DIR" || { echo "run.sh: cannot create $OUT_DIR" >&2; exit 2; }
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
cd "$BUNDLE" || exit 2

SUMMARY="$OUT_DIR/summary.txt"
RUNLOG="$OUT_DIR/run.log"
TESTLOG="$OUT_DIR/tests.log"
: >"$SUMMARY"
: >"$RUNLOG"
: >"$TESTLOG"
TMP="$(mktemp)"
trap 'rm -f "$TMP"' EXIT

summary() { echo "$*" >>"$SUMMARY"; }
PARTS=" ${WARPMC_DEVICE_PARTS:-tests cli stream integrate bench curand sanitizer} "
SKIPPED=""
want() {
    case "$PARTS" in *" $1 "*) return 0 ;; esac
    SKIPPED="$SKIPPED $1"
    summary ""
    summary "$1: NOT RUN (not in WARPMC_DEVICE_PARTS)"
    return 1
}
TOTAL_FAILED=0
CLI_FAILED=0
CURAND_DEVICE_FAILED=0
CURAND_HOST_FAILED=0
SAN_FAILED=0
SAN_STATE="ok"
heading() { echo; echo "==> $*"; echo "==> $*" >>"$RUNLOG"; }

# --- The device -----------------------------------------------------------------------------
heading "device"
if command -v nvidia-smi >/dev/null 2>&1; then
    GPU_INFO="$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1)"
else
    GPU_INFO="nvidia-smi: not found"
fi
echo "$GPU_INFO" | tee -a "$RUNLOG"
summary "device (name, driver_version, memory.total):"
echo "$GPU_INFO" | grep -v '^name,' | sed 's/^/  /' >>"$SUMMARY"

# --- libcurand (cuRAND, for the side-by-side benchmark) ---------------------------------------
find_curand() {
    local d f sub
    for d in /usr/local/cuda*/lib64 /usr/lib/x86_64-linux-gnu; do
        for f in "$d"/libcurand.so*; do
            if [ -e "$f" ]; then dirname "$f"; return 0; fi
        done
    done
    if command -v python3 >/dev/null 2>&1; then
        while IFS= read -r d; do
            for sub in nvidia/cu13/lib nvidia/curand/lib; do
                for f in "$d/$sub"/libcurand.so*; do
                    if [ -e "$f" ]; then dirname "$f"; return 0; fi
                done
            done
        done < <(python3 -c 'import site; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null)
    fi
    f="$(timeout 120 find / \( -path /proc -o -path /sys \) -prune -o -name 'libcurand.so*' -print 2>/dev/null | head -n 1)"
    if [ -n "$f" ]; then dirname "$f"; return 0; fi
    return 1
}
heading "libcurand"
if CURAND_DIR="$(find_curand)"; then
    export LD_LIBRARY_PATH="$CURAND_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "libcurand: $CURAND_DIR (prepended to LD_LIBRARY_PATH)" | tee -a "$RUNLOG"
    summary "libcurand: $CURAND_DIR"
else
    echo "libcurand: not found (the benchmark will say cuRAND was not measured)" | tee -a "$RUNLOG"
    summary "libcurand: not found"
fi

export WARPMC_REQUIRE_GPU=1
export WARPMC_BIN="$BUNDLE/warpmc"
# The example integrand's PTX module (examples/user-integrand), for the compiled-integrand test.
export WARPMC_EXAMPLE_PTX="$BUNDLE/warpmc_example_integrand.ptx"

if want tests; then
# --- Test executables -------------------------------------------------------------------------
TOTAL_PASSED=0
TOTAL_FAILED=0
BINARIES=0
summary ""
summary "tests (WARPMC_REQUIRE_GPU=1, --test-threads=4; full output in tests.log):"
for bin in "$BUNDLE"/*-test; do
    [ -x "$bin" ] || continue
    name="$(basename "$bin")"
    BINARIES=$((BINARIES + 1))
    heading "$name"
    start=$SECONDS
    # The battery tests of the warpmc executable need TestU01Drv and warpmc-testu01 (shipped in the bundle when
    # the development machine had it) and Debian's dieharder (not on GPU machines): CPU tests that
    # CI runs; here a missing tool skips its test, and the summary says so.
    SKIPS=()
    if [ "$name" = "warpmc-test" ]; then
        if [ -x "$BUNDLE/TestU01Drv" ]; then
            export WARPMC_TESTU01DRV="$BUNDLE/TestU01Drv"
        else
            SKIPS+=(--skip quality_smallcrush)
        fi
        if [ -x "$BUNDLE/warpmc-testu01" ]; then
            export WARPMC_TESTU01_TESTS="$BUNDLE/warpmc-testu01"
        else
            SKIPS+=(--skip quality_smallcrush_by_test)
        fi
        command -v dieharder >/dev/null 2>&1 || SKIPS+=(--skip quality_dieharder)
    fi
    "$bin" --test-threads=4 "${SKIPS[@]}" >"$TMP" 2>&1
    rc=$?
    secs=$((SECONDS - start))
    { echo "===== $name (exit $rc, ${secs}s)"; cat "$TMP"; echo; } >>"$TESTLOG"
    passed=0
    failed=0
    while read -r p f; do
        passed=$((passed + p))
        failed=$((failed + f))
    done < <(sed -nE 's/^test result: [A-Za-z]+\. ([0-9]+) passed; ([0-9]+) failed.*/\1 \2/p' "$TMP")
    state="ok"
    if [ "$rc" -ne 0 ]; then
        state="FAILED (exit $rc)"
        if [ "$failed" -eq 0 ]; then
            # No test reported a failure: the executable crashed (or did not start).
            failed=1
            state="CRASHED (exit $rc)"
        fi
        tail -n 40 "$TMP"
    else
        grep -E '^test result:' "$TMP"
    fi
    TOTAL_PASSED=$((TOTAL_PASSED + passed))
    TOTAL_FAILED=$((TOTAL_FAILED + failed))
    line="$(printf '  %-28s %5d passed %4d failed  %4ds  %s' "$name" "$passed" "$failed" "$secs" "$state")"
    echo "$line"
    summary "$line"
    [ "${#SKIPS[@]}" -eq 0 ] || summary "      skipped here (battery tool not on this machine; CI runs them): ${SKIPS[*]}"
    grep -E '^test .+ \.\.\. FAILED$' "$TMP" | head -n 20 | sed 's/^/      /' >>"$SUMMARY"
done
if [ "$BINARIES" -eq 0 ]; then
    summary "  no test executables in $BUNDLE"
    TOTAL_FAILED=$((TOTAL_FAILED + 1))
fi
summary "  total: $TOTAL_PASSED passed, $TOTAL_FAILED failed, in $BINARIES executables"

fi

if want cli; then
# --- The CLI --------------------------------------------------------------------------------
CLI_FAILED=0
heading "warpmc info"
INFO="$(./warpmc info 2>&1)"
rc=$?
echo "$INFO" | tee -a "$RUNLOG"
summary ""
summary "warpmc info (exit $rc):"
echo "$INFO" | sed 's/^/  /' >>"$SUMMARY"
[ "$rc" -eq 0 ] || CLI_FAILED=1

heading "warpmc price --backend gpu --paths 2^24 --json"
./warpmc price --backend gpu --paths '2^24' --json >"$OUT_DIR/price-gpu.json" 2>"$TMP"
rc=$?
cat "$TMP" >>"$RUNLOG"
cat "$OUT_DIR/price-gpu.json" "$TMP"
summary ""
summary "price --backend gpu --paths 2^24 (exit $rc; price-gpu.json):"
grep -E '^  "(price|std_error|price_control_variate|device|wall_seconds|msteps_per_second)"' "$OUT_DIR/price-gpu.json" >>"$SUMMARY"
if [ "$rc" -ne 0 ]; then
    CLI_FAILED=1
    tail -n 5 "$TMP" | sed 's/^/  /' >>"$SUMMARY"
fi

heading "warpmc price --suite --backend gpu --paths 2^22 (suite-gpu.txt)"
./warpmc price --suite --backend gpu --paths '2^22' >"$OUT_DIR/suite-gpu.txt" 2>"$TMP"
rc=$?
cat "$TMP" >>"$RUNLOG"
cat "$OUT_DIR/suite-gpu.txt"
summary ""
summary "price --suite --backend gpu --paths 2^22 (exit $rc):"
grep -E '^\|' "$OUT_DIR/suite-gpu.txt" | sed 's/^/  /' >>"$SUMMARY"
if [ "$rc" -ne 0 ]; then
    CLI_FAILED=1
    tail -n 5 "$TMP" | sed 's/^/  /' >>"$SUMMARY"
fi

heading "warpmc price --instrument asian-arithmetic --greeks --backend gpu --paths 2^22"
./warpmc price --instrument asian-arithmetic --param steps=64 --greeks --backend gpu --paths '2^22' >"$OUT_DIR/greeks-gpu.txt" 2>"$TMP"
rc=$?
cat "$TMP" >>"$RUNLOG"
cat "$OUT_DIR/greeks-gpu.txt"
summary ""
summary "price --instrument asian-arithmetic --param steps=64 --greeks --backend gpu --paths 2^22 (exit $rc):"
grep -E '^  (price|std error|with control|wall|delta|gamma|vega)' "$OUT_DIR/greeks-gpu.txt" | sed 's/^/  /' >>"$SUMMARY"
if [ "$rc" -ne 0 ]; then
    CLI_FAILED=1
    tail -n 5 "$TMP" | sed 's/^/  /' >>"$SUMMARY"
fi

fi

if want stream; then
# --- Streaming: the TI pipeline demo and generate's throughput against the copy bandwidth -------
heading "streaming (log: stream.log)"
STREAM_LOG="$OUT_DIR/stream.log"
: >"$STREAM_LOG"
summary ""
summary "streaming (stream.log, pipeline-gpu.json):"
for consumer in sign histogram; do
    ./warpmc demo pipeline --backend gpu --consumer "$consumer" --count '2^28' --block '2^22' >"$TMP" 2>&1
    rc=$?
    { echo "===== demo pipeline --consumer $consumer (exit $rc)"; cat "$TMP"; echo; } >>"$STREAM_LOG"
    cat "$TMP"
    summary "  demo pipeline --backend gpu --consumer $consumer --count 2^28 --block 2^22 (exit $rc):"
    sed 's/^/    /' "$TMP" >>"$SUMMARY"
    [ "$rc" -eq 0 ] || CLI_FAILED=1
done
./warpmc demo pipeline --backend gpu --count '2^28' --block '2^22' --json >"$OUT_DIR/pipeline-gpu.json" 2>>"$STREAM_LOG" || CLI_FAILED=1
# The copy bandwidth of the words generate writes: the demo's page-locked copy of 2^28 f32.
COPY_GBS="$(sed -nE 's/.*"copy_gb_per_s": ([0-9.eE+-]+).*/\1/p' "$OUT_DIR/pipeline-gpu.json" | head -n 1)"
# generate --format binary > /dev/null: 2^34 words (64 GiB), less the time of a one-value run
# (process start, module load, states), against that copy bandwidth; and through a pipe to cat,
# beside the pipe's own speed (16 GiB of zeros through the same pipe to cat).
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>>"$STREAM_LOG"; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }'; }
PIPE_S="$( { s=$(date +%s.%N); head -c 17179869184 /dev/zero | cat >/dev/null; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }'; } )"
summary "  the pipe alone (head -c 16GiB /dev/zero | cat > /dev/null): $PIPE_S s, $(awk -v t="$PIPE_S" 'BEGIN { printf "%.2f", 2^34 / t / 1e9 }') GB/s"
for job in "--generator philox4x32-10 --streams 65536" "--generator xorwow --streams 65536" \
           "--generator philox4x32-10 --streams 65536 --distribution normal"; do
    # shellcheck disable=SC2086
    T1="$(secs ./warpmc generate --backend gpu $job --count 1 --format binary)"
    # shellcheck disable=SC2086
    TB="$(secs ./warpmc generate --backend gpu $job --count '2^34' --format binary)"
    line="$(awk -v t1="$T1" -v tb="$TB" -v c="${COPY_GBS:-0}" -v j="$job" 'BEGIN {
        gbs = 2^34 * 4 / (tb - t1) / 1e9;
        printf "  generate %s --count 2^34 --format binary > /dev/null: %.2f s less %.2f s start = %.2f GB/s", j, tb, t1, gbs;
        if (c > 0) printf " = %.0f%% of the page-locked copy (%.1f GB/s)", 100 * gbs / c, c; printf "\n" }')"
    echo "$line" | tee -a "$STREAM_LOG"
    summary "$line"
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    ./warpmc generate --backend gpu $job --count '2^32' --format binary 2>>"$STREAM_LOG" | cat >/dev/null
    rc=${PIPESTATUS[0]}
    end=$(date +%s.%N)
    line="$(awk -v s="$start" -v e="$end" -v j="$job" -v rc="$rc" 'BEGIN {
        printf "  generate %s --count 2^32 --format binary | cat > /dev/null: %.2f s, %.2f GB/s (exit %d)\n", j, e - s, 2^32 * 4 / (e - s) / 1e9, rc }')"
    echo "$line" | tee -a "$STREAM_LOG"
    summary "$line"
    [ "$rc" -eq 0 ] || CLI_FAILED=1
done
# A reader that closes the pipe: exit 0.
./warpmc generate --backend gpu --count inf --format binary --streams 4096 2>>"$STREAM_LOG" | head -c 100000000 >/dev/null
rc=${PIPESTATUS[0]}
summary "  generate --count inf | head -c 100000000: warpmc exit $rc"
[ "$rc" -eq 0 ] || CLI_FAILED=1

fi

if want integrate; then
# --- The integrator: every family on the GPU, the grid's overhead, one GPU against all ----------
heading "integration (log: integrate.log)"
INT_LOG="$OUT_DIR/integrate.log"
: >"$INT_LOG"
summary ""
summary "integration (integrate.log):"
jnum() { sed -nE "s/^  \"$1\": ([-0-9.eE+]+),?$/\1/p" "$2" | head -n 1; }
summary "  validation, --backend gpu --evals-per-iteration 2^22 --iterations 12 (2 warm-up), Philox:"
summary "  family            d   estimate              std error   exact                 z      chi2/dof  Mevals/s"
for family in oscillatory product-peak corner-peak gaussian continuous discontinuous narrow-gaussians; do
    for d in 4 8 32; do
        ./warpmc integrate --backend gpu --integrand "$family" --dim "$d" --evals-per-iteration '2^22' --iterations 12 --json >"$TMP" 2>>"$INT_LOG"
        rc=$?
        { echo "===== $family d=$d (exit $rc)"; cat "$TMP"; } >>"$INT_LOG"
        if [ "$rc" -ne 0 ]; then CLI_FAILED=1; summary "  $family d=$d: FAILED (exit $rc)"; continue; fi
        line="$(printf '  %-16s %3s  %-20s  %-10s  %-20s  %+6.2f  %7.3f  %9.1f' "$family" "$d" "$(jnum estimate "$TMP")" \
            "$(jnum std_error "$TMP")" "$(jnum exact "$TMP")" "$(jnum z "$TMP")" "$(jnum chi2_per_dof "$TMP")" \
            "$(awk -v r="$(jnum evals_per_second "$TMP")" 'BEGIN { print r / 1e6 }')")"
        echo "$line"; summary "$line"
    done
done
summary "  the grid's overhead (--kernel-rates, d = 8, 2^26 points: the VEGAS kernel against plain uniform points),"
summary "  at the default strata (6 per axis: 1679616 hypercubes, about 40 points each) and at 5 (390625, about 172 each):"
for family in oscillatory product-peak corner-peak gaussian continuous discontinuous narrow-gaussians; do
    for strata in "" "--strata 5"; do
        ./warpmc integrate --backend gpu --integrand "$family" --dim 8 --evals-per-iteration '2^26' --iterations 4 $strata --kernel-rates >"$TMP" 2>&1
        rc=$?
        { echo "===== kernel rates $family $strata (exit $rc)"; cat "$TMP"; } >>"$INT_LOG"
        [ "$rc" -eq 0 ] || CLI_FAILED=1
        summary "    $family ${strata:-default strata}: $(grep '^kernels' "$TMP" | sed 's/^kernels *//')"
    done
done
NGPU="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')"
summary "  scaling: narrow-gaussians d = 8, 2^31 points per iteration, 60 iterations (the issue asks for a run of 10 s or more on one GPU), $NGPU GPU(s) present,"
summary "  at the default strata (1679616 hypercubes) and at --strata 5 (390625)"
for strata in "" "--strata 5"; do
    tag="${strata:+-s5}"
    for g in 1 all; do
        if [ "$g" = all ] && [ "${NGPU:-1}" -lt 2 ]; then summary "    --gpus all: NOT RUN (one GPU)"; continue; fi
        ./warpmc integrate --backend gpu --gpus "$g" --integrand narrow-gaussians --dim 8 --evals-per-iteration '2^31' --iterations 60 $strata --json >"$OUT_DIR/scale-$g$tag.json" 2>>"$INT_LOG"
        rc=$?
        [ "$rc" -eq 0 ] || CLI_FAILED=1
        summary "    ${strata:-default strata} --gpus $g (exit $rc): estimate $(jnum estimate "$OUT_DIR/scale-$g$tag.json") ± $(jnum std_error "$OUT_DIR/scale-$g$tag.json"), $(jnum evals "$OUT_DIR/scale-$g$tag.json") evals, wall $(jnum wall_seconds "$OUT_DIR/scale-$g$tag.json") s"
    done
    if [ -s "$OUT_DIR/scale-all$tag.json" ]; then
        if [ "$(jnum estimate "$OUT_DIR/scale-1$tag.json")" = "$(jnum estimate "$OUT_DIR/scale-all$tag.json")" ] && \
           [ "$(jnum std_error "$OUT_DIR/scale-1$tag.json")" = "$(jnum std_error "$OUT_DIR/scale-all$tag.json")" ]; then
            summary "    one GPU and all GPUs: the same estimate and error, bit for bit; T(1)/T(all) = $(awk -v a="$(jnum wall_seconds "$OUT_DIR/scale-1$tag.json")" -v b="$(jnum wall_seconds "$OUT_DIR/scale-all$tag.json")" 'BEGIN { printf "%.3f", a / b }')"
        else
            summary "    one GPU and all GPUs DIFFER"; CLI_FAILED=1
        fi
    fi
done
./warpmc integrate --backend cpu --integrand narrow-gaussians --dim 8 --evals-per-iteration '2^22' --iterations 6 --json >"$TMP" 2>>"$INT_LOG" || CLI_FAILED=1
summary "  the host's CPU ($(nproc) threads), narrow-gaussians d = 8, 2^22 x 6: $(jnum evals_per_second "$TMP") evals/s"

fi

if want bench; then
heading "warpmc bench (log: bench.log; SM clocks sampled into clocks.log)"
# The GPU's clocks, power and temperature every 250 ms while the benchmark runs (a read-only
# query): compute-bound kernels scale with the SM clock, so a capped clock shows here.
CLOCK_FIELDS="timestamp,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu"
CLOCK_PID=""
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu="$CLOCK_FIELDS" --format=csv -lms 250 >"$OUT_DIR/clocks.log" 2>&1 &
    CLOCK_PID=$!
fi
./warpmc bench --json-out "$OUT_DIR/bench.json" --markdown-out "$OUT_DIR/bench.md" >"$OUT_DIR/bench.log" 2>&1
rc=$?
if [ -n "$CLOCK_PID" ]; then
    kill "$CLOCK_PID" 2>/dev/null
    wait "$CLOCK_PID" 2>/dev/null
    # The SM clock while the GPU was busy (samples above 100 W), against its maximum.
    CLOCKS="$(awk -F', ' 'NR > 1 && $5 + 0 > 100 { n++; s += $2; if (min == "" || $2 + 0 < min) min = $2 + 0; max = $3 } END { if (n) printf "SM clock while busy (%d samples over 100 W): mean %.0f MHz, min %d MHz; max SM clock %s", n, s / n, min, max; else print "SM clock: no busy samples" }' "$OUT_DIR/clocks.log")"
    echo "$CLOCKS"
fi
echo "bench: exit $rc (its table is in the summary below)"
summary ""
summary "bench (exit $rc; bench.json, bench.md, bench.log, clocks.log):"
[ -n "${CLOCKS:-}" ] && summary "  $CLOCKS"
if [ "$rc" -eq 0 ] && [ -f "$OUT_DIR/bench.md" ]; then
    cat "$OUT_DIR/bench.md" >>"$SUMMARY"
else
    CLI_FAILED=1
    tail -n 10 "$OUT_DIR/bench.log" | sed 's/^/  /' >>"$SUMMARY"
fi

fi

if want curand; then
# --- cuRAND's device API against warpmc's stream rules ---------------------------------------------
# curand_check.cu (built here with nvcc) prints curand_init(seed, subsequence, 0) then curand();
# warpmc generate prints stream `subsequence` of `seed`, on the GPU and on the CPU, for the
# generators whose streams are cuRAND's (xorwow, philox4x32-10, and cuRAND's MRG32k3a, which
# warpmc calls mrg32k3a-curand). A difference fails the run.
heading "cuRAND device API vs warpmc streams (log: curand.log)"
CURAND_LOG="$OUT_DIR/curand.log"
: >"$CURAND_LOG"
CURAND_DEVICE_FAILED=0
summary ""
NVCC="$(command -v nvcc 2>/dev/null || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -n 1)"
if [ -z "$NVCC" ]; then
    summary "cuRAND device API comparison: NOT RUN (no nvcc)"
elif ! "$NVCC" -O2 -o "$TMP.curand" curand_check.cu >>"$CURAND_LOG" 2>&1; then
    summary "cuRAND device API comparison: NOT RUN (nvcc failed; see curand.log)"
else
    summary "cuRAND device API (curand_init(seed, subsequence, 0), curand()) vs warpmc generate --stream:"
    for g in xorwow philox4x32-10 mrg32k3a; do
        wg="$g"
        [ "$g" = mrg32k3a ] && wg=mrg32k3a-curand
        same=0
        cases=0
        for pair in "0 0" "1234 0" "1234 5" "42 1000" "18446744073709551615 3" "7 1234567" "5 2251799813685247"; do
            set -- $pair
            "$TMP.curand" "$g" "$1" "$2" 0 16 >"$TMP.a" 2>>"$CURAND_LOG"
            for backend in gpu cpu; do
                cases=$((cases + 1))
                ./warpmc generate --backend "$backend" --generator "$wg" --seed "$1" --stream "$2" --count 16 \
                    >"$TMP.b" 2>>"$CURAND_LOG"
                if [ -s "$TMP.a" ] && cmp -s "$TMP.a" "$TMP.b"; then
                    same=$((same + 1))
                else
                    { echo "== $g seed $1 subsequence $2 on $backend: cuRAND | warpmc"; paste "$TMP.a" "$TMP.b" | head -n 4; } >>"$CURAND_LOG"
                    CURAND_DEVICE_FAILED=1
                fi
            done
        done
        summary "  $g ($wg): $same of $cases cases identical over 16 words (7 (seed, subsequence) pairs, GPU and CPU)"
    done
    rm -f "$TMP.curand" "$TMP.a" "$TMP.b"
fi

# --- cuRAND's host API against warpmc's cuRAND layout ------------------------------------------------
# curand_host_check.cu (built here with nvcc, linked with cuRAND) writes what curandGenerate,
# curandGenerateUniform and curandGenerateUniformDouble put in device memory, raw; warpmc generate
# --ordering curand-legacy|curand-default --format binary writes the same values, computed on the
# GPU and on the CPU. Every case must be identical byte for byte (a failure fails the run).
heading "cuRAND host API vs warpmc generate --ordering curand-* (log: curand.log)"
CURAND_HOST_FAILED=0
summary ""
if [ -z "$NVCC" ]; then
    summary "cuRAND host API comparison: NOT RUN (no nvcc)"
elif ! "$NVCC" -O2 -o "$TMP.host" curand_host_check.cu -lcurand >>"$CURAND_LOG" 2>&1; then
    summary "cuRAND host API comparison: NOT RUN (nvcc failed; see curand.log)"
else
    summary "cuRAND host API ($("$TMP.host" version 2>/dev/null || echo '?')) vs warpmc generate --ordering curand-*, byte for byte:"
    for g in xorwow mrg32k3a philox4x32-10; do
        wg="$g"
        [ "$g" = mrg32k3a ] && wg=mrg32k3a-curand
        same=0
        cases=0
        for c in "0 0 100000 legacy u32" "1234 77 100000 legacy u32" "1234 77 100000 legacy f32" \
                 "1234 77 100000 legacy f64" "42 5 12295 legacy f64" "99 262147 300000 legacy f64" \
                 "7 0 400000 default u32" "7 3 200001 default f32" "18446744073709551615 1000003 70000 legacy u32"; do
            set -- $c
            case "$5" in
                u32) dist="--distribution u32" ;;
                f32) dist="--distribution uniform" ;;
                f64) dist="--distribution uniform --precision f64" ;;
            esac
            CURAND_CHECK_BINARY=1 "$TMP.host" "$g" "$1" "$2" "$3" "$4" "$5" >"$TMP.a" 2>>"$CURAND_LOG"
            for backend in gpu cpu; do
                cases=$((cases + 1))
                # shellcheck disable=SC2086
                ./warpmc generate --backend "$backend" --generator "$wg" --ordering "curand-$4" --seed "$1" \
                    --offset "$2" --count "$3" $dist --format binary >"$TMP.b" 2>>"$CURAND_LOG"
                if [ -s "$TMP.a" ] && cmp -s "$TMP.a" "$TMP.b"; then
                    same=$((same + 1))
                else
                    echo "== $g seed $1 offset $2 count $3 $4 $5 on $backend: cuRAND and warpmc differ" >>"$CURAND_LOG"
                    cmp "$TMP.a" "$TMP.b" >>"$CURAND_LOG" 2>&1
                    CURAND_HOST_FAILED=1
                fi
            done
        done
        summary "  $g: $same of $cases cases identical (GPU and CPU backends; u32, f32, f64; legacy and default orderings)"
    done
    rm -f "$TMP.host" "$TMP.a" "$TMP.b"
fi

fi

if want sanitizer; then
# --- compute-sanitizer: every kernel once, memcheck and racecheck ---------------------------------
# `warpmc check-kernels` runs every kernel of the module once at a small size: each generator's
# stream set-up, its fills, its distribution fills (every distribution and transform) and its two
# Asian basket modes, and the constant-RNG baseline.
# A GPU price job runs them as users do, through the library's batching.
SAN_LOG="$OUT_DIR/sanitizer.log"
: >"$SAN_LOG"
SAN_FAILED=0
SAN_STATE="ok"
heading "compute-sanitizer (log: sanitizer.log)"
SAN="$(command -v compute-sanitizer 2>/dev/null || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)"
summary ""
if [ -z "$SAN" ]; then
    SAN_STATE="NOT RUN (compute-sanitizer not found)"
    summary "compute-sanitizer: $SAN_STATE"
else
    summary "compute-sanitizer ($SAN): every kernel once per tool"
    SAN_JOBS=(
        "check-kernels"
        "price --backend gpu --paths 20000 --steps 16 --mode exact"
        "generate --backend gpu --count 3000007 --streams 1024 --block 100000 --buffers 3 --distribution normal --transform polar --format binary --output /dev/null"
        "demo pipeline --backend gpu --count 2^20 --streams 1024 --block 2^16"
        "integrate --backend gpu --integrand narrow-gaussians --dim 4 --evals-per-iteration 30000 --iterations 3 --warmup 1"
        "integrate --backend gpu --integrand oscillatory --dim 32 --evals-per-iteration 30000 --iterations 3 --warmup 1"
    )
    for tool in memcheck racecheck; do
        for job in "${SAN_JOBS[@]}"; do
            # shellcheck disable=SC2086
            timeout 450 "$SAN" --tool "$tool" --error-exitcode 97 ./warpmc $job >"$TMP" 2>&1
            rc=$?
            { echo "===== $tool: warpmc $job (exit $rc)"; cat "$TMP"; echo; } >>"$SAN_LOG"
            if grep -qE "Device not supported|not supported on this|Unable to find injection" "$TMP"; then
                SAN_STATE="NOT RUN (compute-sanitizer refused the device: $(grep -m1 -E 'not supported|injection' "$TMP"))"
                break 2
            fi
            verdict="$(grep -E '^========= (ERROR SUMMARY|RACECHECK SUMMARY)' "$TMP" | tail -n 1)"
            line="$(printf '  %-9s %-100s exit %3d  %s' "$tool" "$job" "$rc" "${verdict#========= }")"
            echo "$line"
            summary "$line"
            if [ "$rc" -ne 0 ]; then
                SAN_FAILED=1
                tail -n 15 "$TMP" | sed 's/^/      /' >>"$SUMMARY"
            fi
        done
    done
    if [ "$SAN_STATE" != "ok" ]; then
        summary "  $SAN_STATE"
    fi
fi

fi

# --- Summary --------------------------------------------------------------------------------
STATUS=0
if [ -n "$SKIPPED" ]; then STATUS=1; fi
if [ "$SAN_FAILED" -ne 0 ]; then STATUS=1; fi
if [ "$TOTAL_FAILED" -ne 0 ]; then STATUS=1; fi
if [ "$CLI_FAILED" -ne 0 ]; then STATUS=1; fi
if [ "$CURAND_HOST_FAILED" -ne 0 ]; then STATUS=1; fi
if [ "$CURAND_DEVICE_FAILED" -ne 0 ]; then STATUS=1; fi
summary ""
summary "result: $([ "$STATUS" -eq 0 ] && echo PASS || echo FAIL) (not run:${SKIPPED:- none}; $TOTAL_FAILED test failures; cuRAND device API $([ "$CURAND_DEVICE_FAILED" -eq 0 ] && echo ok || echo DIFFERS); cuRAND host API $([ "$CURAND_HOST_FAILED" -eq 0 ] && echo ok || echo DIFFERS); price/bench $([ "$CLI_FAILED" -eq 0 ] && echo ok || echo FAILED); compute-sanitizer $([ "$SAN_FAILED" -eq 0 ] && echo "$SAN_STATE" || echo "found errors"))"
echo
echo "===================================== summary ====================================="
cat "$SUMMARY"
echo "(written to $OUT_DIR)"
exit "$STATUS"
