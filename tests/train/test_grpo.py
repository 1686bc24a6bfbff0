"""GRPO training of the numpy avatar: updates move toward what paid, the run climbs from
the naive host toward the scripted one and its checkpoint beats the naive host on seeds
it never saw, files are written, checkpoints load, HSA training writes its spec."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

from liveroom_sim.policies.learned import LearnedAvatar, initial_parameters
from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.train.learner import GRPOLearner

TINY = "tests/fixtures/tiny/tiny-v0.yaml"


def _record(decisions, advantage=0.0):
    return {"decisions": [list(d) for d in decisions], "advantage": advantage}


def test_an_update_moves_probability_toward_choices_whose_exchange_paid_more():
    learner = GRPOLearner(initial_parameters(0.0), learning_rate=0.5)
    group = [_record([("mention", "price", 0, 3.5, "yes")] * 5), _record([("mention", "price", 1, 0.5, "no")] * 5)]
    stats = learner.update([group])
    logits = np.asarray(learner.parameters["mention"]["price"])
    assert logits[0] > logits[1] and stats["decisions_with_signal"] == 10
    assert learner.parameters["promo"]["price"] == [0.0, 0.0]  # no decision there: untouched


def test_a_row_whose_choices_all_paid_the_same_carries_no_signal():
    learner = GRPOLearner(initial_parameters(0.0))
    group = [_record([("hype", "stock", 0, 2.0, "no")]), _record([("hype", "stock", 1, 2.0, "yes")])]
    assert learner.update([group])["decisions_with_signal"] == 0
    assert learner.parameters["hype"]["stock"] == [0.0, 0.0]


def test_episode_credit_is_grpo_on_the_total():
    learner = GRPOLearner(initial_parameters(0.0), credit="episode")
    learner.update([[_record([("disclose", "other", 0, 0.0, "yes")], 1.0),
                     _record([("disclose", "other", 1, 0.0, "no")], -1.0)]])
    assert learner.parameters["disclose"]["other"][0] > learner.parameters["disclose"]["other"][1]
    with pytest.raises(ValueError, match="unknown credit"):
        GRPOLearner(credit="vibes")


def test_the_learner_counts_the_tool_names_seen_and_learns_whether_to_read_them():
    learner = GRPOLearner(initial_parameters(0.0))
    group = [_record([("tool", "price", 1, -1.0, "memorised:deals_now|")]),
             _record([("tool", "price", 0, 1.0, "read:deals_now|")]),
             _record([("tool", "price", 0, 1.0, "read:get_price_stock|product_id")])]
    learner.update([group])
    assert learner.parameters["tool_seen"]["price"] == {"deals_now|": 2, "get_price_stock|product_id": 1}
    read, memorise = learner.parameters["tool"]["price"]
    assert read > memorise


def test_a_memorising_host_calls_the_name_it_saw_most_whatever_the_harness_says_now():
    params = initial_parameters(0.0)
    params["tool"]["price"] = [-50.0, 50.0]
    params["tool_seen"]["price"] = {"get_price_stock|product_id": 40, "deals_now|": 3}
    host = LearnedAvatar(params, seed=0)
    fn = {"name": "check_price_and_stock", "parameters": {"properties": {"sku": {}}}}
    assert host.tool_for("price", fn) == ("get_price_stock", "product_id")
    params["tool"]["price"] = [50.0, -50.0]
    assert LearnedAvatar(params, seed=0).tool_for("price", fn) == ("check_price_and_stock", "sku")


@pytest.mark.slow
def test_the_default_run_climbs_half_way_to_the_scripted_host_and_beats_naive_on_held_out_seeds(tmp_path):
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "liveroom_sim.cli.main", "train", "--env", TINY, "--iterations", "12",
                           "--out", str(out)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    rows = list(csv.DictReader((out / "metrics.csv").open()))
    assert [int(r["iteration"]) for r in rows] == list(range(12))
    last = np.mean([float(r["mean_return"]) for r in rows[-3:]])
    naive, scripted = summary["naive_return"], summary["scripted_return"]
    assert last - naive > 0.5 * (scripted - naive)                     # at least half way from naive to scripted
    assert summary["held_out_return"] > summary["held_out_naive_return"]  # on seeds it never trained on
    assert summary["held_out_share"] == pytest.approx(
        (summary["held_out_return"] - summary["held_out_naive_return"])
        / (summary["held_out_scripted_return"] - summary["held_out_naive_return"]), abs=1e-3)
    assert (out / "learning_curve.svg").read_text().startswith("<svg")
    avatar = LearnedAvatar.load(out / "policy.json")
    assert avatar.parameters == json.loads((out / "policy.json").read_text())["parameters"]
    assert PolicySpec.parse(str(out)).kind == "learned"


def test_hsa_training_plays_the_env_under_augmentation(tmp_path):
    from liveroom_sim.spec import load_spec
    from liveroom_sim.train.grpo import train

    summary = train(TINY, tmp_path / "run", iterations=1, group_size=2, baseline_seeds=1, held_out=0,
                    progress=False, hsa=True)
    spec = load_spec(tmp_path / "run" / "hsa-spec.yaml").spec
    assert summary["hsa"] and spec.harness_augmentation.probability == 0.5
    records = [json.loads(line) for line in (tmp_path / "run" / "rollouts" / "iter-0000.jsonl").open()]
    assert {r["env"] for r in records} == {spec.id}


def test_a_bad_checkpoint_is_a_clear_error(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="not a LiveRoom learned-avatar checkpoint"):
        LearnedAvatar.load(path)
