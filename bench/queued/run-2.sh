#!/usr/bin/env bash
# Queued call 2, after call 1 has said which variant to keep (V: O, R, OR or ORL): V beside
# GTaP's runtime, block part (the record's rows), then memcheck and racecheck over the
# block-mode GPU tests (built with ORL's device code) in what is left of the call.
#
#   bash bench/queued/run-2.sh V LABEL    # LABEL: the record's commit name, e.g. ORL-on-b81cbf9
set -uo pipefail
V="${1:?usage: run-2.sh VARIANT LABEL}"
LABEL="${2:?usage: run-2.sh VARIANT LABEL}"
source bench/device-call.sh .device/o
sbs "$V" "$LABEL" block
block_sanitizers
el done
pack_logs
