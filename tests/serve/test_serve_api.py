"""The native API against a real server (uvicorn on a loopback port) over the scripted fake judge: each answer is
the library's own reading of the same input, byte for byte where the library writes bytes."""

from __future__ import annotations

import json

import pytest
from serving import get, post, running

from localjudge.io.cases import case_from_row
from localjudge.metrics import builtin_metric
from localjudge.metrics.spec import metric_from_dict
from localjudge.runs.evaluate import evaluate
from localjudge.testing import fake_judge


def policy(prompt: str) -> dict[str, float]:
    """Scores that differ from case to case (by the prompt's length), so that a mix-up shows."""
    n = len(prompt)
    scores = {str(1 + n % 3): 0.6, str(1 + (n // 3) % 3): 0.25} if n % 3 != (n // 3) % 3 else {"2": 0.8}
    return {**scores, "B": 0.05, "A": 0.01 * (n % 5)}  # and labels, for label scales


ROWS = [
    {"id": "a", "input": "2+2?", "actual_output": "4", "expected_output": "4"},
    {"id": "b", "input": "Capital of France?", "actual_output": "Lyon", "expected_output": "Paris"},
    {"input": "Who wrote Hamlet?", "actual_output": "Shakespeare wrote it.", "expected_output": "Shakespeare", "n": 3},
    {"id": "d", "actual_output": "no input here"},  # unscored for correctness: no input
]
INLINE = {
    "name": "brevity",
    "task": "Rate the answer.",
    "criteria": "Brevity (1-5): shorter is better.",
    "steps": ["Read the answer.", "Score it."],
    "fields": ["actual_output"],
    "low": 1,
    "high": 5,
}


@pytest.fixture(scope="module")
def server():
    with running(fake_judge(policy)) as s:
        yield s


def offline_lines(tmp_path, rows, metrics) -> list[str]:
    """What `localjudge eval` writes for these rows: the results file's lines."""
    out = tmp_path / "offline.jsonl"
    cases = [case_from_row(r, "data", i) for i, r in enumerate(rows)]
    resolved = [builtin_metric(m) if isinstance(m, str) else metric_from_dict(m) for m in metrics]
    evaluate(cases, resolved, fake_judge(policy), out=out, progress=False)
    return out.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("metrics", [["correctness"], ["fluency", "correctness", INLINE]])
def test_evaluate_records_are_the_lines_eval_writes(server, tmp_path, metrics):
    answer = post(server.url, "/v1/evaluate", {"cases": ROWS, "metrics": metrics})
    assert answer.status == 200, answer.text
    got = [json.dumps(r, ensure_ascii=False) for r in answer.json()["records"]]
    assert got == offline_lines(tmp_path, ROWS, metrics)
    assert answer.text.count('"case_id": "case-3"') == len(metrics)  # a row without id: numbered as in a file


def test_streamed_records_are_the_lines_eval_writes(server, tmp_path):
    answer = post(server.url, "/v1/evaluate", {"cases": ROWS, "metrics": ["fluency", "correctness"], "stream": True})
    assert answer.status == 200 and answer.headers["content-type"].startswith("application/x-ndjson")
    assert answer.text.splitlines() == offline_lines(tmp_path, ROWS, ["fluency", "correctness"])


def test_score_is_the_localjudge_score_reading(server):
    prompts = ["Rate it. Score:", "Another prompt, longer. Score:"]
    answer = post(server.url, "/v1/score", {"prompts": prompts, "low": 1, "high": 3})
    assert answer.status == 200, answer.text
    dists = fake_judge(policy).score_texts(prompts, 1, 3)
    want = [{"prompt": p, "min_valid_mass": 0.1, **d.model_dump(mode="json")} for p, d in zip(prompts, dists)]
    assert answer.json()["distributions"] == json.loads(json.dumps(want))


def test_score_of_labels_and_of_a_conversation(server):
    judge = fake_judge(policy)
    conv = [{"role": "user", "content": "Which is better, A or B?"}, {"role": "assistant", "content": "Answer:"}]
    answer = post(server.url, "/v1/score", {"conversations": [conv], "labels": ["A", "B"], "min_valid_mass": 0.0})
    assert answer.status == 200, answer.text
    rendered = judge.backend.apply_chat_template([conv[0]]) + "Answer:"  # the last assistant message: a prefill
    want = judge.score_labels([rendered], ["A", "B"], min_valid_mass=0.0)[0]
    assert answer.json()["distributions"][0]["probs"] == want.model_dump(mode="json")["probs"]


def test_likelihood_is_the_judges_reading(server):
    items = [
        {"prompt": "The cat sat on the mat.", "continuation": " The cat sat."},
        {"prompt": "x", "continuation": ""},
    ]
    answer = post(server.url, "/v1/likelihood", {"items": items})
    assert answer.status == 200, answer.text
    want = fake_judge(policy).loglikelihood([i["prompt"] for i in items], [i["continuation"] for i in items])
    got = answer.json()["readings"]
    assert [r["logprobs"] for r in got] == [list(w.logprobs) for w in want]
    assert got[0]["sum"] == want[0].sum and got[1]["mean"] is None  # an empty continuation: NaN -> null


def test_models_health_and_tokenizer(server):
    models = get(server.url, "/v1/models").json()
    assert [m["id"] for m in models["data"]] == ["fake"] and models["data"][0]["localjudge"]["source"] == "fake"
    assert get(server.url, "/health").json()["status"] == "ok"
    tokens = post(server.url, "/tokenize", {"prompt": "hi", "add_special_tokens": False}).json()["tokens"]
    assert post(server.url, "/detokenize", {"tokens": tokens}).json()["prompt"] == "hi"
    assert "eos_token" in get(server.url, "/tokenizer_info").json()
