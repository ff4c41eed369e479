"""One place that keeps tool output small enough for the model's context.

Every tool passes its output through `cap_output`, so the truncation note looks the same
everywhere and the model always learns that something was left out and how much.
"""

from __future__ import annotations

DEFAULT_LIMIT = 30_000

# A cut that would land this close to a line end moves to the line end: half a line helps nobody.
_SNAP_FRACTION = 0.1


def _head_cut(text: str, size: int) -> int:
    nl = text.rfind("\n", 0, size)
    return nl + 1 if nl >= 0 and size - (nl + 1) <= size * _SNAP_FRACTION else size


def _tail_cut(text: str, size: int) -> int:
    start = len(text) - size
    nl = text.find("\n", start - 1)  # start - 1: a cut already at a line start stays put
    return nl + 1 if 0 <= nl and (nl + 1) - start <= size * _SNAP_FRACTION else start


def _then(head: str, note: str) -> str:
    # The note always starts on its own line so it cannot be mistaken for part of the output.
    return head + note if head.endswith("\n") or not head else head + "\n" + note


def cap_output(
    text: str,
    limit: int = DEFAULT_LIMIT,
    *,
    keep_tail: bool = False,
    total_length: int | None = None,
) -> str:
    """`text` when it fits in `limit` characters, else its head (and tail) with a visible note.

    keep_tail: keep the last third too; command output ends with what matters (errors, summaries).
    total_length: the real length when `text` already lost its middle (a command's output is
    collected with a bounded buffer), so the note still counts what the model did not see.
    """
    total = max(len(text), total_length or 0)
    if total <= limit:
        return text
    if keep_tail:
        head_size = limit * 2 // 3
        tail_size = limit - head_size
        head_end = _head_cut(text, head_size)
        tail_start = max(_tail_cut(text, tail_size), head_end)
        head, tail = text[:head_end], text[tail_start:]
        omitted = total - len(head) - len(tail)
        note = (
            f"[... truncated: {omitted:,} characters omitted; "
            f"showing the first {len(head):,} and last {len(tail):,} ...]"
        )
        return _then(head, note) + "\n" + tail
    head = text[: _head_cut(text, limit)]
    omitted = total - len(head)
    note = f"[... truncated: {omitted:,} characters omitted; showing the first {len(head):,} ...]"
    return _then(head, note)
