#!/usr/bin/env bash
# gpu_check.sh: the one prepared check of the GPU layer, to run first whenever a GPU machine is at
# hand (one GPU is enough; with more, the pairs between GPUs 0 and 1 run too).
#
# Needs only the prebuilt binary (no Go there): build it first with
#   go build -o bin/tetris-hil ./cmd/tetris-hil
# and run from the repository root (carry bin/):
#   OUT=/some/dir scripts/gpu_check.sh            # on the GPU machine
#   OUT=/some/dir scripts/gpu_check.sh --fake     # anywhere: the same steps on the fake server
#
# Steps, each with a hard timeout (about 6 minutes in all on one H200; REPLAY=0 leaves out the
# replay check, about 4 of them):
#   nvml        nvidia-smi's view, then `devices` and `devices --json` (NVML inventory)
#   pinning     a pinned worker per GPU, every thread's CPUs checked against NVML's
#   ipc         calibration of GPU 0's loopback, CE and SM copies, every size's bytes verified:
#               the receiver is a second worker process, so the copies go through CUDA IPC
#               between two processes; the workers' log must show the IPC buffer opened (and no
#               fallback to the peer path); with two GPUs, 0→1 and 1→0 as well
#   clocks      a short sweep with locked SM clocks (needs root: a permission error is reported),
#               then whether the clocks were released
#   replay      scripts/gpu_replay_check.sh (Tetris and BvN replayed live on GPU 0's workers)
# Everything goes to $OUT/gpu_check.log; calibrations to $OUT/cal_{ce,sm}.json, the inventory to
# $OUT/devices.json, the replay check's files under $OUT/replay. Exit status: 0 all steps passed,
# 1 some failed (listed at the end), 2 no binary.
set -u

FAKE=()
for a in "$@"; do
	case $a in
	--fake) FAKE=(--fake) ;;
	*) echo "gpu_check.sh: unknown argument $a (want --fake or nothing)"; exit 2 ;;
	esac
done
BIN=${BIN:-bin/tetris-hil}
OUT=${OUT:-/tmp/tetris-hil-gpu-check}
SIZES=${SIZES:-4KiB..256MiB}
REPS=${REPS:-10}
REPLAY=${REPLAY:-1}
LOG="$OUT/gpu_check.log"
. "$(dirname "$0")/lib/gpu_check_common.sh"
T0=$(date +%s)

echo "tetris-hil GPU check${FAKE[*]:+ (--fake)}, $(date -u +%FT%TZ), $(uname -srm), $(nproc) CPUs"
echo "allowed CPUs: $(grep Cpus_allowed_list /proc/self/status | cut -f2)"
echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>} CUDA_DEVICE_ORDER=${CUDA_DEVICE_ORDER-<unset>}"
echo "binary: $BIN ($(stat -c %s "$BIN" 2>/dev/null || echo missing) bytes)"
if [ ! -x "$BIN" ]; then
	echo "no executable $BIN: build it with go build -o bin/tetris-hil ./cmd/tetris-hil"
	exit 2
fi
LOGF=(--log-format console --log-level info)

# skip NAME WHY: a step that does not apply here, reported as such.
skip() { echo; echo "=== $1: skipped ($2)"; }

# --- nvml
if [ ${#FAKE[@]} -eq 0 ]; then
	step nvidia-smi 8 nvidia-smi -L
	step nvidia-smi-topo 8 nvidia-smi topo -m
else
	skip nvidia-smi "--fake"
fi
step devices 15 "$BIN" "${LOGF[@]}" devices ${FAKE[@]+"${FAKE[@]}"}
step devices-json 15 bash -c 'out=$1; shift; "$@" >"$out" && cat "$out"' sh "$OUT/devices.json" \
	"$BIN" --log-level warn devices --json ${FAKE[@]+"${FAKE[@]}"}
NGPUS=$(grep -c '"uuid"' "$OUT/devices.json" 2>/dev/null || echo 0)
echo "GPUs in the inventory: $NGPUS"

# --- pinning
step pinning 35 "$BIN" "${LOGF[@]}" devices --check-workers ${FAKE[@]+"${FAKE[@]}"}

# --- ipc: calibrations with every size verified, receiver in a second process
PAIRS=0-0
[ "$NGPUS" -ge 2 ] && PAIRS=0-0,0-1,1-0
GPUS=0
[ "$NGPUS" -ge 2 ] && GPUS=0,1
for copy in ce sm; do
	step "ipc-calibrate-$copy" 120 bash -c 'log=$1; shift; "$@" 2>&1 | tee "$log"; exit "${PIPESTATUS[0]}"' sh "$OUT/cal_$copy.log" \
		"$BIN" "${LOGF[@]}" calibrate --gpus "$GPUS" --pairs "$PAIRS" --pattern isolated --sizes "$SIZES" \
		--per-octave 1 --reps "$REPS" --warmup 2 --verify-every 1 --timeout 30s --no-progress --copy "$copy" \
		${FAKE[@]+"${FAKE[@]}"} -o "$OUT/cal_$copy.json"
	if [ ${#FAKE[@]} -eq 0 ]; then
		opened=$(grep -c "opened a CUDA IPC buffer" "$OUT/cal_$copy.log" 2>/dev/null)
		fellback=$(grep -c "CUDA IPC unavailable" "$OUT/cal_$copy.log" 2>/dev/null)
		echo "=== ipc-$copy: ${opened:-0} IPC buffers opened by a second process, ${fellback:-0} fallbacks to the peer path"
		if [ "${opened:-0}" -lt 1 ] || [ "${fellback:-0}" -gt 0 ]; then FAILED+=("ipc-$copy"); fi
	fi
	step "ipc-show-$copy" 20 "$BIN" calibrate show "$OUT/cal_$copy.json"
done

# --- clocks
step lock-clocks 30 "$BIN" "${LOGF[@]}" gpu-bench --src 0 --dst 0 --copy ce --min 4KiB --max 1MiB \
	--reps 5 --warmup 1 --lock-clocks --timeout 10s ${FAKE[@]+"${FAKE[@]}"}
if [ ${#FAKE[@]} -eq 0 ]; then
	step clocks-after 5 nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,clocks_event_reasons.active --format=csv
fi

# --- replay
if [ "$REPLAY" = 1 ]; then
	step replay-check 420 env OUT="$OUT/replay" BIN="$BIN" EXTRA="${FAKE[*]-}" "$(dirname "$0")/gpu_replay_check.sh"
else
	skip replay-check "REPLAY=0"
fi

echo
echo "=== done in $(($(date +%s) - T0)) s; failed steps: ${FAILED[*]:-none}"
[ ${#FAILED[@]} -eq 0 ]
