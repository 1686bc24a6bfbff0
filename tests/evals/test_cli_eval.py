"""``liveroom eval`` and ``liveroom eval-suites`` from the command line."""

from __future__ import annotations

import json

import pytest

from liveroom_sim.cli.main import main


def test_eval_prints_the_table_and_writes_results_and_summary(tmp_path, capsys):
    assert main(["eval", "--suite", "lsqa,follow", "--limit", "4", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| suite | cases | acc | eff | pass@1 | loose@1 | pass^k |" in out and "Errored cases: 0" in out
    results = json.loads((tmp_path / "results.json").read_text())
    assert len(results["cases"]) == 8
    case = results["cases"][0]
    assert {"inputs", "samples"} <= set(case) and {"accuracy", "effectiveness", "reasons"} <= set(case["samples"][0]["verdict"])
    assert "## By ask kind" in (tmp_path / "summary.md").read_text()


@pytest.mark.parametrize("argv, message", [
    (["eval", "--suite", "lsqq"], "unknown suite 'lsqq'"),
    (["eval", "--policy", "gpt"], "unknown policy 'gpt'"),
    (["eval", "--policy", "openai"], "needs --model"),
])
def test_bad_options_are_one_line_errors(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) if argv[2].startswith("lsq") else _nothing():
        code = main([*argv, "--out", str(tmp_path)])
        assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_an_unreachable_endpoint_is_named_before_the_run(tmp_path, capsys):
    code = main(["eval", "--policy", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                 "--out", str(tmp_path)])
    assert code == 1 and "cannot reach the endpoint" in capsys.readouterr().err


def test_eval_suites_generates_a_small_suite_that_eval_then_runs(tmp_path, capsys):
    assert main(["eval-suites", "--suite", "lsqa", "--lsqa", "20", "--out", str(tmp_path / "s")]) == 0
    assert "lsqa: 20 cases" in capsys.readouterr().out
    first = (tmp_path / "s" / "lsqa.jsonl.gz").read_bytes()
    main(["eval-suites", "--suite", "lsqa", "--lsqa", "20", "--out", str(tmp_path / "s")])
    assert (tmp_path / "s" / "lsqa.jsonl.gz").read_bytes() == first  # deterministic, byte for byte
    assert main(["eval", "--suite", "lsqa", "--suites-dir", str(tmp_path / "s"), "--out", str(tmp_path / "o")]) == 0


def test_eval_runs_a_checkpoint(tmp_path, capsys):
    from liveroom_sim.policies.learned import LearnedAvatar

    (tmp_path / "run").mkdir()
    LearnedAvatar().save(tmp_path / "run" / "policy.json")
    assert main(["eval", "--suite", "lsqa", "--limit", "3", "--policy", str(tmp_path / "run"),
                 "--out", str(tmp_path / "o")]) == 0
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["summary"]["settings"]["policy"]["kind"] == "learned" and len(results["cases"]) == 3
