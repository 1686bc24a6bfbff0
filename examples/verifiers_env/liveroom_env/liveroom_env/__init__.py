"""liveroom-env: LiveRoom's streams as a verifiers v1 environment (taskset, env, harness).

``vf-eval liveroom-env -m <model> --client.base-url <url>`` plays LiveRoom-v0 streams: the
room is the user, its harness's tools are the tools, its reward model is the reward. The
classes live in LiveRoom (:mod:`liveroom_sim.integrations.verifiers_env`); this package
gives them the top-level module name verifiers resolves plugin ids by.
"""

from liveroom_sim.integrations.verifiers import load_environment
from liveroom_sim.integrations.verifiers_env import LiveRoomEnv, LiveRoomHarness, LiveRoomTaskset

__all__ = ["LiveRoomEnv", "LiveRoomHarness", "LiveRoomTaskset", "load_environment"]
