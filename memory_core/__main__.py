import sys

from memory_core.cli import main

sys.exit(main())
