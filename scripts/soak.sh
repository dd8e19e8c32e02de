#!/usr/bin/env bash
# The chaos soak: several sessions of real pi on the scripted model work through their task lists
# while faults are injected at seeded random times (tests/soak/, docs/simulation.md). Ends non-zero
# when a task was lost or done twice, a process was left behind, or the ledger does not hold together.
#   scripts/soak.sh [--minutes M] [--seed S] [--sessions N]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
minutes=3 seed=1 sessions=3
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --sessions) sessions="$2"; shift 2 ;;
    *) echo "soak.sh: unknown argument $1 (use --minutes M --seed S --sessions N)" >&2; exit 2 ;;
  esac
done
POKESHELL_TEST_PI="$(scripts/setup-pi.sh)"
export POKESHELL_TEST_PI
SOAK_MINUTES="$minutes" SOAK_SEED="$seed" SOAK_SESSIONS="$sessions" \
  cargo test --test soak -- --ignored --nocapture --test-threads 1
