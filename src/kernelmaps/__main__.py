"""``python -m kernelmaps``: the ``kernelmaps`` command line."""

import sys

from .cli import main

sys.exit(main())
