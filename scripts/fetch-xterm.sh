#!/usr/bin/env bash
# Fetches the terminal widget the web view ships (the npm package @xterm/xterm, pinned below) with
# npm, checks the package's sha256, and copies its script, stylesheet and licence into
# assets/web/xterm/, where the build embeds them. The files are committed: a build never needs the
# network. Run it again only to move to another version (then update the pin and docs/web.md).
set -euo pipefail

VERSION="5.5.0"
SHA256="bd954fa721872170188cc5d7e83e88db3c83c9a18a4e8d24c2783d26491f59d2"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/assets/web/xterm"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

command -v npm >/dev/null || { echo "fetch-xterm: npm is required" >&2; exit 1; }
(cd "$work" && npm pack --silent "@xterm/xterm@$VERSION" >/dev/null)
tarball="$work/xterm-xterm-$VERSION.tgz"
got="$(sha256sum "$tarball" | cut -d' ' -f1)"
if [ "$got" != "$SHA256" ]; then
  echo "fetch-xterm: the package's sha256 is $got, not the pinned $SHA256: not used" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$work"
mkdir -p "$dest"
cp "$work/package/lib/xterm.js" "$dest/xterm.js"
cp "$work/package/css/xterm.css" "$dest/xterm.css"
cp "$work/package/LICENSE" "$dest/LICENSE"
echo "$VERSION" > "$dest/VERSION"
echo "fetch-xterm: @xterm/xterm $VERSION in $dest" >&2
