"""The simulation layer: the state machine of one episode (no Gymnasium inside).

The room's turn flow (``room.py``) over state with one owner each: the crowd of viewers
and their chat, the episode ledger (returns, settlement, counters), the chat view the
policy is shown (``chat/``) and the stage; hooks around replies and the crowd's
reactions. Imports spec, rewards, harness, llm and world; never Gymnasium, Ray or a
trainer.
"""
