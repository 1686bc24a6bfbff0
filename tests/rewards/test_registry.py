"""The reward components as declared once (``rewards.registry``): the reward model scores
exactly those a spec computes, withholds the positive value of the ``served`` ones from a
reply that serves nobody, and each one's docstring says what earns and loses."""

from __future__ import annotations

from liveroom_sim.rewards.cases import RewardCase, build_context
from liveroom_sim.rewards.model import RewardModel
from liveroom_sim.rewards.registry import COMPONENTS
from liveroom_sim.spec import RewardConfig

PITCH_WHILE_WAITING = {"id": "t", "env": "LiveRoom-v0", "pending": 3,
                       "reply": "@everyone Dewveil Niacinamide Glow Serum is $24.99! #ad"}


def test_a_spec_without_weights_computes_every_required_component_at_its_default_weight():
    model = RewardModel(RewardConfig())
    required = [c for c in COMPONENTS if not c.optional]
    assert model.components == tuple(c.name for c in required)
    assert model.weights == {c.name: c.weight for c in required}


def test_an_optional_component_runs_only_where_a_spec_weights_it():
    optional = [c.name for c in COMPONENTS if c.optional]
    plain = RewardModel(RewardConfig()).score(build_context(RewardCase.model_validate(PITCH_WHILE_WAITING)))
    weighted = RewardModel(RewardConfig(weights=dict.fromkeys(optional, 1.0)))
    assert optional and not set(optional) & set(plain.scores)
    assert set(optional) <= set(weighted.score(build_context(RewardCase.model_validate(PITCH_WHILE_WAITING))).scores)


def test_a_reply_that_serves_nobody_earns_no_served_component():
    # A true price with its disclosure, pitched while three viewers wait: the served
    # components would pay for it, but it serves no need.
    bd = RewardModel(RewardConfig()).score(build_context(RewardCase.model_validate(PITCH_WHILE_WAITING)))
    served = [c.name for c in COMPONENTS if c.served and c.name in bd.scores]
    assert served and all(bd.scores[n].value <= 0 for n in served)
    assert any("credit withheld" in r for n in served for r in bd.scores[n].reasons)


def test_every_component_documents_its_range_and_what_it_earns():
    for c in COMPONENTS:
        assert "Range" in c.doc or "0 for the turn itself" in c.doc, c.name
