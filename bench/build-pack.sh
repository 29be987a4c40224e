#!/usr/bin/env bash
# Builds a pack for one device call (bench/device-call.sh says what a pack holds):
#
#   bash bench/build-pack.sh DIR [VARIANT=PATCH[+PATCH...]]...
#
# bench_A is gtap-bench at the checked-out commit; each VARIANT=... is gtap-bench with those
# patches applied in order (each with its ptxas report, ptxas-<VARIANT>.tsv). The GPU tests and
# examples (scripts/device-sanitize --build) are built with the device code of the variant
# GTAP_PACK_SAN names (default A; `none` leaves them out, for a call that only times). The
# GTaP baseline is copied from target/gtap-baseline (bench/build-baseline.sh). Run after
# `bash scripts/setup`, from a tree whose gtap-device and bench/workloads are clean (patches
# touch only those): about 4 minutes a binary and 6 for the tests on two cores. Then carry DIR
# to the device and source bench/device-call.sh DIR in the call's script.
set -euo pipefail
dir="${1:?usage: bash bench/build-pack.sh DIR [VARIANT=PATCH[+PATCH...]]...}"
shift
cd "$(dirname "${BASH_SOURCE[0]}")/.."
touched=(gtap-device bench/workloads)
[ -z "$(git status --porcelain -- "${touched[@]}")" ] || { echo "build-pack: ${touched[*]} has local changes" >&2; exit 2; }
[ -x target/gtap-baseline/gtap_tree_block ] || { echo "build-pack: no GTaP baseline in target/gtap-baseline (bash bench/build-baseline.sh)" >&2; exit 2; }

declare -A patches=([A]="")
variants=(A)
for arg in "$@"; do
    [[ "$arg" == *=* ]] || { echo "build-pack: '$arg' is not VARIANT=PATCH[+PATCH...]" >&2; exit 2; }
    v=${arg%%=*}
    patches[$v]=${arg#*=}
    variants+=("$v")
    for p in ${patches[$v]//+/ }; do
        [ -f "$p" ] || { echo "build-pack: no patch $p" >&2; exit 2; }
    done
done
san=${GTAP_PACK_SAN:-A}
[ "$san" = none ] || [ -n "${patches[$san]+set}" ] || { echo "build-pack: GTAP_PACK_SAN names no variant ($san)" >&2; exit 2; }

apply() { local p; for p in ${patches[$1]//+/ }; do git apply "$p"; done; }

out="$dir/p"
rm -rf "$dir" && mkdir -p "$out"
git rev-parse --short HEAD >"$out/commit"
for v in "${variants[@]}"; do
    apply "$v"
    GTAP_ARCH=sm_90 cargo build --release -p gtap-bench
    cp target/release/gtap-bench "$out/bench_$v"
    cp target/gtap-device/ptx/sm_90/gtap_workloads/ptxas-report.tsv "$out/ptxas-$v.tsv"
    git checkout -- "${touched[@]}"
done
if [ "$san" != none ]; then
    apply "$san"
    GTAP_ARCH=sm_90 bash scripts/device-sanitize --build "$out/san"
    git checkout -- "${touched[@]}"
fi
cp -r target/gtap-baseline "$out/base"
(cd "$dir" && XZ_OPT="-6 -T2" tar cJf pack.tar.xz p && rm -rf p)
ls -la "$dir"
