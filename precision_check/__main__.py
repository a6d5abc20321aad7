"""`python -m precision_check MODULE:FACTORY ...`"""

import sys

from precision_check.command import main

sys.exit(main())
