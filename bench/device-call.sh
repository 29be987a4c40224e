# Helpers for one device call's script, sourced by it (not run): unpacking the binaries built
# here, the GPU tests, the examples, A/B runs of several gtap-bench binaries, Nsight Compute
# profiles, a side-by-side run beside GTaP, the sanitizers over the block-mode GPU tests, and
# packing the logs. A call's script then says only
# what it measures:
#
#     #!/usr/bin/env bash
#     set -uo pipefail
#     source bench/device-call.sh .device/c1x     # unpacks .device/c1x/pack.tar.xz into $P
#     gpu_tests; examples
#     for r in 1 2; do for v in A B; do ab $v r$r tree22_block,fib40; done; done
#     sbs B 1a2b3c4 block hot
#
# The pack (built here, carried with the run tool's `carry`) holds, under `p/`:
#   bench_<V>   gtap-bench binaries (built with GTAP_ARCH=sm_90), one per variant V
#   san/        scripts/device-sanitize --build's directory (`gpu` tests, `examples/`)
#   base/       the GTaP baseline (bench/build-baseline.sh)
# Everything is written under $OUT (the run tool's output folder); `pack_logs` keeps a
# compressed copy of it, which comes back whole when single files would be too many.

D="${1:?usage: source bench/device-call.sh PACK_DIR}"
P="$D/p"
OUT="${OUT:?device-call: OUT (the output folder) is not set}"
call_start=$(date +%s)

# el MESSAGE: a line with the seconds since the call began.
el() { echo "[$(( $(date +%s) - call_start )) s] $*"; }

# left: seconds left of a call of GTAP_CALL_S seconds (default 585; the run tool's limit is 600,
# less when the session has less device time left).
left() { echo $(( ${GTAP_CALL_S:-585} - ($(date +%s) - call_start) )); }

pack_logs() { tar czf "$OUT/logs.tgz" -C "$OUT" --exclude logs.tgz . 2>/dev/null; }

tar xJf "$D/pack.tar.xz" -C "$D" || { echo "device-call: cannot unpack $D/pack.tar.xz" >&2; exit 2; }
mkdir -p "$OUT/gpu" "$OUT/examples" "$OUT/ab"
nvidia-smi -L
nvidia-smi --query-gpu=driver_version --format=csv,noheader

# gpu_tests [TIMEOUT_S]: every GPU test, one at a time, none allowed to skip.
gpu_tests() {
    el "GPU tests"
    GTAP_REQUIRE_GPU=1 timeout "${1:-150}" "$P/san/gpu" --test-threads=1 >"$OUT/gpu/gpu-tests.log" 2>&1
    echo "gpu tests rc $?"
    grep -E "test result|FAILED|panicked" "$OUT/gpu/gpu-tests.log"
    pack_logs
}

# examples: every example at its default size; each checks itself against a sequential
# reference and exits non-zero on a mismatch.
examples() {
    el "examples at default sizes"
    local ex n
    for ex in "$P"/san/examples/*; do
        n=$(basename "$ex")
        echo "== $n" >>"$OUT/examples/default.txt"
        timeout 40 "$ex" >>"$OUT/examples/default.txt" 2>&1
        echo "rc $?" >>"$OUT/examples/default.txt"
    done
    grep -E "^== |^rc " "$OUT/examples/default.txt" | paste - - | tr '\n' ';'
    echo
    pack_logs
}

# ab VARIANT TAG LABELS [ARGS...]: bench_VARIANT on LABELS (comma-separated), 2 warm-up and 10
# timed launches each, every launch verified; prints "median label" pairs.
ab() {
    local v=$1 tag=$2 l=$3
    shift 3
    timeout 150 "$P/bench_$v" run --no-cpu --fib-cutoffs none --tree-depths none --grid-sizes none \
        --warmup 2 --runs 10 --only "$l" --out-dir "$OUT/ab/$v-$tag" "$@" >"$OUT/ab/$v-$tag.log" 2>&1
    echo "$v $tag rc $?"
    grep -E "^   gtap" "$OUT/ab/$v-$tag.log" | awk '{print $NF, $3}' | tr '\n' ' '
    echo
    pack_logs
}

# ncu_prof NAME KERNEL_REGEX SECTION... -- COMMAND...: Nsight Compute on one launch of the kernels
# matching KERNEL_REGEX that COMMAND runs (gtap-bench with `--warmup 0 --runs 1`, or a GTaP
# binary), with the given sections, into $OUT/ncu: NAME.details.txt and, with SourceCounters,
# the per-instruction SASS counts and stall samples (NAME.sass.csv.gz). Skipped when less than
# 45 s of the call are left.
ncu_prof() {
    local name=$1 k=$2
    shift 2
    local secs=()
    while [ "$1" != "--" ]; do
        secs+=(--section "$1")
        shift
    done
    shift
    [ "$(left)" -gt 45 ] || { echo "skip $name"; return; }
    mkdir -p "$OUT/ncu"
    timeout $(( $(left) - 25 )) ncu --clock-control none "${secs[@]}" -k "regex:$k" -c 1 \
        -o "$OUT/ncu/$name" "$@" >"$OUT/ncu/$name.run.log" 2>&1
    echo "ncu $name rc $?"
    ncu --import "$OUT/ncu/$name.ncu-rep" --page details >"$OUT/ncu/$name.details.txt" 2>&1
    if [[ " ${secs[*]} " == *SourceCounters* ]]; then
        ncu --import "$OUT/ncu/$name.ncu-rep" --page source --csv --print-source sass 2>&1 |
            gzip >"$OUT/ncu/$name.sass.csv.gz"
    fi
    rm -f "$OUT/ncu/$name.ncu-rep"
    pack_logs
}

# sbs VARIANT COMMIT PART...: bench_VARIANT beside GTaP's runtime (bench/device-run.sh PARTs,
# no CPU peers) in what is left of the call, into $OUT/sbs; GTAP_BENCH_ARGS adds arguments.
sbs() {
    local v=$1 commit=$2
    shift 2
    el "bench_$v ($commit) beside GTaP: $*"
    GTAP_BENCH="$P/bench_$v" GTAP_BASELINE_DIR="$P/base" \
        GTAP_BENCH_ARGS="--no-cpu ${GTAP_BENCH_ARGS:-}" GTAP_COMMIT="$commit" \
        timeout "$(left)" bash bench/device-run.sh "$OUT/sbs" "$@" >"$OUT/sbs.log" 2>&1
    echo "sbs rc $?"
    tail -30 "$OUT/sbs/table.md" 2>/dev/null
    pack_logs
}

# sanitizers TOOLS TESTS [TIMEOUT_S]: the sanitizers TOOLS (space-separated) over the GPU tests
# of `san/` whose names match the extended regex TESTS (scripts/device-sanitize), TIMEOUT_S
# (default 90) a run, in what is left of the call, into $OUT/sanitize.
sanitizers() {
    el "$1 over the GPU tests matching $2"
    GTAP_SANITIZE_TOOLS="$1" GTAP_SANITIZE_TESTS="$2" GTAP_SANITIZE_TIMEOUT="${3:-90}" \
        timeout "$(left)" bash scripts/device-sanitize "$P/san" "$OUT/sanitize" >"$OUT/sanitize.log" 2>&1
    echo "sanitize rc $?"
    tail -30 "$OUT/sanitize/summary.txt"
    pack_logs
}

# block_sanitizers [TIMEOUT_S]: memcheck and racecheck over the block-mode GPU tests.
block_sanitizers() {
    sanitizers "memcheck racecheck" '^(block_mode|a_block|a_detached_block|a_traced_block)' "${1:-90}"
}
