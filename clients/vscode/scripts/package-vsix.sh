#!/usr/bin/env bash
# Builds clients/vscode/shiro-neko.vsix: the bundled extension (esbuild) packed by vsce.
# Usage: bash clients/vscode/scripts/package-vsix.sh [out.vsix]   (npm ci first on a fresh clone)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-shiro-neko.vsix}
[ -d node_modules ] || npm ci --no-audit --no-fund
node scripts/build.mjs --production
# Everything is bundled into dist/, so no node_modules go into the package.
npx --no-install vsce package --no-dependencies --skip-license --allow-missing-repository -o "$out" >/dev/null
echo "$(pwd)/$out"
