#!/usr/bin/env bash
# Runs every test binary of the workspace, TEST_JOBS at a time (default 2), after one build: the
# end-to-end binaries spend most of their time waiting on pi and the scripted model, so running a
# few side by side shortens the whole run without adding load to any one of them. Each binary runs
# in its package's directory, as `cargo test` runs it; its output is printed whole when it ends,
# with its time. Ends non-zero, naming them, when any binary failed. Doctests run last.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs="${TEST_JOBS:-2}"
out="$(mktemp -d "${TMPDIR:-/tmp}/pokeshell-tests.XXXXXX")"
trap 'rm -rf "$out"' EXIT

# One build of every test target; the JSON lines name each executable and its package.
cargo test --workspace --no-run --message-format=json-render-diagnostics >"$out/build.json"
python3 - "$out/build.json" >"$out/list" <<'EOF'
import json, os, sys
seen = set()
for line in open(sys.argv[1]):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    exe = m.get("executable")
    if m.get("reason") != "compiler-artifact" or not exe or not m.get("profile", {}).get("test"):
        continue
    if exe in seen:
        continue
    seen.add(exe)
    print(os.path.dirname(m["manifest_path"]) + "\t" + exe + "\t" + m["target"]["name"])
EOF
total="$(wc -l <"$out/list")"
[ "$total" -gt 0 ] || { echo "run-tests: no test binary was built" >&2; exit 1; }

# The slowest first (the soak, then the end-to-end ones), so the pool does not end waiting on one.
sort -t$'\t' -k3,3 "$out/list" \
  | awk -F'\t' '{ print (($3 == "soak") ? 0 : ($3 ~ /^e2e_|machines|web|server/) ? 1 : 2) "\t" $0 }' \
  | sort -s -t$'\t' -k1,1n | cut -f2- >"$out/order"

run_one() { # dir exe name
  local dir="$1" exe="$2" name="$3" key start end status
  key="$(basename "$exe")"
  start="$(date +%s)"
  local args=()
  # The chaos soak is ignored by `cargo test`; here a short run of it takes one slot of the pool
  # (docs/simulation.md). SOAK_MINUTES=0 leaves it ignored.
  if [ "$name" = soak ] && [ "${SOAK_MINUTES:-2}" != 0 ]; then
    args=(--ignored --nocapture --test-threads 1)
    export SOAK_MINUTES="${SOAK_MINUTES:-2}" SOAK_SEED="${SOAK_SEED:-7}"
  fi
  if (cd "$dir" && "$exe" "${args[@]}") >"$out/$key.log" 2>&1; then status=ok; else status=failed; fi
  end="$(date +%s)"
  echo "$status $name" >"$out/$key.status"
  {
    printf '\n==> %s (%ss, %s)\n' "$name" "$((end - start))" "$status"
    cat "$out/$key.log"
  } >"$out/$key.part"
  # Whole or not at all for the reader below.
  mv "$out/$key.part" "$out/$key.report"
}

running=0
while IFS=$'\t' read -r dir exe name; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$dir" "$exe" "$name" &
  running=$((running + 1))
  # Print what has finished so far, in the order it finished.
  for r in "$out"/*.report; do
    [ -e "$r" ] || continue
    cat "$r"; rm -f "$r"
  done
done <"$out/order"
wait
for r in "$out"/*.report; do
  [ -e "$r" ] || continue
  cat "$r"; rm -f "$r"
done

cargo test --workspace --doc

failed="$(cat "$out"/*.status | sed -n 's/^failed //p')"
if [ -n "$failed" ]; then
  printf '\nrun-tests: these test binaries failed:\n%s\n' "$failed" >&2
  exit 1
fi
printf '\nrun-tests: %s test binaries passed\n' "$total"
