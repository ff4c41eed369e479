"""The Agent Client Protocol front end (`shiro acp`): Zed, JetBrains and other ACP editors.

A second front end beside the LSP package, over the same service, features, agent and state. The
official `agent-client-protocol` package does the framing and the schema; this package maps ACP's
sessions, prompts, updates, permissions and file system onto the service's seams. It never imports
the LSP package, and of the agent only agent/events.py (the EventSink it implements); the rest it
takes from the core, server/service.py (tests/unit/test_acp_layering.py checks both).
"""
