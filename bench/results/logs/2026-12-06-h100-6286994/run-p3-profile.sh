#!/usr/bin/env bash
# Session 38, call 7: A and P3 on spmv1m_block, GTaP's, then Nsight Compute on one launch of P3.
set -uo pipefail
source bench/device-call.sh .device/w
for v in A P3; do ab "$v" r1 spmv1m_block; done
el "GTaP spmv1m_block"
GTAP_LOG_DIR="$OUT/gtap" timeout 60 bash "$P/base/run.sh" spmv1m_block >"$OUT/gtap.log" 2>&1
echo "gtap rc $?"; grep -E "^BENCH label" "$OUT/gtap.log"
B="run --no-cpu --fib-cutoffs none --tree-depths none --grid-sizes none --warmup 0 --runs 1"
S="SpeedOfLight Occupancy LaunchStats WarpStateStats SourceCounters"
# shellcheck disable=SC2086 # $S and $B are lists of words
ncu_prof P3_spmv_block spmv_block_kernel $S -- "$P/bench_P3" $B --only spmv1m_block --out-dir "$OUT/ncu/P3-spmv"
pack_logs
el done
