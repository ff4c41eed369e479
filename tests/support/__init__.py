"""Test helpers, one copy each (docs/architecture.md, "Writing a test"):

- the `fake` / `workspace` fixtures: tests/conftest.py (over the HTTP fake in tests/fake_provider.py);
- `scripted.py`: a provider answering from a list, and a session over a temp folder (loop tests);
- `builders.py`: transcript messages and parts, and the readers tests assert with;
- `service.py`: a `ShiroService` on a bridge without LSP (service and feature tests).
"""
