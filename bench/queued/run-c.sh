#!/usr/bin/env bash
# Calls 1 and 2 in one, for a session whose device time is short after refused starts: call 1
# (the GPU tests and examples with ORL, the five variants' rounds), then ORL, the variant
# predicted to gain most, beside GTaP's runtime (block part) and the block-mode sanitizers, in
# what is left of the call. A variant other than ORL kept by the rounds needs run-2.sh.
#
#   bash bench/queued/run-c.sh        # on the device, carrying .device/o
set -uo pipefail
source bench/device-call.sh .device/o
gpu_tests
examples
L=tree22_block,tree22_thread,fib40
for r in 1 2 3; do for v in A O R OR ORL; do el "$v r$r"; ab "$v" "r$r" "$L"; done; done
for v in A ORL; do el "$v wide"; ab "$v" wide cilksort1e8,spmv1m_block,bfs_rmat22_block,bfs_grid1024_block; done
sbs ORL ORL-on-b81cbf9 block
[ "$(left)" -gt 100 ] && block_sanitizers $(( ($(left) - 20) / 4 ))
el done
pack_logs
