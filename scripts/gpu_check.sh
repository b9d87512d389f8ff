#!/usr/bin/env bash
# gpu_check.sh: the one prepared check of the GPU layer on a real GPU machine (issue 7).
#
# Needs only the prebuilt binary (no Go there): build it first with
#   go build -o bin/tetris-hil ./cmd/tetris-hil
# and run from the repository root:
#   OUT=/some/dir scripts/gpu_check.sh
# It runs `devices`, `devices --json`, the pinned-worker check (a worker per GPU, every thread's
# CPUs checked), CUDA IPC copies between two worker processes both on GPU 0 from 4 KiB to 1 GiB
# with the copy engines and with the SM kernel, and a short run with locked clocks. Every step has
# a timeout; the whole script ends in under 4 minutes. Everything goes to $OUT/gpu_check.log, and
# the sweeps' full results (every copy's time) to $OUT/bench_{ce,sm}.json.
set -u

BIN=${BIN:-bin/tetris-hil}
OUT=${OUT:-/tmp/tetris-hil-gpu-check}
LOG="$OUT/gpu_check.log"
. "$(dirname "$0")/lib/gpu_check_common.sh"
T0=$(date +%s)

echo "tetris-hil GPU check, $(date -u +%FT%TZ), $(uname -srm), $(nproc) CPUs"
echo "allowed CPUs: $(grep Cpus_allowed_list /proc/self/status | cut -f2)"
echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>} CUDA_DEVICE_ORDER=${CUDA_DEVICE_ORDER-<unset>}"
echo "binary: $BIN ($(stat -c %s "$BIN" 2>/dev/null || echo missing) bytes)"
if [ ! -x "$BIN" ]; then
	echo "no executable $BIN: build it with go build -o bin/tetris-hil ./cmd/tetris-hil"
	exit 2
fi

LOGF=(--log-format console --log-level info)

step nvidia-smi 8 nvidia-smi -L
step nvidia-smi-topo 8 nvidia-smi topo -m
step devices 15 "$BIN" "${LOGF[@]}" devices
step devices-json 15 sh -c '"$0" --log-level warn devices --json >"$1" && cat "$1"' "$BIN" "$OUT/devices.json"
step pinned-workers 35 "$BIN" "${LOGF[@]}" devices --check-workers
step ipc-ce-gpu0 60 "$BIN" "${LOGF[@]}" gpu-bench --src 0 --dst 0 --copy ce --min 4KiB --max 1GiB \
	--reps 20 --warmup 3 --timeout 30s --json "$OUT/bench_ce.json"
step ipc-sm-gpu0 60 "$BIN" "${LOGF[@]}" gpu-bench --src 0 --dst 0 --copy sm --min 4KiB --max 1GiB \
	--reps 20 --warmup 3 --timeout 30s --json "$OUT/bench_sm.json"
# Locking clocks needs root; a permission error here is reported, not fatal. The query after it
# shows whether the clocks were released (no "clocks_setting"-style reason left active).
step lock-clocks 20 "$BIN" "${LOGF[@]}" gpu-bench --src 0 --dst 0 --copy ce --min 4KiB --max 1MiB \
	--reps 5 --warmup 1 --lock-clocks --timeout 10s
step clocks-after 5 nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,clocks_event_reasons.active --format=csv

echo
echo "=== done in $(($(date +%s) - T0)) s; failed steps: ${FAILED[*]:-none}"
