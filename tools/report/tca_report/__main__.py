# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
import sys

from tca_report.cli import main

sys.exit(main())
