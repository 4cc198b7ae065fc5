# The two commands a newcomer needs: `make run` and `make test`. Both install what is missing.
.PHONY: run test setup lint typecheck pytest webtest bench docs docs-serve screenshots example-workflows example-ops example-playground example-research

HOST ?= 127.0.0.1
PORT ?= 8000
VENV := .venv/bin
# MkDocs prints a banner about its successor on every build; it is not a warning about our docs.
export NO_MKDOCS_2_WARNING := 1

run:
	scripts/setup.sh
	$(VENV)/agentstream serve --host $(HOST) --port $(PORT)

# The checks are independent: they run side by side (the Python tests on 4 workers, the web
# suites beside them), each one's output printed whole when it ends, so a failure reads as it
# would alone; make fails if any of them does.
test:
	scripts/setup.sh --test
	$(MAKE) --no-print-directory -j3 --output-sync=target pytest webtest lint typecheck docs

lint:
	$(VENV)/ruff check src tests bench examples docs/rest_roles.py
	$(VENV)/ruff format --check src tests bench examples docs/rest_roles.py

typecheck:
	$(VENV)/mypy src examples

PYTEST_WORKERS ?= 4
pytest:
	$(VENV)/pytest -q -n $(PYTEST_WORKERS)

webtest:
	@if [ -f web/package.json ]; then cd web && npm test --silent; fi

bench:
	scripts/setup.sh
	$(VENV)/python bench/loop_overhead.py

docs: $(VENV)/mkdocs
	$(VENV)/mkdocs build --strict

# A fresh clone has no environment yet: `make docs` installs it first (once).
$(VENV)/mkdocs:
	scripts/setup.sh

docs-serve:
	scripts/setup.sh
	$(VENV)/mkdocs serve

# The examples' README screenshots (examples/*/screenshot.png, research/host-screenshot.png),
# taken at the end of each example's story in Chromium (web/e2e/examples.e2e.ts and
# workflows.e2e.ts).
screenshots:
	scripts/setup.sh --test
	cd web && EXAMPLE_SCREENSHOTS=1 npx vitest run -c vitest.e2e.config.ts e2e/examples.e2e.ts e2e/workflows.e2e.ts

# The example applications (examples/<name>/README.md), each on its offline scripted model
# unless AGENTSTREAM_MODEL is set.
EXAMPLES := example-workflows example-ops example-playground example-research
$(EXAMPLES): example-%:
	scripts/setup.sh
	$(VENV)/agentstream serve examples.$*.app:agent --chat examples.$*.app:chat \
		--server examples.$*.app:server --host $(HOST) --port $(PORT)
