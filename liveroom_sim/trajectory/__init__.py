"""What trainers need from an episode beyond the env's contract.

- :mod:`liveroom_sim.trajectory.steps`: each recorded step's segment label (tool turn,
  reply, hook retry) and the policy's token log.
- :mod:`liveroom_sim.trajectory.segments`: stream segments, a rollout of K turns from a
  seeded point of the stream, for trainers that cap a rollout's turns.
"""

from liveroom_sim.trajectory.segments import SegmentEnv, fast_forward, segment_prompt, segment_start, settle_early_end
from liveroom_sim.trajectory.steps import SEGMENTS, policy_tokens, segment_of, turn_entry

__all__ = ["SEGMENTS", "SegmentEnv", "fast_forward", "policy_tokens", "segment_of", "segment_prompt",
           "segment_start", "settle_early_end", "turn_entry"]
