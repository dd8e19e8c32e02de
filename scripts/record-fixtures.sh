#!/usr/bin/env bash
# Records real pi's terminal output into tests/fixtures/pi/ (tests/fixtures/pi/README.md says what
# and how), then runs the replay tests against the new recording without accepting any snapshot.
# An argument records into that directory instead (and skips the tests).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
POKESHELL_TEST_PI="$(scripts/setup-pi.sh)"
export POKESHELL_TEST_PI
cargo run --quiet --example record_fixtures -- "$@"
if [ $# -eq 0 ]; then
  INSTA_UPDATE=no cargo test --quiet --test fixtures_replay --test whole_screen
fi
