# The two commands of the README: `make run` and `make test`.
VENV ?= .venv
BIN := $(VENV)/bin

# eslint for extension-bridge/ lives outside the repo (the extension has no build step and no packages):
# `make eslint` installs it once (needs the npm registry); `make lint-js` and tests/unit use it if present.
ESLINT_DIR ?= $(HOME)/.cache/browserd/eslint
ESLINT ?= $(ESLINT_DIR)/node_modules/.bin/eslint

.PHONY: setup run test test-unit lint lint-js eslint bench clean

setup:
	@./scripts/setup.sh

run: setup
	@echo "Paste this into your MCP client's configuration:"
	@$(BIN)/browserd mcp-config
	@echo "Starting the browserd daemon in the foreground (Ctrl-C stops it)..."
	@BROWSERD_DAEMON_IDLE_EXIT_S=$${BROWSERD_DAEMON_IDLE_EXIT_S:-0} exec $(BIN)/browserd daemon --foreground

# Test modules run in parallel, each whole on one worker (a shared_daemon module keeps its one daemon); every
# test has its own browserd home, socket and site server. The tests mostly wait on Chromium and the daemon,
# so there are two workers per core; six were slower on this 2-core machine (693 s against 627 s for 1200 tests).
TEST_WORKERS ?= 4

# --no-loadscope-reorder: modules are handed out in collection order (tests/e2e, then integration, then the quick
# unit modules that fill the workers' last minutes). xdist's default hands out the modules with most tests first,
# which leaves the long modules of few tests (the bridge's four clients, the replay benches) for the very end.
test: setup
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The fast suite: no daemon, no browser (tests/unit/conftest.py refuses a Chromium launch), under a minute.
test-unit: setup
	$(BIN)/python -m pytest tests/unit -q

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	./scripts/typecheck.sh
	@if [ -x "$(ESLINT)" ]; then $(MAKE) --no-print-directory lint-js; else echo "eslint not installed (make eslint): extension-bridge/ and the page scripts not linted"; fi

lint-js:
	$(ESLINT) --config extension-bridge/eslint.config.mjs extension-bridge/
	$(ESLINT) --config daemon/eslint.config.mjs --max-warnings 0 daemon/

eslint:
	npm install --prefix "$(ESLINT_DIR)" --no-audit --no-fund eslint@9

bench: setup
	$(BIN)/python tests/bench/startup.py

clean:
	rm -rf $(VENV) build dist *.egg-info
