#!/usr/bin/env bash
# Queued call 3: where the block tree's step spends its time, A's and ORL's: Nsight Compute on one
# launch each, source counters (per-SASS-instruction samples), warp states, memory workload and
# speed of light (the L2 sectors read and written: entry 95's lesson).
#
#   bash bench/queued/run-3.sh
set -uo pipefail
source bench/device-call.sh .device/o
for v in A ORL; do
    ncu_prof "${v}_tree_block" tree_block_kernel SpeedOfLight WarpStateStats MemoryWorkloadAnalysis SourceCounters -- \
        "$P/bench_$v" run --no-cpu --fib-cutoffs none --tree-depths none --grid-sizes none --warmup 0 --runs 1 \
        --only tree22_block --out-dir "$OUT/one-$v"
done
el done
pack_logs
