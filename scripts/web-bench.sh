#!/usr/bin/env bash
# Measures the web view on loopback in headless Chromium (tests/web_speed.rs): key-to-screen latency
# in the page, a flooding session (page responsiveness, server memory), twenty sockets on idle
# sessions (server CPU). Needs chromium and chromedriver (.ci/run installs them). Prints the figures.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo test --release --test web_speed -- --ignored --nocapture 2>&1 | grep -v '^running\|^test result\|^$'
