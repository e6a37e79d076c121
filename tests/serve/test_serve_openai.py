"""The official `openai` client against the OpenAI-compatible endpoints, over the fake judge: greedy text, echo,
max_tokens 0, log-probabilities of the full distribution, token-id prompts, the `localjudge` scale extension."""

from __future__ import annotations

import math

import pytest
from serving import running

from localjudge.testing import fake_judge

openai = pytest.importorskip("openai")

KEY = "a-key-for-the-openai-client"


def policy(prompt: str) -> dict[str, float]:
    return {"4": 0.7, "5": 0.2} if "good" in prompt else {"1": 0.6, "2": 0.3}


@pytest.fixture(scope="module")
def judge():
    return fake_judge(policy, generator=lambda p: "Four." if "2+2" in p else "I cannot say.")


@pytest.fixture(scope="module")
def client(judge):
    with running(judge, api_key=KEY) as server:
        yield openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0)


def test_chat_gives_the_judges_greedy_text(client, judge):
    reply = client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "2+2?"}], max_tokens=8)
    assert reply.choices[0].message.content == "Four."
    assert reply.model == "fake" and reply.usage.prompt_tokens == judge.count_tokens(
        judge.backend.apply_chat_template([{"role": "user", "content": "2+2?"}])
    )


def test_chat_extension_reads_the_exact_distribution_at_the_score_position(client, judge):
    messages = [{"role": "user", "content": "Is this good? Rate 1-5."}, {"role": "assistant", "content": "Score:"}]
    reply = client.chat.completions.create(
        model="fake", messages=messages, max_tokens=0, extra_body={"localjudge": {"low": 1, "high": 5}}
    )
    reading = reply.choices[0].model_extra["localjudge"]
    prompt = judge.backend.apply_chat_template(messages[:1]) + "Score:"
    want = judge.score_texts([prompt], 1, 5)[0]
    assert reading["expected"] == want.expected and reading["probs"] == {str(k): p for k, p in want.probs.items()}
    assert reply.choices[0].message.content == ""  # max_tokens 0: nothing generated


def test_completions_echo_with_max_tokens_0_gives_the_prompts_logprobs(client, judge):
    text = "the cat saw the cat"
    reply = client.completions.create(model="fake", prompt=text, max_tokens=0, echo=True, logprobs=1)
    lp = reply.choices[0].logprobs
    assert reply.choices[0].text == text and lp.tokens == list(text)
    ids = judge.backend.encode(text)
    want = judge.backend.token_logprobs([ids[:1]], [ids[1:]])[0]
    assert lp.token_logprobs[0] is None and lp.token_logprobs[1:] == list(want)
    # the top alternative of each position, from the full distribution (the fake's: the token or <other>)
    for tok_lp, top in zip(lp.token_logprobs[1:], lp.top_logprobs[1:]):
        (best,) = top.values()
        assert best == max(tok_lp, math.log1p(-math.exp(tok_lp)))


def test_completions_from_token_ids_generate_greedily_from_the_full_distribution(client, judge):
    ids = judge.backend.encode("abcabc")
    reply = client.completions.create(model="fake", prompt=ids, max_tokens=2, logprobs=2)
    choice = reply.choices[0]
    assert len(choice.logprobs.tokens) == 2 and choice.finish_reason == "length"
    for logprob, top in zip(choice.logprobs.token_logprobs, choice.logprobs.top_logprobs):
        assert logprob == max(top.values()) and len(top) == 2  # greedy: the most likely token each step
    assert reply.usage.completion_tokens == 2


def test_completions_batch_of_prompts_and_stop(client):
    reply = client.completions.create(model="fake", prompt=["2+2=", "x"], max_tokens=10, stop=["."])
    assert [c.text for c in reply.choices] == ["Four", "I cannot say"] and [c.index for c in reply.choices] == [0, 1]


def test_errors_reach_the_client_with_their_message(client):
    with pytest.raises(openai.NotFoundError, match="not served here"):
        client.completions.create(model="gpt-4o", prompt="hi")
    with pytest.raises(openai.UnprocessableEntityError, match="decodes greedily"):
        client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "x"}], temperature=1)
    bad = openai.OpenAI(base_url=client.base_url, api_key="not-the-key", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        bad.models.list()
    assert [m.id for m in client.models.list()] == ["fake"]
