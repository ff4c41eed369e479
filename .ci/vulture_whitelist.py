# Names vulture reports as unused that are used by name from outside our code (.ci/run runs vulture
# with this file; settings in pyproject.toml [tool.vulture]). Each entry: who uses it. Dead code
# does not go here: delete it. Not executed; `_` stands for any object.
# ruff: noqa

# ACP: the acp library calls the Agent's methods by name; its session methods take this parameter.
_.on_connect, _.load_session, _.list_sessions, _.set_session_mode, additional_directories  # server/acp/agent.py
_.field_meta  # ACP's `_meta` on a pydantic update, read by the editor (server/acp/updates.py)
Client  # a TYPE_CHECKING import used in a quoted annotation (server/acp/host.py)

# prompt_toolkit calls its History and Completer methods, and reads the Buffer's attributes.
_.load_history_strings, _.store_string, _.get_completions, complete_event  # clients/terminal/interactive.py
_.cursor_position, _.on_text_changed  # clients/terminal/interactive.py
_._watch_task  # the reference that keeps the link watcher's task from being collected (clients/terminal/connection.py)

# pygls reads these.
_.CODE, _.MESSAGE  # JsonRpcException's error code and message (server/commands/__init__.py)
_.start_tcp  # pygls's own, overridden to refuse an unauthenticated TCP server (server/lsp/server.py)
_._stop_event  # the flag pygls's reader loop stops on (server/lsp/pygls_overrides.py)
_.__class__  # pygls's Workspace made a CappedWorkspace (server/lsp/open_documents.py)

# Python's descriptor protocol passes it (server/agent/session.py).
owner

# A msgspec field set from the provider's reasoning item and kept in the record (`encryptedContent`),
# read only by msgspec when the transcript is encoded.
_.encrypted_content  # server/model/transcript.py, set in server/agent/provider/wire_responses.py

# The spec beside the code it describes, which the tests hold that code to.
LADDER_STEPS  # server/agent/prune.py: the pruning ladder's rungs (tests/unit/test_prune*.py)
WAITING_KEYS  # server/project_settings.py: the keys an untrusted project waits for (tests/unit/test_project_trust.py)
encode_messages  # server/model/transcript.py: the JSON the token estimate counts (tests/unit/test_estimate_tokens.py)
is_safe  # server/model/visible_text.py: what visible() guarantees (tests/unit/test_safe_text.py)

# A wire field only the clients read (the contract's `shiro.setCredentials` answer).
_.ok  # server/protocol.py SetCredentialsResult.ok (tests/lsp/test_models.py reads it)
