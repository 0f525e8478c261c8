"""``python -m emulator``: see ``emulator.cli``."""

import sys

from emulator.cli import main

sys.exit(main())
