#!/usr/bin/env bash
# Set up a machine for browserd: the virtual environment, the package, and a Chromium to drive.
# Idempotent and quick when nothing changed (a stamp records the installed pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi

stamp="$VENV/.browserd-installed-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
    echo "setup: installing browserd and its development tools into $VENV"
    # The machine's pip 23 cannot resolve some dependency sets: upgrade pip first.
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -e ".[dev]"
    rm -f "$VENV"/.browserd-installed-*
    touch "$stamp"
fi

has_chromium() {
    "$VENV/bin/python" - <<'PY'
import sys
from browserd.daemon.runtime.chromium import find_chromium
sys.exit(0 if find_chromium() else 1)
PY
}

# Headless pages run in Chromium's headless shell when there is one (daemon/runtime/chromium.py).
has_headless_shell() {
    "$VENV/bin/python" - <<'PY'
import os, sys
from browserd.daemon.runtime.chromium import find_chromium
os.environ.pop("BROWSERD_CHROMIUM", None)  # whatever a user names, the shell is for the default choice
found = find_chromium(headless=True)
sys.exit(0 if found and found.headless_shell else 1)
PY
}

if ! has_chromium; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "setup: installing Debian's chromium"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "setup: downloading Playwright's Chromium"
        "$VENV/bin/python" -m playwright install chromium
    fi
    has_chromium || { echo "setup: no Chromium could be installed; see 'browserd doctor'" >&2; exit 1; }
fi
if ! has_headless_shell && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian's chromium-headless-shell"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell >/dev/null; } ||
        echo "setup: no headless shell could be installed; headless pages use the full browser" >&2
fi
# Debian's chromedriver: a real WebDriver endpoint for the browser pool's `webdriver` member tests (issue 24).
if ! command -v chromedriver >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian's chromium-driver"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-driver >/dev/null; } ||
        echo "setup: chromium-driver could not be installed; the webdriver pool test is skipped" >&2
fi
echo "setup: ready ($("$VENV/bin/browserd" version))"
