"""``python -m rsp`` runs the command line."""

import sys

from rsp.cli import main

sys.exit(main())
