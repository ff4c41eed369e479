"""`shiro/approve`: the approval asked in the client's own UI (docs/protocol.md "Approvals").

Clients that set `capabilities.experimental.shiro.approvals: true` get this request instead of
`window/showMessageRequest`. pygls does not cancel a request whose awaiting task is cancelled, so
this sends the `$/cancelRequest` itself when the turn is aborted or the server stops.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import msgspec
from lsprotocol import types

from .. import protocol as wire
from ..agent.events import REASON_MAX, AlwaysIn, Approval, ApprovalRequest, Denied
from .pygls_overrides import forget_request

log = logging.getLogger(__name__)


def offers_client_approvals(experimental: Any) -> bool:
    raw = wire.plain(experimental)
    shiro = raw.get("shiro") if isinstance(raw, dict) else None
    return bool(isinstance(shiro, dict) and shiro.get("approvals"))


def approve_params(request: ApprovalRequest) -> wire.ApproveParams:
    preview = None
    if request.preview is not None:
        path, new_text = request.preview
        preview = wire.ApprovePreview(path=str(path), newText=new_text)
    return wire.ApproveParams(
        sessionId=request.session_id,
        turnId=request.turn_id,
        toolCallId=request.tool_call_id,
        toolName=request.tool_name,
        input=request.input,
        title=request.summary,
        preview=preview,
        diff=request.diff,
        diffLines=request.diff_lines,
        parentToolCallId=request.parent_tool_call_id,
    )


def decision_of(answer: Any) -> Approval:
    """`{decision, reason?}` from the client; anything else (null, an error, a typo) is a deny."""
    try:
        result = msgspec.convert(wire.plain(answer), wire.ApproveResult)
    except (msgspec.ValidationError, TypeError):
        return "deny"
    reason = (result.reason or "").strip()
    if result.decision == "deny" and reason:
        return Denied(reason[:REASON_MAX])
    if result.decision == "always" and result.scope in ("workspace", "user"):
        return AlwaysIn(result.scope)
    return result.decision


async def ask_in_client(protocol: Any, request: ApprovalRequest) -> Approval:
    msg_id = f"approve-{uuid.uuid4()}"
    params = wire.to_wire(approve_params(request))
    try:
        answer = await protocol.send_request_async(wire.APPROVE, params, msg_id=msg_id)
    except asyncio.CancelledError:
        forget_request(protocol, msg_id)
        try:
            protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        except Exception:  # the pipe may be gone already (server stopping)
            log.debug("could not cancel %s", msg_id, exc_info=True)
        raise
    except Exception as exc:  # the client answered with an error: not allowed
        log.warning("%s failed: %s", wire.APPROVE, exc)
        return "deny"
    return decision_of(answer)


async def ask_trust_in_client(protocol: Any, question: str) -> str | None:
    """The workspace trust question as `shiro/approve` with `toolName: "trust"` (docs/protocol.md
    "Workspace trust"): allow or always trusts, deny is "don't trust", and a null answer, an error
    or anything else is "not now" (nothing remembered, asked again next start)."""
    msg_id = f"trust-{uuid.uuid4()}"
    params = wire.to_wire(wire.ApproveParams(
        sessionId="", turnId="", toolCallId=msg_id, toolName=wire.TRUST_TOOL, input={"question": question}, title=question))
    try:
        answer = await protocol.send_request_async(wire.APPROVE, params, msg_id=msg_id)
    except asyncio.CancelledError:
        forget_request(protocol, msg_id)
        raise
    except Exception as exc:
        log.warning("%s (trust) failed: %s", wire.APPROVE, exc)
        return None
    raw = wire.plain(answer)
    decision = raw.get("decision") if isinstance(raw, dict) else None
    return {"allow": wire.TRUST, "always": wire.TRUST, "deny": wire.DONT_TRUST}.get(decision) if isinstance(decision, str) else None
