#!/usr/bin/env bash
# slurm-sweep.sh: run a tetris-hil sweep as a Slurm job array, one shard per task, and merge the
# shards in a job that starts once every shard has succeeded. The merged directory holds exactly
# the files one unsharded `tetris-hil sweep` writes (sweep.csv byte-identical to it), plus the
# shard list in sweep.json.
#
# Usage:
#   scripts/slurm-sweep.sh -n SHARDS -o OUTDIR [options] [-- SWEEP_FLAGS...]
#
# Options:
#   -n, --shards N        number of shards = array tasks (required; 1 or more). Shard K runs the
#                         K-th of N deterministic slices of the grid (tetris-hil sweep --shard K/N).
#   -o, --out DIR         output directory (required): shards go to DIR/shards/K, the job
#                         scripts and logs to DIR/slurm, the merged result to DIR itself.
#   -b, --bin PATH        the tetris-hil binary, reachable from every node (default: tetris-hil
#                         on PATH). Build it with `go build -o bin/tetris-hil ./cmd/tetris-hil`.
#   -p, --partition P     Slurm partition (default: the cluster's default).
#   -A, --account A       Slurm account.
#   -t, --time T          time limit per shard task (sbatch --time; default: the partition's).
#   -c, --cpus C          CPUs per shard task; each shard runs that many workers (default 1).
#       --mem M           memory per shard task (sbatch --mem, e.g. 2G).
#       --max-parallel K  run at most K shard tasks at once (--array=0-(N-1)%K).
#       --wait            wait until the merge job has finished and exit with its status.
#       --dry-run         write the job scripts and print the sbatch commands; submit nothing.
#   -h, --help            this text.
#
# Everything after `--` goes to every `tetris-hil sweep` as it is: the demand (use absolute
# paths: tasks start in the submission directory, which must be visible from the nodes), the
# algorithms, the grid, the models. Do not pass --out, --shard or --jobs there.
#
# Example (Tetris Figure 8 over one Mixtral-8x22B pass, 28 cells split over 8 tasks):
#   tetris-hil trace gen --model mixtral-8x22b -o $PWD/fig8.json
#   scripts/slurm-sweep.sh -n 8 -o $PWD/fig8 -b $PWD/bin/tetris-hil -c 2 --time 00:10:00 \
#       -- --demand $PWD/fig8.json --algo all
#
# It prints the array job id and the merge job id. A failed shard keeps the merge from running
# (afterok); rerun that shard by hand with the command in DIR/slurm/shard.sh, then the merge with
# DIR/slurm/merge.sh.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "slurm-sweep.sh: $*" >&2; exit 2; }

shards="" out="" bin="tetris-hil" partition="" account="" time_limit="" cpus=1 mem="" max_parallel=""
wait_merge=0 dry_run=0
while [[ $# -gt 0 ]]; do
	case "$1" in
	-n | --shards) shards="${2:-}"; shift 2 ;;
	-o | --out) out="${2:-}"; shift 2 ;;
	-b | --bin) bin="${2:-}"; shift 2 ;;
	-p | --partition) partition="${2:-}"; shift 2 ;;
	-A | --account) account="${2:-}"; shift 2 ;;
	-t | --time) time_limit="${2:-}"; shift 2 ;;
	-c | --cpus) cpus="${2:-}"; shift 2 ;;
	--mem) mem="${2:-}"; shift 2 ;;
	--max-parallel) max_parallel="${2:-}"; shift 2 ;;
	--wait) wait_merge=1; shift ;;
	--dry-run) dry_run=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
sweep_args=("$@")

[[ "$shards" =~ ^[1-9][0-9]*$ ]] || die "--shards \"$shards\": want a whole number of shards, 1 or more"
[[ -n "$out" ]] || die "--out: an output directory is required"
[[ "$cpus" =~ ^[1-9][0-9]*$ ]] || die "--cpus \"$cpus\": want a whole number of CPUs, 1 or more"
[[ -z "$max_parallel" || "$max_parallel" =~ ^[1-9][0-9]*$ ]] || die "--max-parallel \"$max_parallel\": want a whole number, 1 or more"
for a in "${sweep_args[@]}"; do
	case "$a" in
	--out | --out=* | --shard | --shard=* | --jobs | --jobs=*) die "sweep flag $a: set by this script (see --help)" ;;
	esac
done
if [[ "$bin" != */* ]]; then
	bin_path="$(command -v "$bin")" || die "--bin \"$bin\": not on PATH"
	bin="$bin_path"
fi
[[ -x "$bin" ]] || die "--bin \"$bin\": not an executable file"
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
if [[ $dry_run -eq 0 ]]; then
	command -v sbatch >/dev/null || die "sbatch not found: is this a Slurm submission host?"
fi

mkdir -p "$out"
out="$(cd "$out" && pwd)"
mkdir -p "$out/shards" "$out/slurm"

common=(--parsable --chdir="$PWD")
[[ -n "$partition" ]] && common+=(--partition="$partition")
[[ -n "$account" ]] && common+=(--account="$account")

# The job scripts carry their arguments quoted with printf %q, so any flag value survives.
quoted_args="$(printf ' %q' "${sweep_args[@]}")"
[[ ${#sweep_args[@]} -eq 0 ]] && quoted_args=""
cat >"$out/slurm/shard.sh" <<EOF
#!/usr/bin/env bash
# One shard of the sweep: slurm-sweep.sh wrote this. Run by hand as: SLURM_ARRAY_TASK_ID=K $out/slurm/shard.sh
set -euo pipefail
k="\${SLURM_ARRAY_TASK_ID:?run as a Slurm array task, or set SLURM_ARRAY_TASK_ID}"
exec $(printf '%q' "$bin") --log-format json sweep$quoted_args --shard "\$k/$shards" --jobs "\${SLURM_CPUS_PER_TASK:-$cpus}" --progress off --out $(printf '%q' "$out/shards")/"\$k"
EOF
shard_dirs=""
for ((k = 0; k < shards; k++)); do shard_dirs+=" $(printf '%q' "$out/shards/$k")"; done
cat >"$out/slurm/merge.sh" <<EOF
#!/usr/bin/env bash
# The merge of the $shards shards: slurm-sweep.sh wrote this.
set -euo pipefail
exec $(printf '%q' "$bin") --log-format json sweep merge$shard_dirs --out $(printf '%q' "$out")
EOF
chmod +x "$out/slurm/shard.sh" "$out/slurm/merge.sh"

array="0-$((shards - 1))"
[[ -n "$max_parallel" ]] && array+="%$max_parallel"
array_cmd=(sbatch "${common[@]}" --job-name=tetris-hil-sweep --array="$array" --cpus-per-task="$cpus"
	--output="$out/slurm/shard-%a.out")
[[ -n "$time_limit" ]] && array_cmd+=(--time="$time_limit")
[[ -n "$mem" ]] && array_cmd+=(--mem="$mem")
array_cmd+=("$out/slurm/shard.sh")
merge_cmd=(sbatch "${common[@]}" --job-name=tetris-hil-sweep-merge --cpus-per-task=1 --output="$out/slurm/merge.out")
[[ $wait_merge -eq 1 ]] && merge_cmd+=(--wait)

if [[ $dry_run -eq 1 ]]; then
	printf '%q ' "${array_cmd[@]}"
	echo
	printf '%q ' "${merge_cmd[@]}" --dependency=afterok:ARRAY_JOB_ID "$out/slurm/merge.sh"
	echo
	exit 0
fi
array_id="$("${array_cmd[@]}")"
array_id="${array_id%%;*}"
echo "submitted shard array job $array_id ($shards tasks, --array=$array)"
merge_cmd+=(--dependency=afterok:"$array_id" "$out/slurm/merge.sh")
if [[ $wait_merge -eq 1 ]]; then
	echo "waiting for the merge job (afterok:$array_id)"
	status=0
	"${merge_cmd[@]}" >"$out/slurm/merge.jobid" || status=$?
	echo "merge job $(cut -d';' -f1 "$out/slurm/merge.jobid") finished with status $status; log: $out/slurm/merge.out"
	exit $status
fi
merge_id="$("${merge_cmd[@]}")"
echo "submitted merge job ${merge_id%%;*} (after every shard succeeds); result: $out/sweep.csv"
