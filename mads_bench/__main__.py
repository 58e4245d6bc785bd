"""``python -m mads_bench`` is the same as the ``mads-bench`` console script."""

import sys

from mads_bench.cli import main

sys.exit(main())
