#!/usr/bin/env bash
# Generates the TypeScript types of proto/flotilla/v1 into packages/protocol/src/generated with
# proto-loader-gen-types. The options match PROTO_LOADER_OPTIONS in packages/protocol/src/load.ts:
# keepCase false (camelCase fields), longs Number, enums String, defaults, oneofs.
#
#   bash scripts/gen-proto.sh           regenerate (after editing a .proto)
#   bash scripts/gen-proto.sh --check   fail when the checked-in types are stale (part of `pnpm lint`)
#   bash scripts/gen-proto.sh --check DIR   compare against DIR instead (the script's own test)
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-write}"
target="${2:-packages/protocol/src/generated}"
case "$mode" in
  write | --check) ;;
  *)
    echo "usage: $0 [--check [DIR]]" >&2
    exit 2
    ;;
esac

gen=packages/protocol/node_modules/.bin/proto-loader-gen-types
if [ ! -x "$gen" ]; then
  echo "gen-proto: $gen is missing: run pnpm install" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
out="$tmp/generated"

# The entry files; proto-loader follows their imports. Paths are relative to proto/ so the
# generated "Original file" comments do not depend on where the repository is checked out.
entries=(flotilla/v1/agent.proto flotilla/v1/admin.proto)

"$gen" \
  --longs=Number \
  --enums=String \
  --defaults \
  --oneofs \
  --includeComments \
  --grpcLib=@grpc/grpc-js \
  --importFileExtension=.js \
  -I proto \
  -O "$out" \
  "${entries[@]}" >/dev/null

# Then: an index naming every generated export, so the package can offer them as one `wire`
# namespace (enums are values too: their name tables); and a header on every file that names the
# lint rules proto-loader's style breaks, in the files where it breaks them.
node packages/protocol/scripts/gen-index.mjs "$out"

node_modules/.bin/prettier --config .prettierrc.json --log-level warn --write "$out"

if [ "$mode" = "--check" ]; then
  if ! diff -r "$target" "$out" >"$tmp/diff"; then
    head -n 40 "$tmp/diff" >&2
    echo "gen-proto: $target is stale: run 'bash scripts/gen-proto.sh' and commit the result" >&2
    exit 1
  fi
  echo "gen-proto: generated types are up to date" >&2
  exit 0
fi

rm -rf "$target"
cp -r "$out" "$target"
echo "gen-proto: wrote $target" >&2
