#!/usr/bin/env bash
# slurm-local-test.sh: start a single-node Slurm cluster on localhost (its own munged,
# slurmctld and slurmd, all state in a temporary directory), run a sharded sweep through it with
# scripts/slurm-sweep.sh, and check that the merged result equals an unsharded run: sweep.csv and
# every plot byte-identical, sweep.json equal apart from its shard list. Then it stops the
# daemons it started and removes the directory.
#
# Needs (checked, never installed): Debian's slurm-wlm (slurmctld, slurmd, sbatch, sinfo) and
# munge (munged, mungekey), go to build the binary (or --bin), and root or a user that may run
# the daemons. It is not part of CI.
#
# Usage: scripts/slurm-local-test.sh [--shards N] [--bin PATH] [--keep] [-- SWEEP_FLAGS...]
#   --shards N   array tasks (default 4)
#   --bin PATH   the tetris-hil binary (default: go build ./cmd/tetris-hil into the temp dir)
#   --keep       keep the temporary directory (logs, shards) for a look afterwards
#   SWEEP_FLAGS  default: the Tetris Figure 8 grid (4 bandwidths × 7 α_r) with every algorithm
#                over 8 matrices of a synthetic Mixtral-8x22B trace (4 layers)
# Exit status: 0 equal, 1 different or failed, 77 a prerequisite is missing.
set -euo pipefail

shards=4 bin="" keep=0
while [[ $# -gt 0 ]]; do
	case "$1" in
	--shards) shards="$2"; shift 2 ;;
	--bin) bin="$2"; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	*) echo "slurm-local-test.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
extra=("$@")

repo="$(cd "$(dirname "$0")/.." && pwd)"
for c in slurmctld slurmd sbatch sinfo scontrol squeue munged mungekey; do
	if ! command -v "$c" >/dev/null && [[ ! -x "/usr/sbin/$c" ]]; then
		echo "slurm-local-test.sh: $c not found (Debian: apt-get install slurm-wlm munge); skipping" >&2
		exit 77
	fi
done
PATH="$PATH:/usr/sbin"

tmp="$(mktemp -d /tmp/slurm-local-test.XXXXXX)"
chmod 0755 "$tmp"
pids=()
cleanup() {
	status=$?
	# Stop only the daemons this script started, by their process ids.
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill "${pids[$i]}" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null || true
	done
	if [[ $keep -eq 1 ]]; then
		echo "kept $tmp"
	else
		rm -rf "$tmp"
	fi
	exit $status
}
trap cleanup EXIT INT TERM

if [[ -z "$bin" ]]; then
	command -v go >/dev/null || { echo "slurm-local-test.sh: go not found and no --bin given; skipping" >&2; exit 77; }
	echo "== building tetris-hil"
	(cd "$repo" && go build -o "$tmp/tetris-hil" ./cmd/tetris-hil)
	bin="$tmp/tetris-hil"
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

echo "== munge (own key and socket in $tmp/munge)"
# munged wants its key private and its socket's directory open to all.
mkdir -m 0755 "$tmp/munge"
mkdir -m 0700 "$tmp/munge/key"
mungekey --create --keyfile="$tmp/munge/key/munge.key" >/dev/null
munged --foreground --socket="$tmp/munge/munge.socket" --key-file="$tmp/munge/key/munge.key" \
	--pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" --seed-file="$tmp/munge/munged.seed" \
	>"$tmp/munge/munged.stderr" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [[ -S "$tmp/munge/munge.socket" ]] && break; sleep 0.1; done
[[ -S "$tmp/munge/munge.socket" ]] || { echo "munged did not start:"; cat "$tmp/munge/munged.log" 2>/dev/null; exit 1; }

echo "== slurm.conf for one node on localhost"
node="$(hostname -s)"
cpus="$(nproc)"
mem_mb=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2))
# Ports away from the defaults (6817/6818), picked from the process id so two runs do not meet.
ctld_port=$((20000 + ($$ % 10000) * 2))
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/log"
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=tetrishil-local
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

echo "== slurmctld and slurmd"
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/log/slurmctld.stdout" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" >"$tmp/log/slurmd.stdout" 2>&1 &
pids+=($!)
up=0
for _ in $(seq 100); do
	if sinfo -h -N -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then up=1; break; fi
	sleep 0.2
done
if [[ $up -eq 0 ]]; then
	echo "the node did not come up:"
	sinfo -N 2>&1 || true
	tail -n 20 "$tmp/log/slurmctld.log" "$tmp/log/slurmd.log" 2>/dev/null || true
	exit 1
fi
sinfo -N

echo "== demand and grid"
if [[ ${#extra[@]} -eq 0 ]]; then
	"$bin" --log-level warn trace gen --model mixtral-8x22b --layers 4 -o "$tmp/trace.json"
	extra=(--demand "$tmp/trace.json" --algo all)
fi
echo "sweep flags: ${extra[*]}"

echo "== unsharded sweep (reference)"
start=$(date +%s.%N)
"$bin" --log-level warn sweep "${extra[@]}" --progress off --out "$tmp/one" >/dev/null
echo "unsharded: $(awk "BEGIN {printf \"%.1f\", $(date +%s.%N) - $start}") s"

echo "== sharded sweep through Slurm: $shards array tasks, then the merge"
start=$(date +%s.%N)
cd "$tmp"
status=0
"$repo/scripts/slurm-sweep.sh" -n "$shards" -o "$tmp/slurm-sweep" -b "$bin" -c 1 --wait -- "${extra[@]}" || status=$?
echo "through Slurm: $(awk "BEGIN {printf \"%.1f\", $(date +%s.%N) - $start}") s"
for f in "$tmp"/slurm-sweep/slurm/shard-*.out; do
	echo "-- $(basename "$f"): $(grep -v '^{' "$f" | tail -n 1)"
done
echo "-- merge.out: $(grep -v '^{' "$tmp/slurm-sweep/slurm/merge.out" | tail -n 1 | cut -c1-160)..."
if [[ $status -ne 0 ]]; then
	echo "FAIL: the Slurm sweep failed (status $status)"
	squeue 2>&1 || true
	tail -n 20 "$tmp"/slurm-sweep/slurm/*.out "$tmp/log/slurmctld.log" 2>/dev/null || true
	exit 1
fi
sacct_line="$(scontrol show job 2>/dev/null | grep -cE 'JobState=COMPLETED' || true)"
echo "jobs COMPLETED in slurmctld's memory: $sacct_line"

echo "== compare"
fail=0
for f in "$tmp"/one/*; do
	name="$(basename "$f")"
	[[ "$name" == sweep.json ]] && continue
	if cmp -s "$f" "$tmp/slurm-sweep/$name"; then
		echo "identical  $name ($(wc -c <"$f") bytes, sha256 $(sha256sum <"$f" | cut -c1-16))"
	else
		echo "DIFFERENT  $name"
		fail=1
	fi
done
# sweep.json: the merged one also lists the shards; everything else must match.
if python3 - "$tmp/one/sweep.json" "$tmp/slurm-sweep/sweep.json" "$shards" <<'EOF'; then
import json, sys
one, merged = (json.load(open(p)) for p in sys.argv[1:3])
shards = merged.pop("shards", [])
assert one == merged, "sweep.json differs beyond the shard list"
assert [s["shard"] for s in shards] == list(range(int(sys.argv[3]))), shards
print(f"equal      sweep.json (merged lists {len(shards)} shards with their sha256)")
EOF
	:
else
	fail=1
fi
if [[ $fail -ne 0 ]]; then
	echo "FAIL: the merged Slurm sweep differs from the unsharded run"
	exit 1
fi
echo "PASS: $shards Slurm array tasks + merge = one unsharded sweep"
