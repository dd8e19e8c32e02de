#!/usr/bin/env bash
# The test command: provisions Node and pi (idempotent, into .cache/), then runs every test: the bridge
# extension's own tests with Node's test runner, then every test binary of the workspace, a few side by
# side (scripts/run-tests.sh; TEST_JOBS sets how many).
# Extra arguments go to `cargo test` instead, e.g. `scripts/test.sh --test e2e_host`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
POKESHELL_TEST_PI="$(scripts/setup-pi.sh)"
export POKESHELL_TEST_PI
export INSTA_UPDATE=no

# The node that runs pi (named in the wrapper setup-pi.sh writes) strips the TypeScript types itself.
node_bin="$(sed -n 's/^exec "\([^"]*\)" .*/\1/p' "$POKESHELL_TEST_PI")"
[ -x "$node_bin" ] || { echo "test.sh: cannot find pi's node in $POKESHELL_TEST_PI" >&2; exit 1; }
"$node_bin" --test assets/bridge/tests/*.test.ts

if [ "$#" -gt 0 ]; then
  cargo test "$@"
else
  scripts/run-tests.sh
fi
