#!/usr/bin/env bash
# The whole test suite, as CI runs it: setup (which builds, i.e. type-checks the sources), the
# tests' own type-check, lint and formatting, import cycles, then both vitest projects: the unit
# loop and the end-to-end suite (vitest.config.ts; CONTRIBUTING.md explains the two).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "test: type-check" >&2
pnpm --silent typecheck
echo "test: lint" >&2
pnpm --silent lint
echo "test: vitest (unit and e2e projects)" >&2
report="$(mktemp)"
trap 'rm -f "$report"' EXIT
status=0
pnpm --silent vitest run --reporter=default --reporter=json --outputFile="$report" || status=$?
# One plain closing line that any CI log reader understands.
node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);' "$report" || true
exit "$status"
