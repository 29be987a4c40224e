#!/usr/bin/env bash
# The landed code on a device, for its record: the GPU tests and the examples with its device
# code, then gtap beside GTaP's runtime, block part (issue 9's rows: the trees, BFS and SpMV in
# both modes).
#
#   bash bench/build-pack.sh .device/h     # here
#   bash bench/queued/run-landed.sh        # on the device, carrying .device/h
set -uo pipefail
source bench/device-call.sh .device/h
gpu_tests 90
examples
sbs A "$(cat "$P/commit")" block
el done
