"""The LLM judge tier, as the TaoLive report runs it: up to three models vote on each
reply's compliance, factuality and engagement, beside the rule-based reward.

- :mod:`~liveroom_sim.rewards.judge.request`: what a judge is asked about a reply (the
  context as of now, the reply) and what the rules said of it;
- :mod:`~liveroom_sim.rewards.judge.vote`: reading an answer, the majority of up to three,
  and the policy that settles a disagreement with the rules (``stricter`` by default);
- :mod:`~liveroom_sim.rewards.judge.service`: the calls, asynchronous, batched and cached,
  with failures counted and the rules' verdict kept;
- :mod:`~liveroom_sim.rewards.judge.apply`: the judge as a reward model sees it, deferred
  (rollouts: asked at the step, applied to the record) or with its votes in;
- :mod:`~liveroom_sim.rewards.judge.engagement`: the engagement-only judge a spec's
  ``reward.judge`` sets (synchronous; kept for specs that use it).

See ``docs/judge.md``.
"""

from liveroom_sim.rewards.judge.engagement import LLMJudge  # noqa: F401 (public here)
from liveroom_sim.rewards.judge.vote import JUDGE_FINDING, POLICIES  # noqa: F401 (public here)
