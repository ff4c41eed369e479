"""MCP client manager: the user's own tool servers, through the official `mcp` SDK.

Only `connection.py` imports the SDK, and only once a server is configured: importing it costs
about a second, which a user without MCP servers should never pay.
"""
