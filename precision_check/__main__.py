"""`python -m precision_check MODULE:FACTORY ...`"""

import sys

from precision_check.cli import main

sys.exit(main())
