#!/usr/bin/env sh
# The pre-commit hook's entry (.pre-commit-hooks.yaml, `language: script`): pre-commit keeps a clone
# of this repository in its cache and runs this script from the user's repository with the staged
# files as arguments. The first run installs the dependencies and builds the CLI inside that clone
# (npm ci, once; its output goes to stderr); later runs only check.
set -e
hook_root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
if [ ! -f "$hook_root/dist/cli.cjs" ]; then
  echo "bitexact: first run: installing the hook's dependencies (npm ci) in $hook_root" >&2
  (cd "$hook_root" && npm ci --no-audit --no-fund --ignore-scripts >&2 && node scripts/build.mjs >&2)
fi
exec node "$hook_root/bin/bitexact.cjs" check "$@"
