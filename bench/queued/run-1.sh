#!/usr/bin/env bash
# Queued call 1: the GPU tests (none may skip) and the examples, each checked against its
# sequential reference, with ORL's device code; then A / O / R / OR / ORL on the block tree and
# the thread kernels beside it, three rounds, and A / ORL once on the block kernels that do not
# join and on cilksort (whose ptxas allocation moved), every launch verified.
#
#   bash bench/queued/run-1.sh        # on the device, carrying .device/o
set -uo pipefail
source bench/device-call.sh .device/o
gpu_tests
examples
L=tree22_block,tree22_thread,fib40
for r in 1 2 3; do for v in A O R OR ORL; do el "$v r$r"; ab "$v" "r$r" "$L"; done; done
for v in A ORL; do el "$v wide"; ab "$v" wide cilksort1e8,spmv1m_block,bfs_rmat22_block,bfs_grid1024_block; done
el done
pack_logs
