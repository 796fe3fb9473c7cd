"""`python -m lmgrade.cli`: the `lmgrade` command."""

import sys

from . import main

sys.exit(main())
