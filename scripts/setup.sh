#!/usr/bin/env bash
# Sets up a fresh machine for p2w-rt: Chromium, PostgreSQL (for its tests), a virtualenv in .venv, CPU-only PyTorch, the package.
# Idempotent: a second run only checks. Used by the README's two commands and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt_lock.sh  # apt_get: waits for another apt/dpkg (unattended-upgrades, a second setup) instead of failing
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi

if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  echo "setup: installing Debian's chromium (the browser the recorder drives)"
  apt_get update -qq
  apt_get install -y -qq chromium >/dev/null
fi

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  echo "setup: installing Debian's postgresql (the tests start a throwaway server for the PostgreSQL backend)"
  apt_get update -qq
  apt_get install -y -qq postgresql >/dev/null
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup: installing Debian's nodejs and npm (the Node example agent of record --exec)"
  apt_get update -qq
  apt_get install -y -qq nodejs npm >/dev/null
fi
# The Node example's one dependency, playwright-core (no browser download: it attaches to p2w-rt's Chromium over CDP).
if [ ! -d examples/node_agent/node_modules/playwright-core ]; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix examples/node_agent --no-audit --no-fund --loglevel=error
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
# CPU build first: anything depending on torch would otherwise pull a multi-GB CUDA build.
python -m pip install -q "torch==2.13.0"
python -m pip install -q -e ".[dev,browser-use]"
# Browser-Use without its lockfile pins (they would downgrade click below what the CLI's typing needs, and pydantic,
# rich, anyio, pillow): its runtime needs come from the extra above. docs/design/browser-use.md.
python -m pip install -q --no-deps "browser-use==0.13.14"
echo "setup: ok ($(python --version), $(command -v chromium || echo /usr/bin/chromium))"
