#!/usr/bin/env bash
# The test command: provisions Node and pi (idempotent, into .cache/), then runs every test.
# Extra arguments go to `cargo test`, e.g. `scripts/test.sh --test e2e_host`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
POKESHELL_TEST_PI="$(scripts/setup-pi.sh)"
export POKESHELL_TEST_PI
export INSTA_UPDATE=no
cargo test "$@"
