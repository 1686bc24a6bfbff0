"""The command line's options: one-line errors, defaults in --help, --version, --policy."""

from __future__ import annotations

import json

import pytest

from liveroom_sim.cli.main import main, version
from liveroom_sim.policies.learned import initial_parameters

TINY = "tests/fixtures/tiny/tiny-v0.yaml"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own exits (--help, --version, bad options)
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


BAD_NUMBERS = [
    ("rollout", "--episodes", "4", "--group-size", "0", "--out", "x.jsonl"),
    ("rollout", "--episodes", "0", "--out", "x.jsonl"),
    ("rollout", "--episodes", "2", "--in-flight", "0", "--out", "x.jsonl"),
    ("rollout", "--episodes", "2", "--seed", "-3", "--out", "x.jsonl"),
    ("train", "--groups", "0", "--out", "run"),
    ("train", "--iterations", "0", "--out", "run"),
    ("train", "--group-size", "-1", "--out", "run"),
    ("train", "--learning-rate", "0", "--out", "run"),
    ("train", "--learning-rate", "nan", "--out", "run"),
    ("demo", "--seed", "-1"),
    ("demo", "--seed", "one"),
    ("demo", "--temperature", "9"),
    ("demo", "--max-tokens", "0"),
    ("latency", "--sessions", "0"),
    ("latency", "--concurrency", "0"),
    ("latency", "--turns", "0"),
    ("export-sft", "--episodes", "0", "--out", "x.jsonl"),
    ("export-sft", "--augment", "0", "--out", "x.jsonl"),
    ("report", "x.jsonl", "--max-episodes", "0"),
]


@pytest.mark.parametrize("argv", BAD_NUMBERS, ids=[" ".join(a) for a in BAD_NUMBERS])
def test_a_bad_number_is_one_line_naming_the_option(capsys, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    option = next(a for a in argv if a.startswith("--") and argv[argv.index(a) + 1] in
                  ("0", "-1", "-3", "one", "9", "nan"))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and option in err and "Traceback" not in err
    assert not (tmp_path / "run").exists() and not (tmp_path / "x.jsonl").exists()


def test_rollout_out_a_folder_is_refused_in_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "rollout", "--env", TINY, "--episodes", "2", "--out", str(tmp_path) + "/")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "is a folder" in err


def test_rollout_out_in_a_missing_folder_names_the_folder(capsys, tmp_path):
    code, _, err = run(capsys, "rollout", "--env", TINY, "--episodes", "2", "--out", str(tmp_path / "no" / "r.jsonl"))
    assert code == 2 and "does not exist" in err and str(tmp_path / "no") in err


def test_train_never_reports_a_checkpoint_it_did_not_write(capsys, tmp_path):
    from liveroom_sim.train.grpo import train

    with pytest.raises(ValueError, match="at least 1"):
        train(TINY, tmp_path / "run", iterations=0, progress=False)
    assert not (tmp_path / "run" / "policy.json").exists()


def test_version_and_defaults_in_help(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"liveroom {version()}" and version()[0].isdigit()
    code, out, _ = run(capsys, "rollout", "--help")
    text = " ".join(out.split())
    assert code == 0
    for shown in ("samples per group (one seed per group) (default: 1)", "(default: serial)",
                  "(default: 32)", "(default: std)"):
        assert shown in text
    code, out, _ = run(capsys, "train", "--help")
    assert "(default: 20)" in " ".join(out.split())


def test_unknown_env_and_missing_spec_file_are_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "demo", "--env", "LiveRoom-v9")
    assert code == 2 and "LiveRoom-v0" in err and len(err.strip().splitlines()) == 1  # did you mean
    missing = tmp_path / "nowhere" / "spec.yaml"  # named as missing, with the missing folder
    code, _, err = run(capsys, "demo", "--env", str(missing))
    assert code == 2 and len(err.strip().splitlines()) == 1 and f"the folder {str(tmp_path / 'nowhere')!r} is missing" in err


def _checkpoint(path):
    path.write_text(json.dumps({"kind": "liveroom-learned-avatar", "iteration": 0, "parameters": initial_parameters()}))
    return path


def test_a_checkpoint_is_a_policy_for_demo_rollout_and_export_sft(capsys, tmp_path):
    ckpt = _checkpoint(tmp_path / "policy.json")
    code, out, err = run(capsys, "demo", "--env", TINY, "--policy", str(ckpt), "--json")
    assert code == 0, err
    assert json.loads(out)["policy"] == f"checkpoint {ckpt.resolve()}"
    code, out, err = run(capsys, "demo", "--env", TINY, "--policy", str(tmp_path), "--json")  # the run folder
    assert code == 0, err
    code, _, err = run(capsys, "rollout", "--env", TINY, "--policy", str(ckpt), "--episodes", "1",
                       "--out", str(tmp_path / "r.jsonl"))
    assert code == 0, err
    code, out, err = run(capsys, "export-sft", "--env", TINY, "--policy", str(ckpt), "--episodes", "1",
                         "--augment", "1", "--out", str(tmp_path / "sft.jsonl"), "--min-reward", "-100")
    assert code == 0, err
    assert json.loads(out)["written"] > 0


def test_export_sft_teacher_is_a_deprecated_alias_of_policy(capsys, tmp_path):
    code, out, err = run(capsys, "export-sft", "--env", TINY, "--teacher", "naive", "--episodes", "1",
                         "--augment", "1", "--out", str(tmp_path / "sft.jsonl"))
    assert code == 0, err
    assert "--teacher is deprecated; use --policy" in err
    code, _, err = run(capsys, "export-sft", "--env", TINY, "--policy", "nope", "--out", str(tmp_path / "b.jsonl"))
    assert code == 2 and "unknown policy 'nope'" in err


# ---------------------------------------------------------------- issue 30: surfaces that tell the truth
def _value_options():
    from liveroom_sim.cli.main import build_parser

    parser = build_parser()
    stack = [("liveroom", parser)]
    while stack:
        name, p = stack.pop()
        for action in p._actions:
            if hasattr(action, "choices") and isinstance(action.choices, dict) and action.option_strings == []:
                stack += [(f"{name} {k}", sub) for k, sub in action.choices.items()]
            elif action.option_strings and action.nargs != 0 and action.dest != "help" and not action.required:
                yield name, action


def test_every_option_that_takes_a_value_says_its_default_in_help():
    missing = [f"{name} {a.option_strings[-1]}" for name, a in _value_options()
               if a.default is None and "default" not in (a.help or "")]
    assert not missing, f"no default shown: {missing}"


@pytest.mark.parametrize("command", [["eval", "--suite", "lsqa", "--limit", "1"],
                                     ["export-sft", "--env", TINY, "--episodes", "1", "--augment", "1"]])
def test_eval_and_export_sft_refuse_to_overwrite_like_rollout(capsys, tmp_path, command):
    out = tmp_path / ("eval-out" if command[0] == "eval" else "sft.jsonl")
    if command[0] == "eval":
        out.mkdir()
        (out / "results.json").write_text("precious")
        kept = out / "results.json"
    else:
        out.write_text("precious")
        kept = out
    code, _, err = run(capsys, *command, "--out", str(out))
    assert code == 2 and "--force" in err and kept.read_text() == "precious"
    assert err.count("\n") == 1 and err.startswith(f"liveroom {command[0]}: error: ")
    code, _, err = run(capsys, *command, "--out", str(out), "--force")
    assert code == 0 and kept.read_text() != "precious"


def test_a_group_size_that_does_not_divide_the_episodes_says_what_it_plays(capsys, tmp_path):
    code, out, err = run(capsys, "rollout", "--env", TINY, "--policy", "naive", "--episodes", "5", "--group-size", "4",
                         "--out", str(tmp_path / "r.jsonl"))
    assert code == 0 and "playing 8 episodes" in err and "2 groups of 4" in err
    summary = json.loads(out)
    assert summary["episodes"] == 8 and summary["workers"] == 1 and summary["provenance"]["spec_id"] == "Tiny-v0"


def test_errors_share_one_prefix(capsys, tmp_path):
    code, _, err = run(capsys, "audit", "--seeds", "0")
    assert code == 2 and err.startswith("liveroom audit: error: ")
    bad = tmp_path / "cases.jsonl"
    bad.write_text("{not json\n")
    code, _, err = run(capsys, "rewards", "check", str(bad))
    assert code == 2 and err.startswith("liveroom rewards: error: ") and err.count("\n") == 1


def test_demo_json_returns_have_their_total(capsys):
    code, out, _ = run(capsys, "demo", "--env", TINY, "--json")
    summary = json.loads(out)
    assert code == 0 and summary["returns"]["total"] == summary["return"]
    parts = sum(v * summary["weights"][k] for k, v in summary["returns"].items() if k != "total")
    assert summary["gated_turns"] or abs(parts - summary["return"]) < 1e-3


@pytest.mark.parametrize("command", [["demo", "--env", TINY, "--policy", "openai", "--model", "m", "--brief"],
                                     ["latency", "--env", TINY, "--sessions", "1", "--turns", "1", "--model", "m"]])
def test_no_zero_filled_summary_before_an_endpoint_error(capsys, command, monkeypatch):
    from liveroom_sim.testing import FaultPlan, OpenAICompatServer, scripted_responder

    monkeypatch.setenv("LIVEROOM_PATIENCE_S", "0")
    with OpenAICompatServer(scripted_responder(["hi"]), faults=FaultPlan(rates={"500": 1.0})) as srv:
        code, out, err = run(capsys, *command, "--base-url", srv.base_url)
    assert code == 1 and "HTTP 500" in err
    assert "GMV 0.00" not in out and "n=0" not in out and "0 errors" not in out, out
