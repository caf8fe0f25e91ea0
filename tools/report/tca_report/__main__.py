import sys

from tca_report.cli import main

sys.exit(main())
