#!/usr/bin/env bash
# Calls 1 and 2 of the queue in one call, to pay one machine start (session 36): the landed
# code's record beside GTaP (block and hot parts), then run-occupancy.sh's rounds, then the GPU
# tests and examples, each where time is left (GTAP_CALL_S). What this call leaves undone
# stays in run-landed.sh (tests, examples, sanitizers).
#
#   GTAP_CALL_S=585 bash bench/queued/run-record-occupancy.sh   # on the device, carrying .device/h
set -uo pipefail
source bench/device-call.sh .device/h
sbs A "$(cat "$P/commit")" block hot
T=fib40_cutoff14_q3,fib40_cutoff14_q1,tree20_epaq_q3,tree20_epaq_q1,probtree34_thread
T=$T,nqueens16,tree22_thread,cilksort1e8,mergesort1e7
for r in 1 2; do
    for g in own 528 396; do
        [ "$(left)" -gt 70 ] || break 2
        el "grid $g r$r"
        if [ "$g" = own ]; then ab A "own-r$r" "$T"; else ab A "g$g-r$r" "$T" --grid "$g"; fi
    done
done
[ "$(left)" -gt 90 ] && gpu_tests 90
[ "$(left)" -gt 20 ] && examples
el done
