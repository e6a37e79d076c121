"""What the server refuses, and that it stays up after: bad bodies, unknown fields and metrics, files, other models,
oversized input, sampling; the API key on every endpoint but /health; public hosts without a key."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from serving import call, get, post, running

from localjudge.cli import main
from localjudge.errors import ConfigError
from localjudge.serve import ServeOptions, is_loopback
from localjudge.testing import fake_judge

KEY = "s3cret-key-for-tests"
CASE = {"input": "2+2?", "actual_output": "4", "expected_output": "4"}


@pytest.fixture(scope="module")
def server():
    with running(fake_judge(lambda p: {"4": 0.9}), max_body_bytes=4000, max_items=5) as s:
        yield s


@pytest.mark.parametrize(
    ("path", "body", "status", "names"),
    [
        ("/v1/evaluate", b"{not json", 400, "not valid JSON"),
        ("/v1/evaluate", {"cases": [CASE], "metrics": ["correctness"], "colour": 1}, 422, "colour: unknown field"),
        ("/v1/evaluate", {"cases": [CASE], "metrics": ["correctnes"]}, 422, "did you mean 'correctness'"),
        ("/v1/evaluate", {"cases": [CASE], "metrics": ["/etc/passwd"]}, 422, "names a file; this server reads none"),
        ("/v1/evaluate", {"cases": [CASE], "metrics": ["metric.yaml"]}, 422, "names a file"),
        ("/v1/evaluate", {"cases": [], "metrics": ["correctness"]}, 422, "cases"),
        ("/v1/evaluate", {"cases": [CASE, CASE], "metrics": ["correctness"]}, 200, ""),  # both numbered case-N
        ("/v1/evaluate", {"cases": [{**CASE, "id": 1}, {"id": "1"}], "metrics": ["fluency"]}, 422, "ids repeated"),
        ("/v1/evaluate", {"cases": [{"input": 5}], "metrics": ["fluency"]}, 422, "'input' must be a string"),
        ("/v1/evaluate", {"cases": [CASE] * 6, "metrics": ["fluency"]}, 413, "at most 5"),
        ("/v1/evaluate", {"cases": [CASE], "metrics": [{"name": "x", "low": 3}]}, 422, "metrics.0"),
        ("/v1/evaluate", {"cases": [CASE], "metrics": ["fluency", "fluency"]}, 422, "given twice"),
        ("/v1/evaluate", {"cases": [{"input": "x" * 5000}], "metrics": ["fluency"]}, 413, "at most 4000"),
        ("/v1/score", {"prompts": ["Score:"], "low": 3, "high": 1}, 422, "invalid score scale"),
        ("/v1/score", {"prompts": ["Score:"], "low": 1, "high": 5, "labels": ["A", "B"]}, 422, "not both"),
        ("/v1/score", {"prompts": [" "], "low": 1, "high": 5}, 422, "prompt is empty"),
        ("/v1/completions", {"model": "gpt-4o", "prompt": "hi"}, 404, "not served here"),
        ("/v1/completions", {"prompt": "hi", "temperature": 0.7}, 422, "decodes greedily"),
        ("/v1/completions", {"prompt": "hi", "max_tokens": 100000}, 422, "over this server's limit"),
        ("/v1/completions", {"prompt": [5, 10**9]}, 422, "outside the vocabulary"),
        ("/v1/completions", {"prompt": "hi", "logprobs": 50}, 422, "logprobs"),
        ("/v1/chat/completions", {"messages": [{"role": "tool", "content": "x"}]}, 422, "messages.0.role"),
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "stream": True}, 422, "stream"),
        ("/v1/nowhere", {}, 404, "/v1/nowhere"),
    ],
)
def test_bad_input_is_a_4xx_naming_the_problem_and_the_server_stays_up(server, path, body, status, names):
    answer = call(server.url, "POST", path, raw=body) if isinstance(body, bytes) else post(server.url, path, body)
    assert answer.status == status, answer.text
    if status != 200:
        assert names in answer.json()["error"]["message"]
    assert get(server.url, "/health").status == 200


def test_a_lying_content_length_is_still_cut_at_the_limit(server):
    # chunked: no Content-Length to refuse up front, so the limit is counted as the body arrives
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(server.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.request("POST", "/v1/score", body=iter([b'{"prompts": ["', b"x" * 5000, b'"]}']), encode_chunked=True)
    answer = conn.getresponse()
    assert answer.status == 413
    conn.close()


def test_with_a_key_every_endpoint_but_health_needs_it():
    with running(fake_judge(lambda p: {"4": 0.9}), api_key=KEY) as s:
        routes = [
            ("GET", "/v1/models", None),
            ("GET", "/tokenizer_info", None),
            ("POST", "/v1/evaluate", {"cases": [CASE], "metrics": ["correctness"]}),
            ("POST", "/v1/score", {"prompts": ["Score:"], "low": 1, "high": 5}),
            ("POST", "/v1/likelihood", {"items": [{"prompt": "a", "continuation": " b"}]}),
            ("POST", "/v1/completions", {"prompt": "hi", "max_tokens": 1}),
            ("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
            ("POST", "/tokenize", {"prompt": "hi"}),
        ]
        for method, path, body in routes:
            for key in (None, "wrong-key-of-length", KEY[:-1], KEY + "x"):
                answer = call(s.url, method, path, body, key=key)
                assert answer.status == 401, (path, key, answer.text)
                assert answer.json()["error"]["type"] == "authentication_error"
            assert call(s.url, method, path, body, key=KEY).status == 200, path
        assert get(s.url, "/health").status == 200


def test_a_public_host_needs_a_key():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("::") and not is_loopback("192.168.1.4")
    for host in ("0.0.0.0", "::", "10.0.0.7", "judge.example.org"):
        with pytest.raises(ConfigError, match="--api-key"):
            ServeOptions(host=host)
    assert ServeOptions(host="0.0.0.0", api_key=KEY).api_key == KEY
    with pytest.raises(ConfigError, match="too short") as refused:
        ServeOptions(host="0.0.0.0", api_key="short")
    assert "short" not in str(refused.value).replace("too short", "")  # the key is never quoted


def test_the_command_refuses_a_public_host_without_a_key_before_loading(no_load):
    result = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--port", "0"])
    assert result.exit_code == 2 and "needs --api-key" in result.stderr, result.output
    result = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0"], env={"LOCALJUDGE_API_KEY": "tiny"})
    assert result.exit_code == 2 and "--api-key is too short" in result.stderr and "tiny" not in result.stderr


def test_the_command_lists_its_options():
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0
    for flag in ("--host", "--port", "--api-key", "--max-queue", "--judge", "--token-budget", "--batch-invariant"):
        assert flag in result.stdout
