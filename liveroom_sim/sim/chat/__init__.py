"""The chat the policy is shown: the history of exchanges (``history.py``), the system
prompt and tool schemas as of now (``prompts.py``), and the view that renders messages,
observation and transcript from them (``view.py``)."""

from liveroom_sim.sim.chat.history import Block, flatten_message
from liveroom_sim.sim.chat.view import ChatView, room_update

__all__ = ["Block", "ChatView", "flatten_message", "room_update"]
