#!/usr/bin/env bash
# The live demo: nats-server + hub + 60 simulated agents; a Fleet-style bundle rollout and a staged
# Kubernetes upgrade with an approval, a closed maintenance window and a failing cluster, steered
# through the flotilla CLI (scripts/demo.mjs). `npm run demo -- --offline` runs the older offline
# preview instead (flotilla simulate, virtual time, no servers).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${1:-}" = "--offline" ]; then
  dir=examples/staged-upgrade
  exec node packages/cli/dist/main.js simulate \
    --clusters "$dir/clusters.yaml" --strategy "$dir/strategy.json" --scenario "$dir/scenario.yaml"
fi
if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
  echo "demo: nats-server is needed and could not be installed here." >&2
  echo "demo:   install it with: sudo apt-get install -y nats-server   (Debian/Ubuntu)" >&2
  echo "demo:   or put a nats-server 2.9+ binary with JetStream on PATH" >&2
  exit 1
fi
exec node scripts/demo.mjs "$@"
