import os

from .startup.trace import mark

mark("server-main")  # the interpreter is up (bench/oneshot.py)
if os.environ.pop("SHIRO_PRELOAD_SDK", None) == "1":
    # `shiro -p` / interactive: a turn follows for sure, so the SDK import (the largest one, and
    # needed only by the first request) starts now, in a thread, and overlaps this process's
    # own imports and the initialize round trips instead of following them.
    from .startup import import_gc

    import_gc.hold()  # no full GC pass during this import either; the preload thread releases it
    from .agent.provider.openai_provider import preload_sdk

    preload_sdk(then=import_gc.release)
from .cli import main  # noqa: E402

main()
