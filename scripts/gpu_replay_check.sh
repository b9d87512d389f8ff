#!/usr/bin/env bash
# gpu_replay_check.sh: the prepared check of `tetris-hil replay` on a real GPU (one H200). All
# eight endpoints of one built-in trace matrix (Mixtral-8x7B, matrix 0) run on GPU 0
# (--allow-shared-gpu), compiled: one CUDA stream program per endpoint (waits on end flags in
# mapped memory, a %globaltimer delay kernel, the copy, an end stamp), the host only watching.
# Tetris and BvN are replayed with α_r = 10us injected, with copy-engine and with SM copies, and
# the live completion is printed beside the emulator's prediction for the same schedules and
# models: the transfer model is GPU 0's loopback α-β, calibrated first in the same run
# (`tetris-hil calibrate --gpus 0`, patterns isolated and permutation: calibrate measures the
# permutation pattern only across two or more GPUs, so on one GPU it is the isolated loopback);
# if that step fails the prediction falls back to bytes/--bandwidth and the table says so in its
# notes. From the GPU's own stamps it also prints the harness's cost per circuit and the error of
# the injected delay: for every circuit that waited on a reconfiguration, its start minus the
# command's request, minus α_r (median, p99).
#
# Needs only the prebuilt binary (no Go there); build it first, here:
#   go build -o bin/tetris-hil ./cmd/tetris-hil
# then run from the repository root (carry bin/):
#   OUT=/some/dir scripts/gpu_replay_check.sh
# A demand of the built-in trace is about 4 MB, which GPU 0 copies in microseconds, less than a
# worker's round trip per circuit; so the same replay runs again on a synthetic Mixtral-8x7B
# layer with 32 times the tokens (about 130 MB per demand, 7 GB in all), where copies outlast the
# coordination.
# The compiled replay across worker processes (--process-per-gpu) runs too, on matrix 0 with CE and
# SM copies and on the large layer with CE: one pinned worker process for GPU 0 runs the eight
# endpoints' stream programs against a shared memory file it registers with the driver
# (cuMemHostRegister), its stamps put on CLOCK_MONOTONIC by GPU 0's offset measured at the start
# (printed from summary.json), while this process releases the run and plays the station from
# the thread that watches the flags. With every endpoint on one GPU there is one worker, so copies
# stay on GPU 0: the copies into buffers exported by another GPU's worker (CUDA IPC) need two
# GPUs and are not exercised here.
# Every step has a timeout; the whole script ends in about 6 minutes. Everything goes to
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
if step calibrate 120 "$BIN" "${LOGF[@]}" calibrate --gpus 0 --pattern isolated,permutation --sizes 4KiB..512MiB --per-octave 2 \
	--reps 10 --warmup 3 --verify-every 4 --timeout 30s --no-progress ${EXTRA[@]+"${EXTRA[@]}"} ${FAKEHW[@]+"${FAKEHW[@]}"} -o "$OUT/cal.json"; then
	CALFLAG=(--calibration "$OUT/cal.json")
else
	echo "no calibration: the prediction uses bytes/--bandwidth (800Gbps)"
fi

step trace-gen 30 "$BIN" trace gen --model mixtral-8x7b --layers 1 --tokens-per-gpu 65536 -o "$OUT/big.json"
RUNS=()
for copy in ce sm; do
	rm -rf "$OUT/run-$copy" "$OUT/run-big-$copy"
	step "replay-$copy" 120 "$BIN" "${LOGF[@]}" replay --matrix "$MATRIX" --algo tetris,bvn --reconfig "$RECONFIG" --copy "$copy" \
		--gpu-map 0,0,0,0,0,0,0,0 --allow-shared-gpu ${CALFLAG[@]+"${CALFLAG[@]}"} --timeout 30s \
		${EXTRA[@]+"${EXTRA[@]}"} ${FAKEHW[@]+"${FAKEHW[@]}"} --out "$OUT/run-$copy"
	step "replay-big-$copy" 120 "$BIN" "${LOGF[@]}" replay --demand "$OUT/big.json" --matrix 0 --algo tetris,bvn --reconfig "$RECONFIG" \
		--copy "$copy" --gpu-map 0,0,0,0,0,0,0,0 --allow-shared-gpu ${CALFLAG[@]+"${CALFLAG[@]}"} --timeout 60s \
		${EXTRA[@]+"${EXTRA[@]}"} ${FAKEHW[@]+"${FAKEHW[@]}"} --out "$OUT/run-big-$copy"
	RUNS+=("run-$copy" "run-big-$copy")
done
# The same replays across worker processes (one here: every endpoint is on GPU 0).
for copy in ce sm; do
	rm -rf "$OUT/run-procs-$copy"
	step "replay-procs-$copy" 120 "$BIN" "${LOGF[@]}" replay --process-per-gpu --matrix "$MATRIX" --algo tetris,bvn --reconfig "$RECONFIG" \
		--copy "$copy" --gpu-map 0,0,0,0,0,0,0,0 --allow-shared-gpu ${CALFLAG[@]+"${CALFLAG[@]}"} --timeout 30s \
		${EXTRA[@]+"${EXTRA[@]}"} ${FAKEHW[@]+"${FAKEHW[@]}"} --out "$OUT/run-procs-$copy"
	RUNS+=("run-procs-$copy")
done
rm -rf "$OUT/run-procs-big-ce"
step replay-procs-big-ce 120 "$BIN" "${LOGF[@]}" replay --process-per-gpu --demand "$OUT/big.json" --matrix 0 --algo tetris,bvn \
	--reconfig "$RECONFIG" --copy ce --gpu-map 0,0,0,0,0,0,0,0 --allow-shared-gpu ${CALFLAG[@]+"${CALFLAG[@]}"} --timeout 60s \
	${EXTRA[@]+"${EXTRA[@]}"} ${FAKEHW[@]+"${FAKEHW[@]}"} --out "$OUT/run-procs-big-ce"
RUNS+=("run-procs-big-ce")

# The measured timelines must pass the verifier, like any emulated one.
for copy in ce sm procs-ce procs-sm; do
	for alg in tetris bvn; do
		if [ -f "$OUT/run-$copy/m$MATRIX-$alg.live.json" ]; then
			step "verify-$copy-$alg" 30 "$BIN" verify "$OUT/run-$copy/m$MATRIX-$alg.schedule.json" --matrix "$MATRIX" \
				--timeline "$OUT/run-$copy/m$MATRIX-$alg.live.json"
		fi
		if [ -f "$OUT/run-big-$copy/m0-$alg.live.json" ]; then
			step "verify-big-$copy-$alg" 30 "$BIN" verify "$OUT/run-big-$copy/m0-$alg.schedule.json" --demand "$OUT/big.json" --matrix 0 \
				--timeline "$OUT/run-big-$copy/m0-$alg.live.json"
		fi
	done
done
for alg in tetris bvn; do
	if [ -f "$OUT/run-procs-big-ce/m0-$alg.live.json" ]; then
		step "verify-procs-big-ce-$alg" 30 "$BIN" verify "$OUT/run-procs-big-ce/m0-$alg.schedule.json" --demand "$OUT/big.json" --matrix 0 \
			--timeline "$OUT/run-procs-big-ce/m0-$alg.live.json"
	fi
done

for run in "${RUNS[@]}"; do
echo
echo "=== $run: live against predicted (summary.json)"
if [ -f "$OUT/$run/summary.json" ]; then
	python3 - "$OUT/$run" "$RECONFIG" <<'PY' || cat "$OUT/$run/summary.json"
import json, os, sys
d, rc = sys.argv[1], sys.argv[2]
scale = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
unit = next(u for u in ("ns", "us", "µs", "ms", "s") if rc.endswith(u))
alpha = float(rc[: -len(unit)]) * scale[unit]
s, m = json.load(open(os.path.join(d, "summary.json"))), json.load(open(os.path.join(d, "manifest.json")))
print(f"complete: {s['complete']}; predicted with {m['predict_transfer_model']} and {m['predict_reconfig_model']}")
print(f"{'algorithm':10} {'execution':>11} {'live ms':>10} {'predicted ms':>13} {'live/pred':>10} {'harness med us':>15} {'p99 us':>8} "
      f"{'delay err med us':>17} {'p99 us':>8} {'n':>4}")
def pct(xs, q):
    xs = sorted(abs(x) for x in xs)
    return xs[min(len(xs) * q // 100, len(xs) - 1)] if xs else float("nan")
for r, rf in zip(s["runs"], m["runs"]):
    h = r.get("harness_cost_seconds", {})
    errs = []
    live = json.load(open(os.path.join(d, rf["live"])))
    for c in live["timeline"]["circuits"]:
        # Waited on a reconfiguration: it started after the command that began at reconfig_start.
        if c["reconfig_start"] < c["transmit_start"]:
            errs.append(c["transmit_start"] - c["reconfig_start"] - alpha)
    print(f"{r['algorithm']:10} {r.get('execution', '?'):>11} {r['completion_seconds']*1e3:10.3f} {r['predicted_completion_seconds']*1e3:13.3f} "
          f"{r['live_over_predicted']:10.4f} {h.get('median', float('nan'))*1e6:15.3f} {h.get('p99', float('nan'))*1e6:8.3f} "
          f"{pct(errs, 50)*1e6:17.3f} {pct(errs, 99)*1e6:8.3f} {len(errs):4d}")
for r in s["runs"]:
    for o in r.get("clock_offsets") or []:
        print(f"{r['algorithm']}: GPU {o['gpu']} clock offset (host - device) {o['offset_ns']} ns +- {o['uncertainty_ns']} ns "
              f"(least round trip {o['min_rtt_ns']} ns of {o['samples']})")
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
