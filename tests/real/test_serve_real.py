"""`localjudge serve` with the embedded SmolLM2 judge: the command in a process of its own (started, called by the
official openai client, stopped by SIGTERM), lm-eval-harness's `local-completions` model running a loglikelihood task
against it, and concurrent clients getting bitwise the offline records."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from serving import post, running

from localjudge.io.cases import case_from_row
from localjudge.metrics import builtin_metric
from localjudge.runs.evaluate import evaluate

pytestmark = pytest.mark.slow
openai = pytest.importorskip("openai")

KEY = "serve-test-key-0123"
DOCS = [
    {"question": "The capital of France is", "choices": ["Paris", "Berlin", "Rome"], "answer": 0},
    {"question": "Two plus two equals", "choices": ["four", "five"], "answer": 0},
    {"question": "Water freezes at zero degrees", "choices": ["Celsius", "Fahrenheit"], "answer": 0},
]
TASK = """task: serve_tiny
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{question}}}}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: "{{{{answer}}}}"
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
"""


@pytest.fixture
def command(offline_env):
    """`localjudge serve --judge smollm2-135m --port 0 --api-key ...` in its own process, network refused."""
    env = {**offline_env, "LOCALJUDGE_API_KEY": KEY, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "localjudge", "serve", "--judge", "smollm2-135m", "--device", "cpu"]
    proc = subprocess.Popen(
        [*cmd, "--dtype", "float32", "--port", "0", "--no-progress"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()  # "Serving judge smollm2-135m at http://127.0.0.1:PORT, key required (...)"
    assert line.startswith("Serving judge smollm2-135m at http://127.0.0.1:"), line + proc.stderr.read()
    url = line.split(" at ")[1].split(",")[0]
    yield proc, url
    if proc.poll() is None:
        proc.kill()


def test_the_command_serves_the_openai_client_and_stops_on_sigterm(command, smollm_judge):
    proc, url = command
    client = openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0)
    messages = [{"role": "user", "content": "Say hello."}]
    plain = client.chat.completions.create(model="smollm2-135m", messages=messages, max_tokens=6)
    rendered = smollm_judge.backend.apply_chat_template(messages)
    assert plain.choices[0].message.content == smollm_judge.generate([rendered], max_new_tokens=6)[0]
    read = client.chat.completions.create(
        model="smollm2-135m", messages=messages, max_tokens=6, logprobs=True, top_logprobs=3
    )
    content = read.choices[0].logprobs.content
    assert "".join(t.token for t in content) == read.choices[0].message.content == plain.choices[0].message.content
    assert all(t.logprob == t.top_logprobs[0].logprob and len(t.top_logprobs) == 3 for t in content)  # greedy

    text = "The capital of France is Paris."
    echo = client.completions.create(model="smollm2-135m", prompt=text, max_tokens=0, echo=True, logprobs=2)
    ids = smollm_judge.backend.encode(text)
    want = smollm_judge.backend.token_logprobs([ids[:1]], [ids[1:]])[0]
    assert echo.choices[0].logprobs.token_logprobs == [None, *want.tolist()]
    assert echo.choices[0].text == text

    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    err = proc.stderr.read()
    assert "Stopped" in err and "INFO 127.0.0.1" in err  # one log line per request
    assert "POST /v1/chat/completions 200" in err


def test_lm_eval_local_completions_reads_localjudges_loglikelihoods(smollm_judge, tmp_path, monkeypatch):
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "datasets"))
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "serve_tiny.yaml").write_text(TASK.format(data=data), encoding="utf-8")
    with running(smollm_judge) as server:
        out = lm_eval.simple_evaluate(
            model="local-completions",
            model_args={
                "base_url": server.url + "/v1/completions",
                "model": "smollm2-135m",
                "tokenizer_backend": "remote",
                "tokenized_requests": True,
                "max_retries": 1,
            },
            tasks=["serve_tiny"],
            task_manager=TaskManager(include_path=str(tmp_path / "tasks")),
            log_samples=True,
        )
    samples = out["samples"]["serve_tiny"]
    pairs = [tuple(args) for s in samples for args in s["arguments"]]
    theirs = [resp[0][0] for s in samples for resp in s["resps"]]
    assert len(pairs) == sum(len(d["choices"]) for d in DOCS)
    ours = smollm_judge.loglikelihood([p for p, _ in pairs], [c for _, c in pairs])
    assert theirs == pytest.approx([o.sum for o in ours], abs=1e-6)
    assert out["results"]["serve_tiny"]["acc,none"] == pytest.approx(
        sum(max(range(len(d["choices"])), key=lambda k, d=d: _sum(ours, pairs, d, k)) == d["answer"] for d in DOCS)
        / len(DOCS)
    )


def _sum(ours, pairs, doc, k):
    return ours[pairs.index((doc["question"], " " + doc["choices"][k]))].sum


def test_concurrent_clients_get_bitwise_the_offline_records(smollm_judge):
    rows = [
        {"id": f"s{k}", "actual_output": text}
        for k, text in enumerate(
            [
                "The cat sat on the mat.",
                "Cat mat sat the on.",
                "Paris is the capital of France.",
                "The report were wrote bad.",
                "Rain is expected tomorrow in the north.",
                "A clear, well written summary of the article.",
            ]
        )
    ]
    cases = [case_from_row(r, "rows", i) for i, r in enumerate(rows)]
    result = evaluate(cases, [builtin_metric("fluency")], smollm_judge, progress=False)
    offline = {r.case_id: json.dumps(r.model_dump(mode="json"), ensure_ascii=False) for r in result.records}
    rng = random.Random(3)
    requests = [rng.sample(rows, rng.randint(1, 3)) for _ in range(12)]
    with running(smollm_judge, batch_window_ms=20) as server:

        def send(chosen):
            answer = post(server.url, "/v1/evaluate", {"cases": chosen, "metrics": ["fluency"]}, timeout=600)
            assert answer.status == 200, answer.text
            return [json.dumps(r, ensure_ascii=False) for r in answer.json()["records"]]

        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(send, requests))
        calls, kept = server.worker.calls, smollm_judge.backend.runner.prefixes.keep
    for chosen, got in zip(requests, answers):
        assert got == [offline[r["id"]] for r in chosen]
    assert calls < len(requests)
    # the engine kept prefixes between calls while serving, and keeps none again once the server stopped
    assert kept == 8 and smollm_judge.backend.runner.prefixes.keep == 0
    assert not smollm_judge.backend.runner.prefixes.caches
    assert os.cpu_count()  # (the records name the engine: batch-invariant, bitwise on this CPU)
    assert json.loads(answers[0][0])["judge"]["bitwise"] is True
