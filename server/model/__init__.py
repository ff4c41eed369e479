"""Data shared by `agent/`, `state/` and `protocol.py`: transcript messages and parts, the todo
item, the memory entry. No imports of our own packages, so every layer may import it."""
