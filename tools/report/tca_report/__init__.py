# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca-report: figures and a page from the JSON reports of tca's programs."""
