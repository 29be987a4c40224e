#!/usr/bin/env bash
# Queued (after session 37): the block SpMV at 32 registers on 14 blocks a multiprocessor (R32:
# today's map, which shared memory stops at 14) and on 16 (L32: entry 105's map L, which fits
# 16 as GTaP's), against A (40 registers, 12 blocks); two rounds (bench/NOTES.md entry 105).
#
#   GTAP_PACK_SAN=none bash bench/build-pack.sh .device/s \
#       R32=bench/queued/R32.patch L32=bench/queued/L32.patch
#   GTAP_CALL_S=150 bash bench/queued/run-32-registers.sh    # on the device, carrying .device/s
set -uo pipefail
source bench/device-call.sh .device/s
for r in 1 2; do
    for v in A R32 L32; do
        [ "$(left)" -gt 20 ] && ab "$v" "r$r" spmv1m_block
    done
done
el done
