"""The engine's read-only statistics and its forward-pass observers, on a tiny random Llama."""

from __future__ import annotations

import pytest

from localjudge import Judge
from localjudge.engine.observe import ForwardCall
from localjudge.engine.options import EngineOptions
from localjudge.testing.tiny_models import tiny_info, tiny_llama

pytestmark = pytest.mark.usefixtures("torch_one_thread")

HEAD = " ".join(["the answer is good and the response is fluent"] * 6)
PROMPTS = [f"{HEAD} item {i}. Score:" for i in range(4)]


@pytest.fixture(scope="module")
def judge(tiny_tokenizer) -> Judge:
    options = EngineOptions(device="cpu", dtype="float32", token_budget=4096, reuse_prefix=True)
    return Judge.from_model(tiny_llama(tiny_tokenizer), tiny_tokenizer, tiny_info(512), options)


def test_observers_see_every_pass_and_change_no_result(judge):
    plain_scores = judge.score_texts(PROMPTS, 0, 10)
    plain_texts = judge.generate(PROMPTS, 4, share_prefix=True)
    seen: list[str] = []
    with judge.backend.observe_forwards(lambda call: seen.append(call.kind)) as calls:
        scores = judge.score_texts(PROMPTS, 0, 10)
        texts = judge.generate(PROMPTS, 4, share_prefix=True)
    assert [c.kind for c in calls] == seen  # the function sees what the list records
    kinds = [c.kind for c in calls]
    # scoring: one prefill of the shared head and one batch with the tree appended; generation:
    # its own prefill (a fresh memo per call), one batch, then a step per token after the first
    prefill, batch = calls[0], calls[1]
    assert kinds[:2] == ["prefill", "batch"] and prefill.lengths[0] == batch.shared > 0
    assert batch.lengths == tuple(len(judge.backend.encode(p)) - batch.shared for p in PROMPTS)
    assert batch.appended == judge.score_tree(0, 10).n_nodes - 1
    assert kinds[2:5] == ["prefill", "batch", "step"] and set(kinds[5:]) <= {"step"}
    assert all(c.lengths == (1,) * len(PROMPTS) for c in calls if c.kind == "step")
    assert texts == plain_texts
    for a, b in zip(scores, plain_scores):
        assert a.probs == b.probs  # bitwise: an observer changes nothing
    with judge.backend.observe_forwards() as after:
        pass
    assert after == [] and not judge.backend.runner.observers  # gone once the block ends


def test_an_observer_can_stop_a_pass(judge):
    def refuse(call: ForwardCall) -> None:
        raise ValueError(f"no {call.kind}")

    with pytest.raises(ValueError, match="no prefill"), judge.backend.observe_forwards(refuse):
        judge.loglikelihood(PROMPTS, [" good"] * len(PROMPTS))
    assert not judge.backend.runner.observers  # removed on the way out too


def test_stats_are_a_snapshot_and_read_only(judge):
    before = judge.backend.stats
    got = judge.loglikelihood(PROMPTS, [" good", " bad", "", " fluent"])
    after = judge.backend.stats
    assert after.head_rows - before.head_rows == sum(g.n_tokens for g in got)
    assert after.last_plan is not None and sum(len(b) for b in after.last_plan.batches) == 3
    with pytest.raises(AttributeError):
        judge.backend.stats = after  # type: ignore[misc]
    with pytest.raises(AttributeError):
        after.head_rows = 0  # type: ignore[misc]


def test_a_twin_counts_on_its_own_and_has_its_own_observers(judge):
    twin = judge.with_options(tree_tolerance=0.0)
    start = judge.backend.stats.head_rows
    assert twin.backend.stats.head_rows == start  # it counts on from here
    with judge.backend.observe_forwards() as mine, twin.backend.observe_forwards() as theirs:
        twin.score_texts(PROMPTS[:1], 0, 10)
    assert mine == [] and theirs
    assert judge.backend.stats.head_rows == start < twin.backend.stats.head_rows
