#!/usr/bin/env bash
# Builds the pack of one set of queued experiments (README.md here) for bench/queued/run.sh:
#
#   bash bench/queued/build-pack.sh q   # A, P, E, Z, EZ; the GPU tests and examples of HEAD
#   bash bench/queued/build-pack.sh t   # A, T0, T0S, T0SE, T0SC1, T0SC2; the GPU tests and examples with T0S
#
# gtap-bench is built at the checked-out commit (A) and with each variant's patch applied; the
# GPU tests and examples with scripts/device-sanitize --build. Run from a tree whose device code
# is clean, after `bash scripts/setup`: about 2 minutes a variant and 6 for the tests on two
# cores. Then carry `.device/<set>` to the device and run `bash bench/queued/run.sh <set>` there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
set_name="${1:?usage: build-pack.sh q|t}"
case "$set_name" in
    q) variants=(A P E Z EZ); tests_patch= ;;
    t) variants=(A T0 T0S T0SE T0SC1 T0SC2); tests_patch=T0S ;;
    *) echo "build-pack: unknown set $set_name (q or t)" >&2; exit 2 ;;
esac
# The patches are applied to the tree (gtap-device, docs and the bench's workloads) and taken
# back with `git checkout` and `git clean`.
touched=(gtap-device docs bench/workloads)
[ -z "$(git status --porcelain -- "${touched[@]}")" ] || { echo "build-pack: ${touched[*]} has local changes" >&2; exit 2; }
out=".device/$set_name/p"
rm -rf ".device/$set_name" && mkdir -p "$out"
for v in "${variants[@]}"; do
    [ "$v" = A ] || git apply "bench/queued/$v.patch"
    GTAP_ARCH=sm_90 cargo build --release -p gtap-bench
    cp target/release/gtap-bench "$out/bench_$v"
    cp target/gtap-device/ptx/sm_90/gtap_workloads/ptxas-report.tsv "$out/ptxas-$v.tsv"
    git checkout -- "${touched[@]}" && git clean -fdq -- "${touched[@]}"
done
[ -z "$tests_patch" ] || git apply "bench/queued/$tests_patch.patch"
GTAP_ARCH=sm_90 bash scripts/device-sanitize --build "$out/san"
git checkout -- "${touched[@]}" && git clean -fdq -- "${touched[@]}"
(cd ".device/$set_name" && XZ_OPT="-6 -T2" tar cJf pack.tar.xz p && rm -rf p)
ls -la ".device/$set_name"
