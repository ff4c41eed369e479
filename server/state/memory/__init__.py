"""Project memory on disk: one-line notes per workspace, kept across sessions.

store.py: the file, its lock and every change (remember, recall, forget, the prompt block);
compaction.py: `/memory`, the model's merge of unused notes, through the store's public `edit`.
The model's tools are agent/tools/memory_tools.py; the entry itself, model/memory.py.
"""
