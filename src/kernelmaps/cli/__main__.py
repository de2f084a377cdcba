"""``python -m kernelmaps.cli``: the ``kernelmaps`` command line."""

import sys

from . import main

sys.exit(main())
