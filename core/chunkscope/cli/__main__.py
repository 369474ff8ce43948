import sys

from chunkscope.cli import main

sys.exit(main())
