# The two commands of the README: `make run` and `make test`.
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup run test test-unit lint bench clean

setup:
	@./scripts/setup.sh

run: setup
	@echo "Paste this into your MCP client's configuration:"
	@$(BIN)/browserd mcp-config
	@echo "Starting the browserd daemon in the foreground (Ctrl-C stops it)..."
	@BROWSERD_DAEMON_IDLE_EXIT_S=$${BROWSERD_DAEMON_IDLE_EXIT_S:-0} exec $(BIN)/browserd daemon --foreground

test: setup
	$(BIN)/python -m pytest

# The fast suite: no daemon, no browser (tests/unit/conftest.py refuses a Chromium launch), under a minute.
test-unit: setup
	$(BIN)/python -m pytest tests/unit -q

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	./scripts/typecheck.sh

bench: setup
	$(BIN)/python tests/bench/startup.py

clean:
	rm -rf $(VENV) build dist *.egg-info
