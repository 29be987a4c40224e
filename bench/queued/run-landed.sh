#!/usr/bin/env bash
# Queued call 2 of 2, after landing what call 1 (run-variants.sh) showed faster: the landed
# code's GPU tests and examples with its device code, then the landed code beside GTaP's
# runtime, block and hot parts (its record), then memcheck and racecheck over the two GPU tests
# session 34 added, where time is left.
#
#   bash bench/build-pack.sh .device/h     # here, at the landed commit
#   bash bench/queued/run-landed.sh        # on the device, carrying .device/h
set -uo pipefail
source bench/device-call.sh .device/h
gpu_tests 90
examples
sbs A "$(cat "$P/commit")" block hot
[ "$(left)" -gt 120 ] && sanitizers "memcheck racecheck" '^(a_strided_loop|a_kernel_capped)' 60
el done
