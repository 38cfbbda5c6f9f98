#!/usr/bin/env bash
# The whole test suite, as CI runs it: setup (which builds, i.e. type-checks the sources), the
# tests' own type-check, lint and formatting, import cycles, then every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "test: type-check" >&2
pnpm --silent typecheck
echo "test: lint" >&2
pnpm --silent lint
echo "test: vitest" >&2
report="$(mktemp)"
trap 'rm -f "$report"' EXIT
status=0
pnpm --silent test:unit --reporter=default --reporter=json --outputFile="$report" || status=$?
# One plain closing line that any CI log reader understands.
node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);' "$report" || true
exit "$status"
