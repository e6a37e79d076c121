"""Requests gathered across clients: one engine call for concurrent requests, each result what an offline run of the
same cases gives whatever else is in flight; a full queue answers 503 at once; a client that leaves cancels its
remaining work; stopping drains what is in flight."""

from __future__ import annotations

import json
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from serving import Gate, get, post, running

from localjudge.io.cases import case_from_row
from localjudge.judges.judge import Judge
from localjudge.metrics import builtin_metric
from localjudge.runs.evaluate import evaluate
from localjudge.runs.options import ScoringOptions
from localjudge.serve.operations import Evaluate, Score
from localjudge.serve.worker import Job, Overloaded, Worker
from localjudge.testing import FakeBackend, fake_judge


def policy(prompt: str) -> dict[str, float]:
    n = sum(map(ord, prompt))
    return {str(1 + n % 5): 0.5, str(1 + (n // 5) % 5): 0.3}


ROWS = [{"id": f"c{k}", "actual_output": f"Summary number {k} " + "word " * (k % 4)} for k in range(24)]


def collect(job_results: dict, name: str):
    def on_results(start, got):
        job_results.setdefault(name, []).extend(got)

    return on_results


def test_jobs_waiting_together_run_in_one_engine_call_and_split_back():
    judge = fake_judge(policy)
    worker = Worker(judge, max_queue=10, batch_window_ms=0, batch_items=100)
    op = Score(1, 5, None, 0.1)
    got: dict = {}
    prompts = {"x": ["a Score:", "bb Score:"], "y": ["ccc Score:"], "z": ["dddd Score:", "e Score:", "ff Score:"]}
    for name, items in prompts.items():
        worker.submit(Job(op, items, collect(got, name), on_error=pytest.fail, on_done=lambda: None))
    worker.start()  # all three are waiting when the worker looks first
    worker.stop()
    assert worker.calls == 1
    for name, items in prompts.items():
        assert got[name] == judge.score_texts(items, 1, 5)


def test_a_large_job_is_taken_in_slices_and_other_keys_wait_their_turn():
    judge = fake_judge(policy)
    worker = Worker(judge, max_queue=10, batch_window_ms=0, batch_items=2)
    got: dict = {}
    done: list[str] = []
    worker.submit(
        Job(Score(1, 5, None, 0.1), ["a", "b", "c"], collect(got, "big"), pytest.fail, lambda: done.append("big"))
    )
    worker.submit(Job(Score(1, 3, None, 0.1), ["d"], collect(got, "other"), pytest.fail, lambda: done.append("other")))
    worker.start()
    worker.stop()
    assert worker.calls == 3  # a, b | c | d (another scale: another call)
    assert got["big"] == judge.score_texts(["a", "b", "c"], 1, 5) and done == ["big", "other"]


def test_requests_arriving_in_a_stream_are_gathered_while_they_keep_coming():
    # six requests 80 ms apart, each well within the 300 ms window of the one before: one call, though the
    # stream lasts longer than one window (clients answered together send their next requests together)
    judge = fake_judge(policy)
    worker = Worker(judge, max_queue=10, batch_window_ms=300, batch_items=100)
    op = Score(1, 5, None, 0.1)
    got: dict = {}
    worker.start()
    for k in range(6):
        worker.submit(Job(op, [f"{k} Score:"], collect(got, str(k)), on_error=pytest.fail, on_done=lambda: None))
        time.sleep(0.08)
    worker.stop()
    assert worker.calls == 1 and len(got) == 6


def test_past_the_queue_bound_submit_refuses_at_once():
    worker = Worker(fake_judge(policy), max_queue=2, batch_window_ms=0, batch_items=10)
    op = Score(1, 5, None, 0.1)
    for _ in range(2):
        worker.submit(Job(op, ["p"], lambda s, g: None, pytest.fail, lambda: None))
    with pytest.raises(Overloaded, match="retry"):
        worker.submit(Job(op, ["p"], lambda s, g: None, pytest.fail, lambda: None))
    worker.start()
    worker.stop()
    with pytest.raises(Overloaded, match="shutting down"):
        worker.submit(Job(op, ["p"], lambda s, g: None, pytest.fail, lambda: None))


def test_one_bad_request_fails_alone_in_a_shared_call():
    judge = fake_judge(policy)
    judge = Judge(FakeBackend(policy, max_context=2000), judge.info.model_copy(update={"context_length": 2000}))
    worker = Worker(judge, max_queue=10, batch_window_ms=0, batch_items=100)
    op = Evaluate((builtin_metric("fluency"),), ScoringOptions())
    errors: list = []
    got: dict = {}
    ok = [case_from_row(ROWS[0], "r", 0)]
    too_long = [case_from_row({"actual_output": "x" * 3000}, "r", 0)]  # past the judge's context
    worker.submit(Job(op, ok, collect(got, "ok"), pytest.fail, lambda: None))
    worker.submit(Job(op, too_long, collect(got, "bad"), errors.append, lambda: None))
    worker.start()
    worker.stop()
    assert len(errors) == 1 and "bad" not in got and len(got["ok"]) == 1


@pytest.fixture(scope="module")
def offline():
    """Each case's record lines as `localjudge eval` writes them, from one offline run of every case."""
    cases = [case_from_row(r, "data", i) for i, r in enumerate(ROWS)]
    metrics = [builtin_metric("fluency"), builtin_metric("coherence")]
    result = evaluate(cases, metrics, fake_judge(policy), progress=False)
    lines = [json.dumps(r.model_dump(mode="json"), ensure_ascii=False) for r in result.records]
    return {c.id: lines[2 * k : 2 * k + 2] for k, c in enumerate(cases)}


def test_sixteen_concurrent_clients_get_exactly_the_offline_records(offline):
    rng = random.Random(7)
    requests = []
    for _ in range(256):  # 1-4 cases each, in shuffled orders
        rows = rng.sample(ROWS, rng.randint(1, 4))
        requests.append(rows)
    with running(fake_judge(policy), batch_window_ms=5, max_queue=256) as server:

        def send(rows):
            answer = post(server.url, "/v1/evaluate", {"cases": rows, "metrics": ["fluency", "coherence"]})
            assert answer.status == 200, answer.text
            return [json.dumps(r, ensure_ascii=False) for r in answer.json()["records"]]

        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(send, requests))
        calls = server.worker.calls
    for rows, got in zip(requests, answers):
        assert got == [line for r in rows for line in offline[r["id"]]]  # nothing lost, nothing mixed up
    assert calls < len(requests)  # requests shared engine calls


def test_a_full_queue_answers_503_with_retry_after_and_nothing_hangs():
    gate = Gate(lambda p: {"3": 0.9})
    with running(fake_judge(gate), max_queue=2) as server:
        body = {"prompts": ["Score:"], "low": 1, "high": 5}
        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(post, server.url, "/v1/score", body)
            assert gate.entered.wait(30)  # the worker holds the first request
            second = pool.submit(post, server.url, "/v1/score", body)
            while get(server.url, "/health").json()["queued"] < 2:  # the second is queued (both count)
                threading.Event().wait(0.01)
            third = post(server.url, "/v1/score", body)
            assert third.status == 503 and third.headers["retry-after"] == "1"
            assert "retry" in third.json()["error"]["message"]
            gate.released.set()
            assert first.result().status == 200 and second.result().status == 200


def test_a_client_that_leaves_cancels_its_remaining_work():
    import http.client
    from urllib.parse import urlsplit

    gate = Gate(lambda p: {"3": 0.9})
    judge = fake_judge(gate)
    with running(judge, batch_items=1) as server:
        parts = urlsplit(server.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        prompts = [f"prompt {k} Score:" for k in range(5)]
        conn.request("POST", "/v1/score", body=json.dumps({"prompts": prompts, "low": 1, "high": 5}))
        assert gate.entered.wait(30)  # the first prompt's slice is in the engine
        conn.close()  # the client leaves
        while get(server.url, "/health").json()["queued"] > 0:  # the server notices and cancels the job
            threading.Event().wait(0.01)
        gate.released.set()
        assert post(server.url, "/v1/score", {"prompts": ["after Score:"], "low": 1, "high": 5}).status == 200
    assert judge.backend.calls == ["prompt 0 Score:", "after Score:"]  # prompts 1-4 were never judged


def test_stopping_answers_the_requests_in_flight_first():
    gate = Gate(lambda p: {"3": 0.9})
    server_cm = running(fake_judge(gate))
    server = server_cm.__enter__()
    with ThreadPoolExecutor(2) as pool:
        in_flight = pool.submit(post, server.url, "/v1/score", {"prompts": ["Score:"], "low": 1, "high": 5})
        assert gate.entered.wait(30)
        stopping = pool.submit(server.stop)  # as SIGTERM does: stop taking connections, finish what is in flight
        while accepts(server.url):  # shutdown has begun: new connections are refused
            threading.Event().wait(0.01)
        gate.released.set()
        answer = in_flight.result()
        stopping.result()
    assert answer.status == 200 and answer.json()["distributions"][0]["mode"] == 3
    server_cm.__exit__(None, None, None)


def accepts(url: str) -> bool:
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=1).close()
    except OSError:
        return False
    return True


def test_a_completions_prompts_decode_with_logprobs_in_one_engine_call():
    prompts = ["abc", "xyz abc", "ab", "c"]
    with running(fake_judge(policy), batch_window_ms=20) as server:
        body = {"prompt": prompts, "max_tokens": 5, "logprobs": 2, "echo": True}
        together = post(server.url, "/v1/completions", body)
        calls = server.worker.calls
        alone = [post(server.url, "/v1/completions", {**body, "prompt": p}).json() for p in prompts]
    assert together.status == 200, together.text
    assert calls == 1  # every prompt's whole decoding, steps and echo, in one engine call
    got = together.json()["choices"]
    assert [{k: c[k] for k in ("text", "logprobs")} for c in got] == [
        {k: a["choices"][0][k] for k in ("text", "logprobs")} for a in alone
    ]
    assert all(len(c["logprobs"]["tokens"]) == len(p) + 5 for c, p in zip(got, prompts))
