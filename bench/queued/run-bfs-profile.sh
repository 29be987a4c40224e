#!/usr/bin/env bash
# Where the thread-mode BFS's time goes beside GTaP's on the card at hand (on session 32's H100
# it ran at 0.94x GTaP's, 1.03x on session 30's H200): Nsight Compute on one launch of our
# bfs_kernel and of GTaP's thread BFS (speed of light, occupancy, launch, memory workload, warp
# states, instruction mix, per-instruction counts and stall samples; GTaP's BFS kernel is
# `my_kernel`, not `exec_kernel`), then one round of the two BFS inputs in both modes.
#
#   bash bench/build-pack.sh .device/h         # here
#   bash bench/queued/run-bfs-profile.sh       # on the device, carrying .device/h
set -uo pipefail
source bench/device-call.sh .device/h
B="run --no-cpu --fib-cutoffs none --tree-depths none --grid-sizes none --warmup 0 --runs 1"
S="SpeedOfLight Occupancy LaunchStats MemoryWorkloadAnalysis WarpStateStats InstructionStats SourceCounters"
# shellcheck disable=SC2086 # $S and $B are lists of words
{
    ncu_prof A_bfs_thread '^bfs_kernel' $S -- "$P/bench_A" $B --only bfs_rmat22_thread --out-dir "$OUT/ncu/A-bfs"
    GTAP_WARMUP=0 GTAP_RUNS=1 ncu_prof g_bfs_thread my_kernel $S -- "$P/base/gtap_bfs_thread" 22 16 0
}
el "A wide"
ab A wide bfs_rmat22_thread,bfs_grid1024_thread,bfs_rmat22_block,bfs_grid1024_block
el done
