#!/usr/bin/env bash
# Builds clients/vscode/shiro-neko.vsix: the bundled extension (esbuild) and the server's wheel
# (dist/server/, what "Install shiro-neko" installs when no shiro-lsp is found), packed by vsce.
# Usage: bash clients/vscode/scripts/package-vsix.sh [out.vsix]   (npm ci first on a fresh clone)
# $PYTHON builds the wheel (default python3; pip fetches the build backend from the package index).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-shiro-neko.vsix}
[ -d node_modules ] || npm ci --no-audit --no-fund
node scripts/build.mjs --production
# The wheel is built from a copy of the sources: setuptools' build/ in the tree could carry stale
# modules into it.
rm -rf dist/server
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
cp -r ../../pyproject.toml ../../README.md ../../server "$src/"
# The terminal client installs as shiro_neko.client from clients/terminal (pyproject's package-dir).
mkdir -p "$src/clients" && cp -r ../terminal "$src/clients/terminal"
find "$src/server" "$src/clients" -name __pycache__ -prune -exec rm -rf {} +
"${PYTHON:-python3}" -m pip wheel --quiet --no-deps --disable-pip-version-check -w dist/server "$src" 2>&1 | grep -v "^WARNING: Location" >&2 || true
ls dist/server/shiro_neko-*.whl >/dev/null
# Everything is bundled into dist/, so no node_modules go into the package.
npx --no-install vsce package --no-dependencies --skip-license --allow-missing-repository -o "$out" >/dev/null
echo "$(pwd)/$out"
