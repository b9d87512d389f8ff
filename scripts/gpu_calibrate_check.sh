#!/usr/bin/env bash
# gpu_calibrate_check.sh: the prepared check of `tetris-hil calibrate` on a real GPU (one H200:
# the only pair is GPU 0's loopback, copied between two pinned worker processes on it).
#
# Needs only the prebuilt binary (no Go there); build it first, here:
#   go build -o bin/tetris-hil ./cmd/tetris-hil
# then run from the repository root (carry bin/):
#   OUT=/some/dir scripts/gpu_calibrate_check.sh
# It calibrates with the copy engines (CE) and with the SM copy kernel, 4 KiB..1 GiB at two sizes
# per octave, 20 timed copies after 3 warm-ups per size, every 4th size's bytes verified; then, in
# the same run, times the same sizes with PyTorch (dst.copy_(src) on cuda:0, CUDA events, the
# same warm-ups and repetitions), and prints the three side by side per size (median time and
# GB/s = 10^9 bytes/s) with each calibration's fitted α and bandwidth. Every step has a timeout;
# the whole script ends in about 3 minutes. Everything goes to $OUT/gpu_calibrate_check.log; the
# calibrations to $OUT/cal_{ce,sm}.json, their plots to $OUT/cal_{ce,sm}.png, PyTorch's numbers
# to $OUT/torch_copy.json and the side-by-side table to $OUT/side_by_side.txt.
set -u

BIN=${BIN:-bin/tetris-hil}
OUT=${OUT:-/tmp/tetris-hil-gpu-calibrate-check}
SIZES=${SIZES:-4KiB..1GiB}
PER_OCTAVE=${PER_OCTAVE:-2}
REPS=${REPS:-20}
WARMUP=${WARMUP:-3}
# EXTRA adds flags to both calibrations: EXTRA=--fake smoke-tests the script without a GPU.
read -r -a EXTRA <<<"${EXTRA:-}"
LOG="$OUT/gpu_calibrate_check.log"
. "$(dirname "$0")/lib/gpu_check_common.sh"
T0=$(date +%s)

echo "tetris-hil calibrate GPU check, $(date -u +%FT%TZ), $(uname -srm), $(nproc) CPUs"
echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>}"
if [ ! -x "$BIN" ]; then
	echo "no executable $BIN: build it with go build -o bin/tetris-hil ./cmd/tetris-hil"
	exit 2
fi

LOGF=(--log-format console --log-level info)
CAL=(calibrate --gpus 0 --pattern isolated --sizes "$SIZES" --per-octave "$PER_OCTAVE" --reps "$REPS"
	--warmup "$WARMUP" --verify-every 4 --timeout 30s --no-progress ${EXTRA[@]+"${EXTRA[@]}"})

step nvidia-smi 8 nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
step calibrate-ce 90 "$BIN" "${LOGF[@]}" "${CAL[@]}" --copy ce -o "$OUT/cal_ce.json"
step calibrate-sm 90 "$BIN" "${LOGF[@]}" "${CAL[@]}" --copy sm -o "$OUT/cal_sm.json"
step plot-ce 20 "$BIN" calibrate show "$OUT/cal_ce.json" --plot "$OUT/cal_ce.png"
step plot-sm 20 "$BIN" calibrate show "$OUT/cal_sm.json" --plot "$OUT/cal_sm.png"

# PyTorch's copy bandwidth for the sizes the calibration measured (read from its plan).
step torch-copy 90 env PYTHONUNBUFFERED=1 python3 - "$OUT/cal_ce.json" "$OUT/torch_copy.json" "$REPS" "$WARMUP" <<'EOF'
import json, statistics, sys
try:
    import torch
except ImportError as e:
    sys.exit(f"PyTorch is not installed here ({e}): no PyTorch column")
cal_path, out_path, reps, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sizes = json.load(open(cal_path))["plan"]["sizes"]
dev = torch.device("cuda:0")
src = torch.empty(max(sizes), dtype=torch.uint8, device=dev).fill_(0x5A)
dst = torch.empty(max(sizes), dtype=torch.uint8, device=dev)
rows = []
for n in sizes:
    s, d = src[:n], dst[:n]
    for _ in range(warmup):
        d.copy_(s)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        d.copy_(s)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)  # ms -> s
    if not torch.equal(d, s):
        sys.exit(f"PyTorch copy of {n} bytes delivered wrong bytes")
    med = statistics.median(times)
    rows.append({"bytes": n, "seconds": med, "gb_per_s": n / med / 1e9})
json.dump({"torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0), "rows": rows},
          open(out_path, "w"), indent=1)
print(f"torch {torch.__version__} CUDA {torch.version.cuda} on {torch.cuda.get_device_name(0)}: {len(rows)} sizes")
EOF

step side-by-side 20 python3 - "$OUT/cal_ce.json" "$OUT/cal_sm.json" "$OUT/torch_copy.json" "$OUT/side_by_side.txt" <<'EOF'
import json, os, sys
ce_p, sm_p, torch_p, out_p = sys.argv[1:5]
def load(p):
    return json.load(open(p)) if os.path.exists(p) else None
def medians(cal):
    if not cal or not cal.get("pairs"):
        return {}, None
    p = cal["pairs"][0]
    bw = p.get("bandwidth_bytes_per_second") or 1 / p["beta_seconds_per_byte"]
    fit = f'alpha {p["alpha_seconds"]*1e6:.2f} us, {bw/1e9:.1f} GB/s, R2 {p["r2"]:.5f}, max resid {100*p.get("max_rel_residual", 0):.2f}%'
    if p.get("pieces"):
        fit += f', knee at {p["pieces"][1]["from_bytes"]} B'
    return {m["bytes"]: m["seconds"] for m in p["medians"]}, fit
ce, ce_fit = medians(load(ce_p))
sm, sm_fit = medians(load(sm_p))
t = load(torch_p)
tr = {r["bytes"]: r["seconds"] for r in t["rows"]} if t else {}
def cell(m, n):
    return f'{m[n]*1e6:10.2f} {n/m[n]/1e9:8.1f}' if n in m else f'{"-":>10} {"-":>8}'
lines = [f'GPU 0 loopback copies: medians (us) and GB/s (1e9 B/s)',
         f'CE fit:  {ce_fit}', f'SM fit:  {sm_fit}',
         f'PyTorch: {t["torch"] + " CUDA " + str(t["cuda"]) + " on " + t["device"] if t else "not run"}', '',
         f'{"bytes":>12} | {"CE us":>10} {"CE GB/s":>8} | {"SM us":>10} {"SM GB/s":>8} | {"torch us":>10} {"torch GB/s":>8}']
for n in sorted(set(ce) | set(sm) | set(tr)):
    lines.append(f'{n:>12} | {cell(ce, n)} | {cell(sm, n)} | {cell(tr, n)}')
open(out_p, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF

echo
echo "=== done in $(($(date +%s) - T0)) s; failed steps: ${FAILED[*]:-none}"
