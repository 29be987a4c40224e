#!/usr/bin/env bash
# Queued call: `max_blocks_per_sm` (CAP.patch, a per-kernel cap on the blocks a multiprocessor
# a kernel's launches use) with no kernel using it (A) and with fib and the thread SpMV capped
# at 4 (C4, CAP4.patch). The GPU tests with C4's device code and CAP's tests (among them the
# capped fib's own test) first; two rounds of A and C4 on the kernels C4 caps and, as a check
# that nothing else moved, the thread tree, the thread BFS and the block tree; the examples;
# then C4 beside GTaP's runtime, hot part (fib and the other thread-mode rows), in what is left.
#
#   git apply bench/queued/CAP.patch && git commit -am "..."    # on a branch, or landed
#   GTAP_PACK_SAN=C4 bash bench/build-pack.sh .device/c C4=bench/queued/CAP4.patch
#   bash bench/queued/run-cap.sh        # on the device, carrying .device/c
set -uo pipefail
source bench/device-call.sh .device/c
gpu_tests 90
T=fib40,spmv1m_thread,tree22_thread,bfs_rmat22_thread,tree22_block
for r in 1 2; do for v in A C4; do el "$v r$r"; ab "$v" "r$r" "$T"; done; done
examples
[ "$(left)" -gt 200 ] && sbs C4 "C4-on-$(cat "$P/commit")" hot
el done
