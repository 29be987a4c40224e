#!/usr/bin/env bash
# Session 38: P4 (P3 whose scheduling warp may also steal while the pollers run a task) and P3
# against A on spmv1m_block, two rounds, then GTaP's block SpMV.
set -uo pipefail
source bench/device-call.sh .device/w
run1() {
    local v=$1 tag=$2
    timeout 60 "$P/bench_$v" run --no-cpu --fib-cutoffs none --tree-depths none --grid-sizes none \
        --warmup 2 --runs 10 --only spmv1m_block --out-dir "$OUT/ab/$v-$tag" >"$OUT/ab/$v-$tag.log" 2>&1
    echo "$v $tag rc $? $(grep -E '^   gtap' "$OUT/ab/$v-$tag.log" | awk '{print $NF, $3}' | tr '\n' ' ')"
    pack_logs
}
for r in 1 2; do
    for v in A P4 P3; do
        [ "$(left)" -gt 70 ] && run1 "$v" "r$r"
    done
done
el "GTaP spmv1m_block"
GTAP_LOG_DIR="$OUT/gtap" timeout 60 bash "$P/base/run.sh" spmv1m_block >"$OUT/gtap.log" 2>&1
echo "gtap rc $?"; grep -E "BENCH|median" "$OUT/gtap.log" | tail -3
pack_logs
el done
