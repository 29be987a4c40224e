#!/usr/bin/env bash
# Side-by-side run on the GPU machine, in one device call: GTaP's own runtime (the baseline's
# run.sh and binaries) and then gtap-bench on the same GPU, writing everything into OUT_DIR.
#
#   bench/device-run.sh OUT_DIR [PART...]
#
# PARTs (default: all four; split them over calls to stay inside a 10-minute call, e.g.
# `main1` and `main2 fib-sweep tree-sweep scaling`):
#   main        the main workloads, both halves below
#   main1       fib, N-Queens, binary tree, cilksort, mergesort, B-ary tree (MAIN1_LABELS)
#   main2       BFS, EPAQ N-Queens, EPAQ tree, EPAQ cilksort, SpMV (MAIN2_LABELS)
#   fib-sweep   EPAQ fib(40), cutoffs 2..18, 1 and 3 queues, gtap and GTaP         (~3 min)
#   tree-sweep  binary tree heights 10..21, gtap and GTaP                          (~1 min)
#   scaling     gtap fib(35) over grid sizes                                       (<1 min)
#   block       block mode beside thread mode (binary tree, BFS, SpMV), gtap and GTaP (BLOCK_LABELS)
#   hot         the labels of the thread-mode hot-path work (issue 12): its targets (fib, EPAQ
#               fib, N-Queens, the trees, cilksort) and the EPAQ cilksorts, the B-ary and EPAQ
#               trees (HOT_LABELS);
#               with GTAP_BENCH_ARGS=--no-cpu a few minutes
#   profile     gtap only, no GTaP baseline needed: `gtap-bench profile` traces fib(30) and the
#               binary tree (tree22_thread), writes OUT_DIR/profile/<label>.trace.json (open in
#               ui.perfetto.dev), the charts OUT_DIR/profile/<label>/{timeline,utilization,
#               durations}.png, and profile-cost.md: kernel time with the trace off and on,
#               median of 10 warm launches each, alternating (<1 min). The charts need a
#               TrueType font, GTAP_FONT (default Debian's DejaVuSans); without one only the
#               traces are written: draw them on the build machine with
#               `target/release/gtap-profile OUT_DIR/profile/<label>.trace.json`.
#
# Needs (carried from the build machine, paths relative to the repository root):
#   target/release/gtap-bench   built with GTAP_ARCH=sm_90 (cargo build --release -p gtap-bench)
#   target/gtap-baseline/       the GTaP baseline (bench/build-baseline.sh)
# Environment: GTAP_BENCH, GTAP_BASELINE_DIR override those paths; GTAP_TREE_DEPTHS (space-
# separated) the tree-sweep heights of GTaP's side; GTAP_BENCH_ARGS adds
# arguments to `gtap-bench run` (e.g. "--cpu-budget-s 10").
#
# OUT_DIR receives: gtap-baseline.log (run.sh's output), gtap-bench.log, the JSON records
# (<date>-<device>-<commit>.json), table.md, and timings.txt (seconds per step).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: bench/device-run.sh OUT_DIR [main|main1|main2|hot|fib-sweep|tree-sweep|scaling|profile]...}"
shift
parts=()
profile=0
for part in "$@"; do
    if [ "$part" = profile ]; then profile=1; else parts+=("$part"); fi
done
[ $# -gt 0 ] || parts=(main fib-sweep tree-sweep scaling)
bench="${GTAP_BENCH:-$root/target/release/gtap-bench}"
base="${GTAP_BASELINE_DIR:-$root/target/gtap-baseline}"

mkdir -p "$out"
[ -x "$bench" ] || { echo "device-run: no gtap-bench at $bench" >&2; exit 2; }
profile_status=0
if [ $profile -eq 1 ]; then
    font="${GTAP_FONT:-/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf}"
    "$bench" profile --target gpu --out-dir "$out/profile" --font "$font" 2>&1 |
        tee "$out/profile.log"
    profile_status=${PIPESTATUS[0]}
    [ ${#parts[@]} -gt 0 ] || exit $profile_status
fi

# GTaP labels of the main comparison (run.sh labels). Workloads ported later add theirs here.
# The main part in two halves (`main1`, `main2`), each a whole side-by-side comparison of its
# labels, so that each fits one device call.
MAIN1_LABELS=(fib40 fib40_cutoff14_q3 fib40_cutoff14_q1 nqueens16 tree22_thread tree22_block
    cilksort1e8 mergesort1e7 probtree34_thread probtree34_block)
MAIN2_LABELS=(bfs_rmat22_thread bfs_rmat22_block nqueens16_cutoff7_q2 nqueens16_cutoff7_q1
    tree20_epaq_q3 tree20_epaq_q1 cilksort5e7_cutoff256_q3 cilksort5e7_cutoff256_q1
    spmv1m_thread spmv1m_block)
# The workloads the hot-path changes are measured on, and the gtap-only join form of N-Queens
# and parts form of cilksort.
HOT_LABELS=(fib40 fib40_cutoff14_q3 fib40_cutoff14_q1 nqueens16 tree22_thread cilksort1e8
    cilksort5e7_cutoff256_q3 cilksort5e7_cutoff256_q1 probtree34_thread tree20_epaq_q3
    tree20_epaq_q1)
HOT_GTAP_ONLY=(nqueens16_join cilksort1e8_parts)
BLOCK_LABELS=(tree22_block tree22_thread bfs_rmat22_block bfs_rmat22_thread spmv1m_block
    spmv1m_thread)
BLOCK_GTAP_ONLY=(bfs_grid1024_block bfs_grid1024_thread)
# gtap-only rows (no GTaP counterpart) of each half.
MAIN1_GTAP_ONLY=(nqueens16_join)
MAIN2_GTAP_ONLY=(bfs_grid1024_thread bfs_grid1024_block)
FIB_CUTOFFS=2,3,4,5,6,7,8,9,10,11,12,13,15,16,17,18
TREE_DEPTHS=(${GTAP_TREE_DEPTHS:-10 11 12 13 14 15 16 17 18 19 20 21})

[ -x "$base/run.sh" ] || { echo "device-run: no GTaP baseline at $base (bench/build-baseline.sh)" >&2; exit 2; }
: >"$out/timings.txt"
log="$out/gtap-baseline.log"
: >"$log"

baseline() { # baseline COMMAND...: appends its output to the log, shows its BENCH lines
    "$@" 2>&1 | tee -a "$log" | grep '^BENCH '
    return "${PIPESTATUS[0]}"
}

timed() { # timed NAME COMMAND...: runs it, records its seconds
    local name="$1" start=$SECONDS rc
    shift
    "$@"
    rc=$?
    echo "$name: $((SECONDS - start)) s (exit $rc)" | tee -a "$out/timings.txt"
    return $rc
}

only=()
for part in "${parts[@]}"; do
    case "$part" in
        main)
            timed "GTaP main" baseline "$base/run.sh" "${MAIN1_LABELS[@]}" "${MAIN2_LABELS[@]}"
            only+=("${MAIN1_LABELS[@]}" "${MAIN1_GTAP_ONLY[@]}" "${MAIN2_LABELS[@]}" "${MAIN2_GTAP_ONLY[@]}")
            ;;
        main1)
            timed "GTaP main1" baseline "$base/run.sh" "${MAIN1_LABELS[@]}"
            only+=("${MAIN1_LABELS[@]}" "${MAIN1_GTAP_ONLY[@]}")
            ;;
        main2)
            timed "GTaP main2" baseline "$base/run.sh" "${MAIN2_LABELS[@]}"
            only+=("${MAIN2_LABELS[@]}" "${MAIN2_GTAP_ONLY[@]}")
            ;;
        block)
            timed "GTaP block" baseline "$base/run.sh" "${BLOCK_LABELS[@]}"
            only+=("${BLOCK_LABELS[@]}" "${BLOCK_GTAP_ONLY[@]}")
            ;;
        hot)
            timed "GTaP hot" baseline "$base/run.sh" "${HOT_LABELS[@]}"
            only+=("${HOT_LABELS[@]}" "${HOT_GTAP_ONLY[@]}")
            ;;
        fib-sweep)
            timed "GTaP fib-sweep" baseline "$base/run.sh" --fib-cutoffs "$FIB_CUTOFFS"
            only+=("fib40_cutoff*")
            ;;
        tree-sweep)
            for d in "${TREE_DEPTHS[@]}"; do
                timed "GTaP tree${d}_thread" baseline "$base/gtap_tree_thread" "$d" 256 256
                only+=("tree${d}_thread")
            done
            ;;
        scaling)
            only+=("fib35_grid*")
            ;;
        *) echo "device-run: unknown part '$part'" >&2; exit 2 ;;
    esac
done

list="$(IFS=,; echo "${only[*]}")"
run_bench() {
    # shellcheck disable=SC2086 # GTAP_BENCH_ARGS is a list of words
    "$bench" run --baseline-log "$log" --out-dir "$out" --only "$list" ${GTAP_BENCH_ARGS:-} 2>&1 |
        tee "$out/gtap-bench.log"
    return "${PIPESTATUS[0]}"
}
timed "gtap-bench" run_bench
status=$?
echo "--- timings"; cat "$out/timings.txt"
[ $status -ne 0 ] || status=$profile_status
exit $status
