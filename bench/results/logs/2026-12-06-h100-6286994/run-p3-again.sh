#!/usr/bin/env bash
# Session 38, call 9: P3 against A on spmv1m_block, two rounds, then GTaP's block SpMV.
set -uo pipefail
source bench/device-call.sh .device/y
for r in 1 2; do
    for v in A P3; do
        [ "$(left)" -gt 50 ] && ab "$v" "r$r" spmv1m_block
    done
done
el "GTaP spmv1m_block"
GTAP_LOG_DIR="$OUT/gtap" timeout 50 bash "$P/base/run.sh" spmv1m_block >"$OUT/gtap.log" 2>&1
echo "gtap rc $?"; grep -E "^BENCH label" "$OUT/gtap.log"
pack_logs
el done
