#!/usr/bin/env bash
# Queued call: W (the block worker's scheduling warp finds its state at warp 0's constant
# offset, README.md here) against A, the code before. The GPU tests and examples with W's
# device code first; two rounds of A and W on the block tree, the block SpMV, fib(40) and the
# thread tree (the thread kernels' SASS moved a little too), then once on the two block BFS;
# then, in what is left, W beside GTaP's runtime (block part) and the racecheck left over from
# sessions 30 and 31.
#
#   bash bench/queued/run-w.sh        # on the device, carrying .device/w
set -uo pipefail
source bench/device-call.sh .device/w
gpu_tests 90
for r in 1 2; do for v in A W; do el "$v r$r"; ab "$v" "r$r" tree22_block,spmv1m_block,fib40,tree22_thread; done; done
for v in A W; do el "$v wide"; ab "$v" wide bfs_rmat22_block,bfs_grid1024_block; done
examples
[ "$(left)" -gt 200 ] && sbs W "W-on-$(cat "$P/commit")" block
sanitizers racecheck '^a_detached_block_launch' $(( $(left) > 160 ? 150 : $(left) - 10 ))
el done
