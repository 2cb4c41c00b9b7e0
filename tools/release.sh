#!/usr/bin/env bash
# The release, as one command (`npm run release`), from a clean work tree:
#   1. changeset version    bumps the packages with pending changesets, writes their CHANGELOGs and
#                           the caret ranges of the @rocke packages that depend on them;
#   2. git commit           the lockfile follows, and the bump is committed: "release: @rocke/x@1.2.3, ...";
#   3. build and check      the dists, hip-runtime's prebuilt addon, then tools/package-test.mjs
#                           (publint, attw, an install from the tarballs);
#   4. changeset publish    publishes every package whose version the registry lacks, and tags the
#                           commit of step 2 (`@rocke/x@1.2.3`), so tags and package.json agree.
# In CI (CI=true) npm publishes with provenance, and the commit and its tags are pushed.
# The registry is npm's configured one: NPM_CONFIG_REGISTRY=http://localhost:4873 for a rehearsal.
# With nothing pending, steps 1-2 do nothing and step 4 publishes what a failed run left unpublished.
set -euo pipefail
cd "$(dirname "$0")/.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false

if [ -n "$(git status --porcelain)" ]; then
  echo "release: the work tree has changes; commit or stash them first" >&2
  exit 1
fi

npx changeset version
npm install --package-lock-only --no-audit --no-fund --loglevel=error
if [ -n "$(git status --porcelain)" ]; then
  released=$(git diff --name-only -- 'packages/*/package.json' | while read -r file; do
    node -p "const p = require('./$file'); p.name + '@' + p.version"
  done | paste -sd, - | sed 's/,/, /g')
  git add -A
  git commit -q -m "release: ${released:-dependency ranges}"
  echo "release: committed $(git rev-parse --short HEAD): ${released:-dependency ranges}"
fi

npx nx run-many -t build build:native --outputStyle=stream
ls packages/hip-runtime/prebuilds/linux-x64/*.node >/dev/null
node tools/package-test.mjs

if [ "${CI:-}" = true ]; then export NPM_CONFIG_PROVENANCE=true; fi
# changeset publish reads only the lower-case npm_config_registry (else it publishes to npmjs.org):
# hand it the registry npm itself would use (.npmrc, NPM_CONFIG_REGISTRY, ...).
npm_config_registry=$(npm config get registry)
export npm_config_registry
echo "release: publishing to $npm_config_registry"
npx changeset publish
echo "release: tags on $(git rev-parse --short HEAD): $(git tag --points-at HEAD | paste -sd' ' -)"
if [ "${CI:-}" = true ]; then git push --follow-tags origin HEAD; fi
