#!/usr/bin/env bash
# The speed figures of docs/away.md: on real pi against the scripted model with a recording ntfy,
# all on loopback, how long a question takes to reach ntfy as a push and a one-tap answer to reach
# the model (tests/e2e_away/speed.rs). Prints the median and p99 of each; ends non-zero when a p99
# is over its bound (2 s for a push, 1 s for a tap).
#   scripts/away-speed.sh [--rounds N] [--release]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=20 profile=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --release) profile=(--release); shift ;;
    *) echo "away-speed.sh: unknown argument $1 (use --rounds N --release)" >&2; exit 2 ;;
  esac
done
POKESHELL_TEST_PI="$(scripts/setup-pi.sh)"
export POKESHELL_TEST_PI
AWAY_SPEED_ROUNDS="$rounds" cargo test "${profile[@]}" --test e2e_away speed_ -- --ignored --nocapture \
  --test-threads 1 2>&1 | grep -E 'away-speed:|test result|panicked|FAILED'
