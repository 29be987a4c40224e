#!/usr/bin/env bash
# Queued call 2 of 2, after landing what call 1 (run-variants.sh) showed faster: the landed
# code beside GTaP's runtime, block and hot parts (its record), then its GPU tests and
# examples, then memcheck and racecheck over the two GPU tests session 34 added, each part
# where time is left (GTAP_CALL_S: the call's seconds).
#
#   bash bench/build-pack.sh .device/h     # here, at the landed commit
#   bash bench/queued/run-landed.sh        # on the device, carrying .device/h
set -uo pipefail
source bench/device-call.sh .device/h
sbs A "$(cat "$P/commit")" block hot
[ "$(left)" -gt 90 ] && gpu_tests 90
[ "$(left)" -gt 20 ] && examples
[ "$(left)" -gt 120 ] && sanitizers "memcheck racecheck" '^(a_strided_loop|a_kernel_capped)' 60
el done
