#!/usr/bin/env bash
# Renders the web view's icons (the home screen's, the notifications') from assets/web/icon.svg with
# headless Chromium: assets/web/icon-192.png and icon-512.png. Run after changing the drawing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp assets/web/icon.svg "$tmp/"
for size in 192 512; do
  printf '<html><body style="margin:0"><img src="icon.svg" width="%s" height="%s" style="display:block"></body></html>' \
    "$size" "$size" > "$tmp/page.html"
  chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --default-background-color=00000000 \
    --window-size="$size,$size" --screenshot="$PWD/assets/web/icon-$size.png" "file://$tmp/page.html" >/dev/null 2>&1
done
echo "assets/web/icon-192.png and icon-512.png rendered"
