#!/usr/bin/env bash
# Builds the pack of the queued profile call (README.md here) for bench/queued/run-p.sh:
#
#   bash bench/queued/build-pack.sh
#
# gtap-bench at the checked-out commit (base) and the same built with source lines in the SASS
# (LN, `GTAP_LINEINFO=1`, for Nsight Compute's source view), each with its ptxas report; the GPU
# tests and examples (scripts/device-sanitize --build) for the racecheck left over from session
# 30; the GTaP baseline copied from target/gtap-baseline (bench/build-baseline.sh). Run after
# `bash scripts/setup`: about 2 minutes a binary and 6 for the tests on two cores. Then carry
# `.device/p` to the device and run `bash bench/queued/run-p.sh` there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[ -x target/gtap-baseline/gtap_tree_block ] || { echo "build-pack: no GTaP baseline in target/gtap-baseline (bash bench/build-baseline.sh)" >&2; exit 2; }
out=".device/p/p"
rm -rf .device/p && mkdir -p "$out"
for v in base LN; do
    if [ "$v" = LN ]; then export GTAP_LINEINFO=1; fi
    GTAP_ARCH=sm_90 cargo build --release -p gtap-bench
    cp target/release/gtap-bench "$out/bench_$v"
    cp target/gtap-device/ptx/sm_90/gtap_workloads/ptxas-report.tsv "$out/ptxas-$v.tsv"
done
unset GTAP_LINEINFO
GTAP_ARCH=sm_90 bash scripts/device-sanitize --build "$out/san"
cp -r target/gtap-baseline "$out/base"
(cd .device/p && XZ_OPT="-6 -T2" tar cJf pack.tar.xz p && rm -rf p)
ls -la .device/p
