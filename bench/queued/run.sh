#!/usr/bin/env bash
# The device call of one set of queued experiments (README.md here), with the pack that
# `build-pack.sh SET` made carried as `.device/SET`: every GPU test and example of the pack,
# then two rounds of A/B over the set's variants, every launch verified. About 7 minutes (q)
# or 7 (t).
set -uo pipefail
set_name="${1:?usage: run.sh q|t}"
# Every variant runs the ten labels, but for those listed in `block_only` (the four block
# labels) and `caps_only` (the two kernels whose register caps they change).
L=tree22_block,spmv1m_block,bfs_rmat22_block,bfs_grid1024_block,fib40,tree22_thread,bfs_rmat22_thread,spmv1m_thread,nqueens16,probtree34_thread
block_only=" " caps_only=" "
case "$set_name" in
    q) variants=(A P E Z EZ) ;;
    t) variants=(A T0 T0S T0SE T0SC1 T0SC2); block_only=" T0 " caps_only=" T0SC1 T0SC2 " ;;
    *) echo "run: unknown set $set_name (q or t)" >&2; exit 2 ;;
esac
source bench/device-call.sh ".device/$set_name"
gpu_tests
examples
labels() {
    case "$caps_only" in *" $1 "*) echo tree22_block,spmv1m_block; return ;; esac
    case "$block_only" in *" $1 "*) echo "${L%%,fib40*}"; return ;; esac
    echo "$L"
}
for r in 1 2; do for v in "${variants[@]}"; do el "$v r$r"; ab "$v" "r$r" "$(labels "$v")"; done; done
el done
pack_logs
