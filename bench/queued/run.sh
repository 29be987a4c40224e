#!/usr/bin/env bash
# The device call for the queued experiments (see README.md here): the GPU tests and examples
# of the checked-out commit, then two rounds of A/B over the variants. About 7 minutes.
set -uo pipefail
source bench/device-call.sh .device/q
gpu_tests
examples
L=tree22_block,spmv1m_block,bfs_rmat22_block,bfs_grid1024_block,fib40,tree22_thread,bfs_rmat22_thread,spmv1m_thread,nqueens16,probtree34_thread
for r in 1 2; do for v in A P E Z EZ; do el "$v r$r"; ab $v r$r $L; done; done
el done
pack_logs
