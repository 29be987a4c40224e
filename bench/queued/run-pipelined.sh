#!/usr/bin/env bash
# Queued (after session 38): the pipelined block on an H200 (bench/NOTES.md entry 106). A
# against P3 (a scheduling warp that does not poll; the next task from the block's claimed ids
# or its own queue, found while the pollers run a task) on spmv1m_block, two rounds, then
# GTaP's block SpMV in the same call.
#
#   GTAP_PACK_SAN=none bash bench/build-pack.sh .device/p3 P3=bench/queued/P3.patch
#   GTAP_CALL_S=280 bash bench/queued/run-pipelined.sh    # on the device, carrying .device/p3
set -uo pipefail
source bench/device-call.sh .device/p3
for r in 1 2; do
    for v in A P3; do
        [ "$(left)" -gt 70 ] && ab "$v" "r$r" spmv1m_block
    done
done
el "GTaP spmv1m_block"
GTAP_LOG_DIR="$OUT/gtap" timeout 60 bash "$P/base/run.sh" spmv1m_block >"$OUT/gtap.log" 2>&1
echo "gtap rc $?"
grep -E "^BENCH label" "$OUT/gtap.log"
pack_logs
el done
