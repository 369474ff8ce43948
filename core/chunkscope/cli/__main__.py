"""``python -m chunkscope.cli``: the ``chunkscope`` command."""

import sys

from chunkscope.cli import main

sys.exit(main())
