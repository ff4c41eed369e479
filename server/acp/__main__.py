"""`python -m shiro_neko.acp`: what `shiro acp` runs."""

import sys

from .main import main

sys.exit(main())
