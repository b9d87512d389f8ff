# Shared by the GPU check scripts (gpu_check.sh, gpu_calibrate_check.sh, gpu_replay_check.sh):
# source it after setting OUT and LOG. It sends everything the script prints to the terminal and
# to $LOG, and defines step, which runs one check with a hard timeout and records failures in
# FAILED (the script prints them at the end).
mkdir -p "$OUT"
: >"$LOG"
exec > >(tee -a "$LOG") 2>&1
FAILED=()

# step NAME TIMEOUT_S CMD...: runs CMD with a hard timeout, logs its exit status and duration,
# and returns that status.
step() {
	local name=$1 limit=$2
	shift 2
	echo
	echo "=== $name (limit ${limit}s): $*"
	local s=$(date +%s%N)
	timeout -k 5 "$limit" "$@"
	local rc=$?
	local ms=$((($(date +%s%N) - s) / 1000000))
	echo "=== $name: exit $rc after ${ms} ms"
	[ "$rc" -eq 0 ] || FAILED+=("$name(rc=$rc)")
	return "$rc"
}
