"""MCP client manager: the user's own tool servers, through the official `mcp` SDK.

Only `connection.py` imports the SDK, and only once a server is configured: importing it costs
about a second (shared notes, section 2), which a user without MCP servers should never pay.
"""
