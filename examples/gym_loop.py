"""Run one episode of a LiveRoom env with the scripted avatar and print its return.

    python examples/gym_loop.py --env LiveRoom-zh-v0 --seed 3
"""

import argparse

import gymnasium as gym

import liveroom_sim  # noqa: F401  (registers the LiveRoom envs)
from liveroom_sim.policies import ScriptedAvatar

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--env", default="LiveRoom-v0", help="a registered env id")
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()

env = gym.make(args.env)
policy = ScriptedAvatar()  # any callable (observation, info) -> str works here, e.g. an LLM
obs, info = env.reset(seed=args.seed)
returns = dict.fromkeys(info["reward_breakdown"], 0.0)
steps, done = 0, False
while not done:
    obs, reward, terminated, truncated, info = env.step(policy(obs, info))
    for component, value in info["reward_breakdown"].items():
        returns[component] += value
    steps, done = steps + 1, terminated or truncated

metrics = info["metrics"]
print(f"{args.env} seed {args.seed}: {steps} steps, {'terminated' if terminated else 'truncated'}")
for component, value in returns.items():
    print(f"  {component:<11} {value:+9.2f}")
print(f"answered {metrics['questions_answered']}, ignored {metrics['questions_ignored']}, "
      f"purchases {metrics['purchases']}, GMV {metrics['gmv']:.2f}")
env.close()
