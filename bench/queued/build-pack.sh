#!/usr/bin/env bash
# Builds the pack that bench/queued/run.sh runs on the device: gtap-bench at the checked-out
# commit (A) and with each patch of this directory applied (P, E, Z, EZ), and the GPU tests and
# examples of the checked-out commit (scripts/device-sanitize --build). Run from a clean tree
# after `bash scripts/setup`; takes about 15 minutes on two cores. Then carry `.device/q` to the
# device and run `bash bench/queued/run.sh` there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[ -z "$(git status --porcelain -- gtap-device)" ] || { echo "build-pack: gtap-device has local changes" >&2; exit 2; }
out=.device/q/p
rm -rf .device/q && mkdir -p "$out"
for v in A P E Z EZ; do
    [ "$v" = A ] || git apply "bench/queued/$v.patch"
    GTAP_ARCH=sm_90 cargo build --release -p gtap-bench
    cp target/release/gtap-bench "$out/bench_$v"
    cp target/gtap-device/ptx/sm_90/gtap_workloads/ptxas-report.tsv "$out/ptxas-$v.tsv"
    git checkout -- gtap-device
done
GTAP_ARCH=sm_90 bash scripts/device-sanitize --build "$out/san"
(cd .device/q && XZ_OPT="-6 -T2" tar cJf pack.tar.xz p && rm -rf p)
ls -la .device/q
