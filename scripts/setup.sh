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

# The integration tests and the demo start real nats-server processes (2.9+, with JetStream).
# Install Debian's package when we can; otherwise say what to install and carry on: only the
# tests that need it fail, and they name it. Debian puts it in /usr/sbin, which the testkit also
# searches.
have_nats_server() { command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ]; }
if ! have_nats_server; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing nats-server with apt-get" >&2
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y nats-server; } >&2 ||
      echo "setup: warning: could not install nats-server with apt-get" >&2
  fi
  if ! have_nats_server; then
    echo "setup: warning: nats-server is not installed; the integration tests need it." >&2
    echo "setup:   install it with: sudo apt-get install -y nats-server" >&2
    echo "setup:   or put a nats-server 2.9+ binary on PATH" >&2
  fi
fi

# The metrics tests validate /metrics with promtool, and the metric-gate tests query a real
# prometheus server: both from Debian's prometheus package.
if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing promtool and prometheus (prometheus) with apt-get" >&2
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus; } >&2 ||
      echo "setup: warning: could not install prometheus with apt-get" >&2
  fi
  for tool in promtool prometheus; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "setup: warning: $tool is not installed; the metrics and metric-gate tests need it." >&2
      echo "setup:   install it with: sudo apt-get install -y prometheus" >&2
    fi
  done
fi

# GitRepos and their tests use the real git; the SSH git tests run sshd (openssh-server) and skip
# without it.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  if ! command -v git >/dev/null 2>&1; then
    echo "setup: installing git with apt-get" >&2
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends git; } >&2 ||
      echo "setup: warning: could not install git with apt-get" >&2
  fi
  if [ ! -x /usr/sbin/sshd ]; then
    echo "setup: installing openssh-server with apt-get (for the SSH git tests)" >&2
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openssh-server; } >&2 ||
      echo "setup: warning: could not install openssh-server; the SSH git tests skip" >&2
  fi
fi

if [ ! -d node_modules/.pnpm ] || [ pnpm-lock.yaml -nt node_modules/.modules.yaml ]; then
  echo "setup: installing dependencies" >&2
  pnpm install --frozen-lockfile --reporter=append-only >&2
fi

echo "setup: building" >&2
pnpm --silent build >&2
