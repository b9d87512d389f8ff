#!/usr/bin/env bash
# Runs every fuzz target in the repository for a short time (default 3s each), as CI does; the
# seed corpora live in each package's testdata/fuzz. Usage: scripts/fuzz-smoke.sh [DURATION]
#
# Go's fuzzing engine can end a time-limited run with a bare "context deadline exceeded" when the
# deadline falls while it is still minimising a new interesting input on a loaded machine; that
# is no finding (a finding always prints "Failing input written to"), so it is reported and the
# target is counted as passed. Every other failure fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-3s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Every "func FuzzXxx(" in a _test.go file, with its package directory.
git grep -n --untracked -E '^func Fuzz[A-Za-z0-9_]+\(' -- '*_test.go' | while IFS=: read -r file _ decl; do
  name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(.*/\1/' <<<"$decl")
  dir=./$(dirname "$file")
  echo "fuzz $dir $name ($fuzztime)"
  if ! go test "$dir" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" >"$log" 2>&1; then
    cat "$log"
    if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written to' "$log"; then
      echo "fuzz $dir $name: the engine stopped at its deadline while minimising (no failing input); counted as passed"
      continue
    fi
    exit 1
  fi
  cat "$log"
done
