"""The rollout layer: many episodes played in GRPO groups on a serial, asyncio or Ray
backend, records written as JSON lines, and complete-agent latency. Imports the env
layer and below; never a trainer or the command line.
"""
