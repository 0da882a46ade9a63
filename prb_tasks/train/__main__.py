"""``python -m prb_tasks.train`` (and ``accelerate launch -m prb_tasks.train``): ``prb train``."""

import sys

from prb_tasks.train.command import main

sys.exit(main())
