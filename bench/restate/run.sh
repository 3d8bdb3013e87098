#!/usr/bin/env bash
# The Restate baseline's launcher: makes sure node and npm are there (Debian's nodejs and npm,
# installed when missing, as root or through sudo), then runs run.mjs with the same arguments.
# Exits with 3, saying "restate baseline skipped: <reason>", when they cannot be had.
# Usage: bench/restate/run.sh --out RESULT.json [run.mjs options...]
set -euo pipefail

skip() {
  echo "restate baseline skipped: $*" >&2
  exit 3
}

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  sudo=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || skip "node or npm missing; install them as root: apt-get install nodejs npm"
    sudo=(sudo -n)
  fi
  command -v apt-get >/dev/null 2>&1 || skip "node or npm missing, and no apt-get to install them with"
  echo "restate baseline: installing nodejs npm" >&2
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq >&2 || skip "apt-get update failed"
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends nodejs npm >&2 ||
    skip "apt-get install nodejs npm failed"
fi

# run.mjs needs util.parseArgs and ES modules: Node.js 18 or later.
major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$major" -ge 18 ] || skip "node $(node --version) is too old: Node.js 18 or later is needed"

exec node "$(dirname "$0")/run.mjs" "$@"
