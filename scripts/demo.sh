#!/usr/bin/env bash
# The demo: a staged Kubernetes upgrade across ~60 clusters (canary → staging → prod) with a
# maintenance window, an approval, a scheduled start and a failing cluster, previewed by the real
# engine in virtual time. (The live hub demo replaces this when the hub lands.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
dir=examples/staged-upgrade
exec node packages/cli/dist/main.js simulate \
  --clusters "$dir/clusters.yaml" --strategy "$dir/strategy.json" --scenario "$dir/scenario.yaml" "$@"
