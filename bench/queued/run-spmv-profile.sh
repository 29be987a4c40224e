#!/usr/bin/env bash
# Queued (after session 36): why GTaP's block SpMV gains 13 % on an H200 over an H100 and ours
# 1.3 % (bench/NOTES.md entry 104). Nsight Compute on one launch each of our block SpMV and of
# GTaP's (speed of light, occupancy, warp states, memory workload, SASS-level source counters),
# then one round of both beside each other to tie the profiles to this machine's times. Worth
# most on an H200; on an H100 it repeats entry 98's profile.
#
#   bash bench/queued/run-spmv-profile.sh     # on the device, carrying .device/q (the same pack)
set -uo pipefail
source bench/device-call.sh .device/q
B="run --no-cpu --fib-cutoffs none --tree-depths none --grid-sizes none --warmup 0 --runs 1"
S="SpeedOfLight Occupancy LaunchStats WarpStateStats MemoryWorkloadAnalysis InstructionStats SourceCounters"
export GTAP_WARMUP=0 GTAP_RUNS=1 # one launch of GTaP's binary (its harness reads these)
# shellcheck disable=SC2086 # $S and $B are lists of words
{
    ncu_prof A_spmv_block spmv_block_kernel $S -- "$P/bench_A" $B --only spmv1m_block --out-dir "$OUT/ncu/A-spmv"
    ncu_prof g_spmv_block exec_kernel $S -- "$P/base/gtap_spmv_block"
}
unset GTAP_WARMUP GTAP_RUNS
[ "$(left)" -gt 120 ] && sbs A "$(cat "$P/commit")" block
el done
