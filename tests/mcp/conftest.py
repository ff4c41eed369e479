"""The end-to-end fixtures of tests/lsp (fake provider, workspace) for the MCP tests."""

from tests.lsp.conftest import fake, workspace  # noqa: F401 - pytest fixtures
