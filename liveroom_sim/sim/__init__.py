"""The simulation layer: the state machine of one episode (no Gymnasium inside).

The room, its crowd of viewers, hooks around replies and the crowd's reactions. Imports
spec, rewards, harness, llm and world; never Gymnasium, Ray or a trainer.
"""
