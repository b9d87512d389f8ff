#!/usr/bin/env bash
# gpu_replay_check.sh: the prepared check of `tetris-hil replay` on a real GPU (one H200). All
# eight endpoints of one built-in trace matrix (Mixtral-8x7B, matrix 0) run on GPU 0's workers
# (one pinned worker process per endpoint, --allow-shared-gpu), Tetris and BvN are replayed live
# with α_r = 10us injected, and the live completion is printed beside the emulator's prediction
# for the same schedules and models: the transfer model is GPU 0's loopback α-β, calibrated first
# in the same run (`tetris-hil calibrate --gpus 0`); if that step fails the prediction falls back
# to bytes/--bandwidth and the table says so in its notes.
#
# Needs only the prebuilt binary (no Go there); build it first, here:
#   go build -o bin/tetris-hil ./cmd/tetris-hil
# then run from the repository root (carry bin/):
#   OUT=/some/dir scripts/gpu_replay_check.sh
# A demand of the built-in trace is about 4 MB, which GPU 0 copies in microseconds, less than a
# worker's round trip per circuit; so the same replay runs again on a synthetic Mixtral-8x7B
# layer with 32 times the tokens (about 130 MB per demand, 7 GB in all), where copies outlast the
# coordination.
# Every step has a timeout; the whole script ends in about 4 minutes. Everything goes to
# $OUT/gpu_replay_check.log; the calibration to $OUT/cal.json, the run directories to $OUT/run
# and $OUT/run-big (manifest.json, summary.json, per run the live and predicted run records and a
# Perfetto trace).
# EXTRA=--fake smoke-tests the script without a GPU (fake NVML, fake engine).
set -u

BIN=${BIN:-bin/tetris-hil}
OUT=${OUT:-/tmp/tetris-hil-gpu-replay-check}
MATRIX=${MATRIX:-0}
RECONFIG=${RECONFIG:-10us}
read -r -a EXTRA <<<"${EXTRA:-}"
# Under --fake, calibration and replay must see the same fake hardware: copies of milliseconds,
# so that the noise of a shared machine is small against them.
FAKEHW=()
case " ${EXTRA[*]-} " in *" --fake "*) FAKEHW=(--fake-alpha 5ms --fake-bandwidth 1GB/s) ;; esac
LOG="$OUT/gpu_replay_check.log"
. "$(dirname "$0")/lib/gpu_check_common.sh"

echo "tetris-hil replay GPU check, $(date -u +%FT%TZ), $(uname -srm), $(nproc) CPUs"
echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>}"
if [ ! -x "$BIN" ]; then
	echo "no executable $BIN: build it with go build -o bin/tetris-hil ./cmd/tetris-hil"
	exit 2
fi
LOGF=(--log-format console --log-level info)

# (FAKEHW is set exactly under --fake, where there is no nvidia-smi to ask.)
[ ${#FAKEHW[@]} -gt 0 ] || step nvidia-smi 8 nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
step devices 20 "$BIN" "${LOGF[@]}" devices ${EXTRA[@]+"${EXTRA[@]}"}
# The delay injector on this machine: 10us, 100us and 1ms are the figures that matter.
step selftest-delays 60 "$BIN" "${LOGF[@]}" replay --selftest-delays --selftest-reps 1000

# GPU 0's loopback α-β between two pinned workers, over the sizes the trace's circuits have.
CALFLAG=()
if step calibrate 120 "$BIN" "${LOGF[@]}" calibrate --gpus 0 --pattern isolated --sizes 4KiB..512MiB --per-octave 2 \
	--reps 10 --warmup 3 --verify-every 4 --timeout 30s --no-progress ${EXTRA[@]+"${EXTRA[@]}"} ${FAKEHW[@]+"${FAKEHW[@]}"} -o "$OUT/cal.json"; then
	CALFLAG=(--calibration "$OUT/cal.json")
else
	echo "no calibration: the prediction uses bytes/--bandwidth (800Gbps)"
fi

rm -rf "$OUT/run"
step replay 180 "$BIN" "${LOGF[@]}" replay --matrix "$MATRIX" --algo tetris,bvn --reconfig "$RECONFIG" \
	--gpu-map 0,0,0,0,0,0,0,0 --allow-shared-gpu ${CALFLAG[@]+"${CALFLAG[@]}"} --timeout 30s \
	${EXTRA[@]+"${EXTRA[@]}"} ${FAKEHW[@]+"${FAKEHW[@]}"} --out "$OUT/run"

step trace-gen 30 "$BIN" trace gen --model mixtral-8x7b --layers 1 --tokens-per-gpu 65536 -o "$OUT/big.json"
rm -rf "$OUT/run-big"
step replay-big 180 "$BIN" "${LOGF[@]}" replay --demand "$OUT/big.json" --matrix 0 --algo tetris,bvn --reconfig "$RECONFIG" \
	--gpu-map 0,0,0,0,0,0,0,0 --allow-shared-gpu ${CALFLAG[@]+"${CALFLAG[@]}"} --timeout 60s \
	${EXTRA[@]+"${EXTRA[@]}"} ${FAKEHW[@]+"${FAKEHW[@]}"} --out "$OUT/run-big"

# The measured timelines must pass the verifier, like any emulated one.
for alg in tetris bvn; do
	if [ -f "$OUT/run/m$MATRIX-$alg.live.json" ]; then
		step "verify-$alg" 30 "$BIN" verify "$OUT/run/m$MATRIX-$alg.schedule.json" --matrix "$MATRIX" \
			--timeline "$OUT/run/m$MATRIX-$alg.live.json"
	fi
	if [ -f "$OUT/run-big/m0-$alg.live.json" ]; then
		step "verify-big-$alg" 30 "$BIN" verify "$OUT/run-big/m0-$alg.schedule.json" --demand "$OUT/big.json" --matrix 0 \
			--timeline "$OUT/run-big/m0-$alg.live.json"
	fi
done

for run in run run-big; do
echo
echo "=== $run: live against predicted (summary.json)"
if [ -f "$OUT/$run/summary.json" ]; then
	python3 - "$OUT/$run/summary.json" "$OUT/$run/manifest.json" <<'PY' || cat "$OUT/$run/summary.json"
import json, sys
s, m = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
print(f"complete: {s['complete']}; predicted with {m['predict_transfer_model']} and {m['predict_reconfig_model']}")
print(f"{'algorithm':10} {'live ms':>10} {'predicted ms':>13} {'live/pred':>10} {'start Δ med ms':>15} {'p99 ms':>8} {'end Δ med ms':>13} {'p99 ms':>8}")
for r in s["runs"]:
    sd, ed = r["start_difference_seconds"], r["end_difference_seconds"]
    print(f"{r['algorithm']:10} {r['completion_seconds']*1e3:10.3f} {r['predicted_completion_seconds']*1e3:13.3f} "
          f"{r['live_over_predicted']:10.4f} {sd['median']*1e3:15.3f} {sd['p99']*1e3:8.3f} {ed['median']*1e3:13.3f} {ed['p99']*1e3:8.3f}")
for n in s.get("notes", []):
    print("note:", n)
PY
fi
done

echo
if [ ${#FAILED[@]} -gt 0 ]; then
	echo "FAILED: ${FAILED[*]}"
	exit 1
fi
echo "all steps passed"
