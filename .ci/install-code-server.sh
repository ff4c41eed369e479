#!/usr/bin/env bash
# (Kept in the project so a clean clone has it.)
# Install code-server (VS Code in the browser) from the npm registry only, no other internet.
# Usage: bash install_code_server.sh [target-dir] [extra npm args...]
# Works around, on Debian 12 + node 20 + npm 11 as root:
#  1. postinstall.sh refuses root unless npm_config_unsafe_perm=true
#  2. kerberos native module needs libkrb5-dev (prebuild download from GitHub fails, falls back to node-gyp)
#  3. @vscode/ripgrep postinstall downloads rg from GitHub -> pre-seed its download cache with Debian's rg
#  4. node-pty postinstall runs `npx node-gyp ...` -> needs npm_config_yes=true
# code-server 4.100.3 is the newest release whose engines say node 20 (newer ones want node 24);
# npm picks it automatically on node 20, pinned here to be explicit.
set -euo pipefail
DIR=${1:?usage: install-code-server.sh TARGET_DIR [npm args...]}
shift || true
VERSION=${CODE_SERVER_VERSION:-4.100.3}
RG_PKG_VERSION=1.15.11          # @vscode/ripgrep version pinned by code-server 4.100.3's lib/vscode shrinkwrap
RG_ASSET=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz

export DEBIAN_FRONTEND=noninteractive
need=()
for p in build-essential pkg-config python3 libkrb5-dev libxkbfile-dev libsecret-1-dev ripgrep; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then apt-get install -y "${need[@]}" >/dev/null; fi

seed=$(mktemp -d)
cp "$(command -v rg)" "$seed/rg"
mkdir -p "${TMPDIR:-/tmp}/vscode-ripgrep-cache-$RG_PKG_VERSION"   # os.tmpdir()/vscode-ripgrep-cache-<pkg version>
tar czf "${TMPDIR:-/tmp}/vscode-ripgrep-cache-$RG_PKG_VERSION/$RG_ASSET" -C "$seed" rg
rm -rf "$seed"

mkdir -p "$DIR"
cd "$DIR"
[ -f package.json ] || npm init -y >/dev/null
npm_config_unsafe_perm=true npm_config_yes=true \
  npm install "code-server@$VERSION" --foreground-scripts "$@"
"$DIR/node_modules/.bin/code-server" --version
