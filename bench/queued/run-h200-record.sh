#!/usr/bin/env bash
# Queued (after session 40): the landed code beside GTaP's runtime on an H200, block part, then
# the hot part if the call has time left (bench/NOTES.md entry 107).
#
#   GTAP_PACK_SAN=none bash bench/build-pack.sh .device/h200
#   GTAP_CALL_S=540 bash bench/queued/run-h200-record.sh    # on the device, carrying .device/h200
set -uo pipefail
source bench/device-call.sh .device/h200
sbs A "$(cat "$P/commit")" block
mv "$OUT/sbs" "$OUT/sbs-block"
mv "$OUT/sbs.log" "$OUT/sbs-block.log"
[ "$(left)" -gt 300 ] && sbs A "$(cat "$P/commit")" hot
el done
