#!/usr/bin/env bash
# Makes a fresh machine ready: pnpm (installed through npm, since corepack's download of it is
# refused on locked-down machines), the workspace's dependencies, and a build.
set -euo pipefail
cd "$(dirname "$0")/.."

PNPM_VERSION="$(node -p "require('./package.json').packageManager.split('@')[1]")"
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  echo "setup: installing pnpm ${PNPM_VERSION} with npm" >&2
  npm install --global --no-fund --no-audit "pnpm@${PNPM_VERSION}" >&2
fi

if [ ! -d node_modules/.pnpm ] || [ pnpm-lock.yaml -nt node_modules/.modules.yaml ]; then
  echo "setup: installing dependencies" >&2
  pnpm install --frozen-lockfile --reporter=append-only >&2
fi

echo "setup: building" >&2
pnpm --silent build >&2
