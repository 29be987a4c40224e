#!/usr/bin/env bash
# Calls 1 and 2 in one, for a session whose device time is short after refused starts, in the
# order of what landing needs: the GPU tests and examples with ORL's device code; A / OR / ORL
# in three rounds; ORL, the variant predicted to gain most, beside GTaP's runtime (block part);
# then, in what is left of the call, O and R once, A / ORL on cilksort and the block kernels that
# do not join, and the block-mode sanitizers. A variant other than ORL kept needs run-2.sh.
#
#   GTAP_CALL_S=SECONDS bash bench/queued/run-c.sh     # on the device, carrying .device/o
set -uo pipefail
source bench/device-call.sh .device/o
gpu_tests
examples
L=tree22_block,tree22_thread,fib40
for r in 1 2 3; do for v in A OR ORL; do el "$v r$r"; ab "$v" "r$r" "$L"; done; done
sbs ORL ORL-on-b81cbf9 block
for v in O R; do [ "$(left)" -gt 40 ] && { el "$v r1"; ab "$v" r1 "$L"; }; done
for v in A ORL; do
    [ "$(left)" -gt 60 ] && { el "$v wide"; ab "$v" wide cilksort1e8,spmv1m_block,bfs_rmat22_block,bfs_grid1024_block; }
done
[ "$(left)" -gt 100 ] && block_sanitizers $(( ($(left) - 20) / 4 ))
el done
pack_logs
