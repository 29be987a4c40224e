#!/usr/bin/env bash
# Builds the pack of the queued experiment (README.md here) for bench/queued/run-fw.sh:
#
#   bash bench/queued/build-pack.sh
#
# gtap-bench at the checked-out commit (A), with FW.patch applied (FW) and with FW.patch and
# FS.patch (FS), each with its ptxas report; the GPU tests and examples with FS's device code
# (scripts/device-sanitize --build);
# the GTaP baseline copied from target/gtap-baseline (bench/build-baseline.sh). Run from a
# tree whose gtap-device is clean, after `bash scripts/setup`: about 4 minutes a binary and 6
# for the tests on two cores. Then carry `.device/fw` to the device and run run-fw.sh there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
touched=(gtap-device)
[ -z "$(git status --porcelain -- "${touched[@]}")" ] || { echo "build-pack: ${touched[*]} has local changes" >&2; exit 2; }
[ -x target/gtap-baseline/gtap_tree_block ] || { echo "build-pack: no GTaP baseline in target/gtap-baseline (bash bench/build-baseline.sh)" >&2; exit 2; }
out=".device/fw/p"
rm -rf .device/fw && mkdir -p "$out"
git rev-parse --short HEAD >"$out/commit"
# Each variant's patches, applied in order: FS builds on FW.
patches() { case $1 in A) ;; FW) echo bench/queued/FW.patch ;; FS) echo bench/queued/FW.patch bench/queued/FS.patch ;; esac; }
for v in A FW FS; do
    for p in $(patches $v); do git apply "$p"; done
    GTAP_ARCH=sm_90 cargo build --release -p gtap-bench
    cp target/release/gtap-bench "$out/bench_$v"
    cp target/gtap-device/ptx/sm_90/gtap_workloads/ptxas-report.tsv "$out/ptxas-$v.tsv"
    git checkout -- "${touched[@]}"
done
for p in $(patches FS); do git apply "$p"; done
GTAP_ARCH=sm_90 bash scripts/device-sanitize --build "$out/san"
git checkout -- "${touched[@]}"
cp -r target/gtap-baseline "$out/base"
(cd .device/fw && XZ_OPT="-6 -T2" tar cJf pack.tar.xz p && rm -rf p)
ls -la .device/fw
