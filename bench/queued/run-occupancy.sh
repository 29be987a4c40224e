#!/usr/bin/env bash
# Queued call 2: which thread-mode kernels run faster on fewer blocks a multiprocessor, as fib
# and the thread SpMV did (bench/NOTES.md entries 101 and 103). Two rounds of the checked-out
# code on its own grid (every block its kernels keep resident), on 4 blocks a multiprocessor
# and on 3 (`--grid`: a kernel that keeps fewer runs on those), over the thread-mode hot-path
# kernels that keep 4 or 5. The grids are for 132 multiprocessors (H100 SXM, H200).
#
#   bash bench/build-pack.sh .device/h             # here (the same pack as run-landed.sh)
#   bash bench/queued/run-occupancy.sh             # on the device, carrying .device/h
set -uo pipefail
source bench/device-call.sh .device/h
# 96 registers, 5 blocks: the EPAQ fibs and trees, probtree; 100 to 128, 4 blocks: nqueens,
# the binary tree, cilksort, mergesort (the pack's ptxas-A.tsv).
T=fib40_cutoff14_q3,fib40_cutoff14_q1,tree20_epaq_q3,tree20_epaq_q1,probtree34_thread
T=$T,nqueens16,tree22_thread,cilksort1e8,mergesort1e7
for r in 1 2; do
    for g in own 528 396; do
        [ "$(left)" -gt 60 ] || break 2
        el "grid $g r$r"
        if [ "$g" = own ]; then ab A "own-r$r" "$T"; else ab A "g$g-r$r" "$T" --grid "$g"; fi
    done
done
el done
