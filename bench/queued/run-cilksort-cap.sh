#!/usr/bin/env bash
# Queued (after session 36): the cilksort kernels' cap of 3 blocks a multiprocessor (f16e150,
# bench/NOTES.md entry 104) timed against the same code without it (U, UNCAP.patch), two rounds
# interleaved; then the capped code beside GTaP's runtime, hot part (its record), where time
# is left (GTAP_CALL_S).
#
#   bash bench/build-pack.sh .device/q U=bench/queued/UNCAP.patch   # here, at f16e150 or later
#   bash bench/queued/run-cilksort-cap.sh                            # on the device, carrying .device/q
set -uo pipefail
source bench/device-call.sh .device/q
T=cilksort1e8,cilksort5e7_cutoff256_q3,cilksort5e7_cutoff256_q1
for r in 1 2; do
    for v in U A; do
        [ "$(left)" -gt 40 ] && ab "$v" "r$r" "$T"
    done
done
[ "$(left)" -gt 150 ] && sbs A "$(cat "$P/commit")" hot
el done
