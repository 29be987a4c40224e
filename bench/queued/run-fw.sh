#!/usr/bin/env bash
# Queued call: FW (the block worker's scheduling warp finds its state at warp 0's constant
# offset, README.md here) and FS (FW, with that warp's leader and live mask read by `.shared`
# loads at constant addresses) against A, the code before. The GPU tests with FS's device code
# (which holds FW's) first; two rounds of A, FW and FS on the block tree, the block SpMV,
# fib(40) and the thread tree (the thread kernels' SASS moved a little too), then once on the
# two block BFS; the examples with FS; then, in what is left, FS beside GTaP's runtime (block
# part) and the racecheck left over from sessions 30 and 31.
#
#   bash bench/queued/run-fw.sh        # on the device, carrying .device/fw
set -uo pipefail
source bench/device-call.sh .device/fw
gpu_tests 90
for r in 1 2; do for v in A FW FS; do el "$v r$r"; ab "$v" "r$r" tree22_block,spmv1m_block,fib40,tree22_thread; done; done
for v in A FW FS; do el "$v wide"; ab "$v" wide bfs_rmat22_block,bfs_grid1024_block; done
examples
[ "$(left)" -gt 200 ] && sbs FS "FS-on-$(cat "$P/commit")" block
sanitizers racecheck '^a_detached_block_launch' $(( $(left) > 160 ? 150 : $(left) - 10 ))
el done
