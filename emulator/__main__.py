"""``python -m emulator``: see ``emulator.cli``."""

import gc
import sys

from emulator.cli import main

code = main()
# The interpreter's final collection would walk the run's whole heap (about 1 s after a
# one-hour 1,000-node scenario) only to free memory the process is about to return anyway.
# Frozen objects are left out of it; output is already flushed by then.
gc.freeze()
sys.exit(code)
