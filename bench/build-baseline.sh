#!/usr/bin/env bash
# Builds the GTaP baseline (GTaP's runtime with its hand-lowered benchmarks) for the GPU
# machine: 20 sm_90 binaries and run.sh, into target/gtap-baseline (no GPU needed; about a
# minute on 2 cores; needs g++, python3 and pip, which fetches NVIDIA's CUDA 13 compiler wheels
# unless CUDA_HOME is set). Not run by CI.
#
#   GTAP_SRC=path/to/GTaP bench/build-baseline.sh [BASELINE_SRC_DIR] [OUT_DIR]
#
# GTAP_SRC         a GTaP checkout or a bare git directory of it (required; see the baseline's
#                  README for the pinned commit)
# BASELINE_SRC_DIR the baseline's sources (default: shared/gtap-baseline)
# OUT_DIR          where the binaries go (default: target/gtap-baseline)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="${1:-$root/shared/gtap-baseline}"
out="${2:-$root/target/gtap-baseline}"
: "${GTAP_SRC:?set GTAP_SRC to a GTaP checkout or bare git directory}"
[ -x "$src/build.sh" ] || { echo "build-baseline: no build.sh in $src" >&2; exit 2; }
mkdir -p "$out"
GTAP_OUT="$(cd "$out" && pwd)" GTAP_SRC="$GTAP_SRC" bash "$src/build.sh"
echo "GTaP baseline built in $out"
