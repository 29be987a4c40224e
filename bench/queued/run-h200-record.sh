#!/usr/bin/env bash
# Queued (after session 41; bench/NOTES.md entry 108): the landed code beside GTaP's runtime on
# an H200, block part, then the hot part.
#
#   GTAP_PACK_SAN=none bash bench/build-pack.sh .device/h200
#   GTAP_CALL_S=570 bash bench/queued/run-h200-record.sh    # on the device, carrying .device/h200
set -uo pipefail
source bench/device-call.sh .device/h200
commit="$(cat "$P/commit")"
sbs A "$commit" block
mv "$OUT/sbs" "$OUT/sbs-block"
mv "$OUT/sbs.log" "$OUT/sbs-block.log"
sbs A "$commit" hot
