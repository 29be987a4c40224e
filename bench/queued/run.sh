#!/usr/bin/env bash
# The device call of one set of queued experiments (README.md here), with the pack that
# `build-pack.sh SET` made carried as `.device/SET`: every GPU test and example of the pack,
# then two rounds of A/B over the set's variants, every launch verified. About 7 minutes (q)
# or 6 (t).
set -uo pipefail
set_name="${1:?usage: run.sh q|t}"
case "$set_name" in
    q) variants=(A P E Z EZ) ;;
    t) variants=(A T0 T0S T0SE) ;;
    *) echo "run: unknown set $set_name (q or t)" >&2; exit 2 ;;
esac
source bench/device-call.sh ".device/$set_name"
gpu_tests
examples
L=tree22_block,spmv1m_block,bfs_rmat22_block,bfs_grid1024_block,fib40,tree22_thread,bfs_rmat22_thread,spmv1m_thread,nqueens16,probtree34_thread
for r in 1 2; do for v in "${variants[@]}"; do el "$v r$r"; ab "$v" "r$r" "$L"; done; done
el done
pack_logs
