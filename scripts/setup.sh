#!/usr/bin/env bash
# Installs everything the project needs, idempotently: a pinned uv, the locked Python
# environment (.venv), and, when asked, the web UI build and the browser for end-to-end tests.
#   scripts/setup.sh          Python environment + web UI build
#   scripts/setup.sh --test   the same, plus test-only system packages (Chromium)
set -euo pipefail
cd "$(dirname "$0")/.."

UV_VERSION=0.13.9
if [ ! -x .uv/bin/uv ] || ! .uv/bin/uv --version | grep -q "$UV_VERSION"; then
  python3 -m venv .uv
  .uv/bin/pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
fi
.uv/bin/uv sync --frozen --quiet

# The web UI is built when a source of it is newer than the last build (or a build is
# missing): a second `make run` or `make example-*` starts in seconds.
WEB_STAMP=web/node_modules/.agentstream-build
web_build_is_stale() {
  [ ! -f "$WEB_STAMP" ] || [ ! -f src/agentstream/server/static/index.html ] \
    || [ ! -f web/dist/element.js ] \
    || [ -n "$(find web/src web/index.html web/package.json web/package-lock.json \
                    web/tsconfig*.json web/vite*.ts -newer "$WEB_STAMP" -print -quit)" ]
}
if [ -f web/package.json ]; then
  if [ ! -d web/node_modules ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
    (cd web && npm ci --no-audit --no-fund --loglevel=error)
  fi
  if web_build_is_stale; then
    touch "$WEB_STAMP.next"  # taken before: a file saved during the build is newer
    (cd web && npm run --silent build)
    mv "$WEB_STAMP.next" "$WEB_STAMP"
  fi
fi

# The official protocol clients the tests run in Node (AG-UI's @ag-ui/client, the AI SDK's ai), pinned.
if [ ! -d tests/js/node_modules ] || [ tests/js/package-lock.json -nt tests/js/node_modules/.package-lock.json ]; then
  (cd tests/js && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ "${1:-}" = "--test" ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
fi
