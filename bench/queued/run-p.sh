#!/usr/bin/env bash
# Queued profile call: where the landed code's block tree and block SpMV wait, beside GTaP's.
# First the GPU tests, then the examples, which put 213bc5e and e5c546f (device code after the
# last device run) on the device; the examples run between our profiles and GTaP's (GTaP's
# binaries are those profiled in earlier sessions, so a short call loses the least there).
# Then Nsight Compute on one launch each of LN's block tree and block SpMV and of GTaP's two
# (instruction counts and stall samples per SASS line, warp states, memory workload, speed of
# light), one round of base against LN (source lines must not move the time), and the racecheck
# of the detached block launch that ran out of its 45 s in session 30 (86 s in session 28), in
# that order, so that a short call (`GTAP_CALL_S`) drops the least needed last.
#
#   bash bench/queued/run-p.sh        # on the device, carrying .device/p
set -uo pipefail
source bench/device-call.sh .device/p
gpu_tests 90
B="run --no-cpu --fib-cutoffs none --tree-depths none --grid-sizes none --warmup 0 --runs 1"
export GTAP_WARMUP=0 GTAP_RUNS=1
S="InstructionStats WarpStateStats MemoryWorkloadAnalysis SpeedOfLight SourceCounters"
# shellcheck disable=SC2086 # $S and $B are lists of words
{
    ncu_prof LN_tree_block tree_block_kernel $S -- "$P/bench_LN" $B --only tree22_block --out-dir "$OUT/ncu/LN-tree"
    ncu_prof LN_spmv_block spmv_block_kernel $S -- "$P/bench_LN" $B --only spmv1m_block --out-dir "$OUT/ncu/LN-spmv"
    examples
    ncu_prof g_tree_block exec_kernel $S -- "$P/base/gtap_tree_block" 22 256 256
    ncu_prof g_spmv_block exec_kernel $S -- "$P/base/gtap_spmv_block"
}
for v in base LN; do el "$v r1"; ab "$v" r1 tree22_block,spmv1m_block; done
el "racecheck of the detached block launch"
GTAP_SANITIZE_TOOLS=racecheck GTAP_SANITIZE_TESTS='^a_detached_block_launch' \
    GTAP_SANITIZE_TIMEOUT=$(( $(left) > 160 ? 150 : $(left) - 10 )) timeout "$(left)" \
    bash scripts/device-sanitize "$P/san" "$OUT/sanitize" >"$OUT/sanitize.log" 2>&1
echo "sanitize rc $?"
tail -5 "$OUT/sanitize/summary.txt"
el done
pack_logs
