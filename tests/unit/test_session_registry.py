"""The registry of open sessions (session_registry.py), and features that get it rather than the
service: a feature may change the open sessions only through the registry's methods."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from shiro_neko.config import Settings
from shiro_neko.session_registry import SessionRegistry
from shiro_neko.workspaces import Workspaces
from tests.support.scripted import make_session

FEATURES = Path(__file__).resolve().parents[2] / "server" / "features"


def test_closing_a_session_tells_the_listeners_once_and_the_view_is_read_only(tmp_path: Path) -> None:
    workspaces = Workspaces()
    workspaces.set_folders([tmp_path])
    registry = SessionRegistry(workspaces)
    session = make_session(tmp_path, settings=Settings(), session_id="0193ab2c-0000-7000-8000-000000000009")
    registry.add(session)
    closed: list[str] = []
    registry.on_close(closed.append)
    assert registry.view[session.id] is session and registry.workspace_of(session).root == tmp_path.resolve()
    with pytest.raises(TypeError):
        registry.view[session.id] = session  # type: ignore[index]
    registry.close(session.id)
    registry.close(session.id)  # already gone: nobody is told twice
    assert closed == [session.id] and registry.get(session.id) is None and session.id not in registry.view


@pytest.mark.parametrize("module", sorted(p.name for p in FEATURES.glob("*.py") if p.name != "__init__.py"))
def test_no_feature_holds_the_service(module: str) -> None:
    tree = ast.parse((FEATURES / module).read_text())
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert "service" not in {name.rsplit(".", 1)[-1] for name in imported}, f"features/{module} imports the service"
