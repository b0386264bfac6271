"""`python -m rolebench.cli ...` (e.g. under `accelerate launch -m rolebench.cli recipe rocit ...`)."""

import sys

from rolebench.cli.main import main

sys.exit(main())
