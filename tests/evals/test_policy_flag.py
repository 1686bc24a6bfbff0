"""``--policy package.module:factory`` (or ``file.py:factory``): a user's own policy on
``eval``, ``rollout``, ``demo`` and ``export-sft``, built once per episode or case."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from liveroom_sim.cli.main import main
from liveroom_sim.rollout.policy_spec import PolicySpec

TINY = "tests/fixtures/tiny/tiny-v0.yaml"

#: A policy module as a user writes it: the reference host, counting how often the
#: factory is called and with which seeds.
MODULE = textwrap.dedent('''
    from liveroom_sim.policies.scripted import ScriptedAvatar

    BUILT = []

    def make(seed=0):
        BUILT.append(seed)
        return ScriptedAvatar()

    def quiet():
        return lambda observation, info: "hello everyone"

    NOT_A_FACTORY = 3

    def broken():
        raise RuntimeError("no weights here")
''')


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "my_policies.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("my_policies", None)
    yield tmp_path / "my_policies.py"
    sys.modules.pop("my_policies", None)


def test_an_import_path_and_a_file_path_name_the_same_factory(user_module):
    by_module = PolicySpec.parse("my_policies:make")
    by_file = PolicySpec.parse(f"{user_module}:quiet")
    assert (by_module.kind, by_module.factory) == ("python", "my_policies:make")
    assert by_file.build(3)("obs", {}) == "hello everyone"
    assert by_module.describe() == {"kind": "python", "factory": "my_policies:make"}


def test_eval_builds_the_policy_once_per_case_with_its_seed(user_module, tmp_path, capsys):
    import my_policies

    out = tmp_path / "eval"
    assert main(["eval", "--policy", "my_policies:make", "--suite", "lsqa", "--limit", "3", "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["summary"]["settings"]["policy"] == {"kind": "python", "factory": "my_policies:make"}
    # One trial build when the command starts, then one per case, each with the case's seed.
    assert len(my_policies.BUILT) == 1 + 3 and len(set(my_policies.BUILT[1:])) == 3
    scripted = tmp_path / "scripted"
    assert main(["eval", "--policy", "scripted", "--suite", "lsqa", "--limit", "3", "--out", str(scripted)]) == 0
    verdicts = lambda d: [c["samples"][0]["verdict"]["pass"] for c in json.loads((d / "results.json").read_text())["cases"]]  # noqa: E731
    assert verdicts(out) == verdicts(scripted)  # the same host, as the user's own policy


def test_demo_rollout_and_export_sft_take_a_file_factory(user_module, tmp_path, capsys):
    spec = f"{user_module}:make"
    assert main(["demo", "--env", TINY, "--policy", spec, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["policy"] == f"factory {spec}"
    assert main(["rollout", "--env", TINY, "--policy", spec, "--episodes", "2", "--out", str(tmp_path / "r.jsonl")]) == 0
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) >= 2
    assert main(["export-sft", "--env", TINY, "--policy", spec, "--episodes", "1",
                 "--out", str(tmp_path / "sft.jsonl")]) == 0
    assert (tmp_path / "sft.jsonl").stat().st_size > 0


@pytest.mark.parametrize("name, message", [
    ("my_policies:mak", "has no 'mak' (did you mean 'make'?)"),
    ("no_such_package.policies:make", "no module 'no_such_package'"),
    ("{dir}/missing.py:make", "does not exist"),
    ("my_policies:NOT_A_FACTORY", "is a int, not a callable"),
    ("my_policies:broken", "the factory failed: RuntimeError: no weights here"),
    ("my_policies:", "unknown policy"),
])
@pytest.mark.parametrize("command", ["eval", "demo", "rollout", "export-sft"])
def test_a_bad_factory_is_a_one_line_error(user_module, tmp_path, capsys, name, message, command):
    out = {"eval": ["--out", str(tmp_path / "e")], "demo": ["--env", TINY],
           "rollout": ["--env", TINY, "--episodes", "1", "--out", str(tmp_path / "r.jsonl")],
           "export-sft": ["--env", TINY, "--episodes", "1", "--out", str(tmp_path / "s.jsonl")]}[command]
    code = main([command, "--policy", name.format(dir=tmp_path), *out])
    err = capsys.readouterr().err
    assert code != 0 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
