"""The two ways a command fails (docs/protocol.md): malformed arguments, or a well-formed request that
is refused. Both carry a message a person can act on; the LSP layer maps them to JSON-RPC codes.
"""


class InvalidArguments(ValueError):
    """Maps to InvalidParams (-32602)."""


class Refused(Exception):
    """Maps to RequestFailed (-32803)."""
