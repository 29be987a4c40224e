#!/usr/bin/env bash
# Builds the pack of the queued experiments (README.md here) for bench/queued/run-*.sh:
#
#   bash bench/queued/build-pack.sh
#
# gtap-bench is built at the checked-out commit (A) and with each variant's patch applied (O,
# R, OR, ORL), each with its ptxas report; the GPU tests and examples with ORL's device code
# (scripts/device-sanitize --build); the GTaP baseline is copied from target/gtap-baseline
# (bench/build-baseline.sh) for a side-by-side run of the variant kept. Run from a tree whose
# device code is clean, after `bash scripts/setup`: about 2 minutes a variant and 6 for the
# tests on two cores. Then carry `.device/o` to the device and run the call scripts there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
variants=(A O R OR ORL)
tests_patch=ORL
# The patches are applied to the tree (gtap-device) and taken back with `git checkout`.
touched=(gtap-device)
[ -z "$(git status --porcelain -- "${touched[@]}")" ] || { echo "build-pack: ${touched[*]} has local changes" >&2; exit 2; }
[ -x target/gtap-baseline/gtap_tree_block ] || { echo "build-pack: no GTaP baseline in target/gtap-baseline (bash bench/build-baseline.sh)" >&2; exit 2; }
out=".device/o/p"
rm -rf .device/o && mkdir -p "$out"
for v in "${variants[@]}"; do
    [ "$v" = A ] || git apply "bench/queued/$v.patch"
    GTAP_ARCH=sm_90 cargo build --release -p gtap-bench
    cp target/release/gtap-bench "$out/bench_$v"
    cp target/gtap-device/ptx/sm_90/gtap_workloads/ptxas-report.tsv "$out/ptxas-$v.tsv"
    git checkout -- "${touched[@]}"
done
git apply "bench/queued/$tests_patch.patch"
GTAP_ARCH=sm_90 bash scripts/device-sanitize --build "$out/san"
git checkout -- "${touched[@]}"
cp -r target/gtap-baseline "$out/base"
(cd .device/o && XZ_OPT="-6 -T2" tar cJf pack.tar.xz p && rm -rf p)
ls -la .device/o
