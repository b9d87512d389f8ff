#!/usr/bin/env bash
# Runs every fuzz target in the repository for a short time (default 3s each), as CI does; the
# seed corpora live in each package's testdata/fuzz. Usage: scripts/fuzz-smoke.sh [DURATION]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-3s}
# Every "func FuzzXxx(" in a _test.go file, with its package directory.
git grep -n --untracked -E '^func Fuzz[A-Za-z0-9_]+\(' -- '*_test.go' | while IFS=: read -r file _ decl; do
  name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(.*/\1/' <<<"$decl")
  dir=./$(dirname "$file")
  echo "fuzz $dir $name ($fuzztime)"
  go test "$dir" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime"
done
