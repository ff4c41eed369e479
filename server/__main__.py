from .trace import mark

mark("server-main")  # the interpreter is up (bench/oneshot.py)
from .cli import main  # noqa: E402

main()
