#!/usr/bin/env bash
# Queued (after session 40; bench/NOTES.md entry 107): the landed code beside GTaP's runtime on
# an H200, block part; then why the block grid BFS runs 9-12 % slower with several tasks a step
# than with one (OLD), with the same steps: Nsight Compute on one launch each of A's and OLD's
# bfs_block_kernel on the grid graph (warp states, instruction mix, per-instruction counts and
# stall samples); then the hot part beside GTaP if the call has time left.
#
#   GTAP_PACK_SAN=none bash bench/build-pack.sh .device/h200 \
#       OLD=bench/results/logs/2026-12-06-h100-983ef59/OLD.patch
#   GTAP_CALL_S=570 bash bench/queued/run-h200-record.sh    # on the device, carrying .device/h200
set -uo pipefail
source bench/device-call.sh .device/h200
commit="$(cat "$P/commit")"
sbs A "$commit" block
mv "$OUT/sbs" "$OUT/sbs-block"
mv "$OUT/sbs.log" "$OUT/sbs-block.log"
B="run --no-cpu --fib-cutoffs none --tree-depths none --grid-sizes none --warmup 0 --runs 1"
S="SpeedOfLight WarpStateStats InstructionStats SourceCounters"
# shellcheck disable=SC2086 # $S and $B are lists of words
for v in A OLD; do
    ncu_prof "${v}_bfs_grid_block" '^bfs_block_kernel' $S -- "$P/bench_$v" $B --only bfs_grid1024_block --out-dir "$OUT/ncu/$v-grid"
done
[ "$(left)" -gt 300 ] && sbs A "$commit" hot
el done
