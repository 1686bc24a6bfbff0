"""The reward layer: each reward component a pure function of one turn's context.

Text analysis of a reply, the components, the model that weights them, the optional
LLM judge and golden reward cases. Imports spec, harness, llm and world; never the room.
"""
