#!/usr/bin/env bash
# mypy over the three layers under their installed names (browserd.protocol ...): the folders are
# mapped by setuptools, which mypy cannot follow, so give it a tree of symlinks with those names.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/browserd"
for layer in protocol daemon shim; do ln -s "$repo/$layer" "$tree/browserd/$layer"; done
cd "$tree"
MYPYPATH="$tree" "$repo/.venv/bin/mypy" --config-file "$repo/pyproject.toml" --cache-dir "$repo/.mypy_cache" \
    -p browserd.protocol -p browserd.daemon -p browserd.shim
