#!/usr/bin/env bash
# Queued call 1 of 2: the GPU tests and the examples with CU's device code (CAP4 and U1
# together), A (the checked-out code, with `max_blocks_per_sm` landed and no kernel using it)
# beside GTaP's runtime, block part (issue 9's rows, for an H200's record), then two rounds of
# A, C4 (fib and the thread SpMV capped at 4 blocks a multiprocessor) and U1 (`Block::for_each`
# two calls a trip) on the kernels they change and, as a check that nothing else moved, the
# thread tree, the thread BFS and the block tree.
#
#   GTAP_PACK_SAN=CU bash bench/build-pack.sh .device/v C4=bench/queued/CAP4.patch \
#       U1=bench/queued/U1.patch CU=bench/queued/CAP4.patch+bench/queued/U1.patch   # here
#   bash bench/queued/run-variants.sh          # on the device, carrying .device/v
set -uo pipefail
source bench/device-call.sh .device/v
gpu_tests 90
examples
sbs A "$(cat "$P/commit")" block
T=fib40,spmv1m_thread,spmv1m_block,tree22_thread,bfs_rmat22_thread,tree22_block
for r in 1 2; do for v in A C4 U1; do
    [ "$(left)" -gt 45 ] || break 2
    el "$v r$r"; ab "$v" "r$r" "$T"
done; done
el done
