"""Data shared by `agent/`, `state/`, `protocol.py` and the terminal client: transcript messages
and parts, the todo item, the memory entry, and the one walk of a workspace's files. It imports
nothing of ours, so every layer may import it."""
