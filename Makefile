# The two commands a newcomer needs: `make run` and `make test`. Both install what is missing.
.PHONY: run test setup lint typecheck pytest webtest bench docs docs-serve example-workflows example-ops example-playground example-research

HOST ?= 127.0.0.1
PORT ?= 8000
VENV := .venv/bin
# MkDocs prints a banner about its successor on every build; it is not a warning about our docs.
export NO_MKDOCS_2_WARNING := 1

run:
	scripts/setup.sh
	$(VENV)/agentstream serve --host $(HOST) --port $(PORT)

test:
	scripts/setup.sh --test
	$(MAKE) --no-print-directory lint typecheck docs webtest pytest

lint:
	$(VENV)/ruff check src tests bench examples docs/rest_roles.py
	$(VENV)/ruff format --check src tests bench examples docs/rest_roles.py

typecheck:
	$(VENV)/mypy src examples

pytest:
	$(VENV)/pytest -q

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

# The example applications (examples/<name>/README.md), each on its offline scripted model
# unless AGENTSTREAM_MODEL is set.
EXAMPLES := example-workflows example-ops example-playground example-research
$(EXAMPLES): example-%:
	scripts/setup.sh
	$(VENV)/agentstream serve examples.$*.app:agent --chat examples.$*.app:chat \
		--server examples.$*.app:server --host $(HOST) --port $(PORT)
