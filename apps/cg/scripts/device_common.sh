# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# What the device scripts of tca-cg share (sourced, not run): the summary line helper and the
# machine facts at the top of each summary. The caller sets SUMMARY first.

# note TEXT...: a line on the terminal and in $SUMMARY.
note() { echo "$*" | tee -a "$SUMMARY"; }

# The date, the GPU, the host's cores and the MPI, into $SUMMARY.
record_machine() {
  {
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
    nproc
    mpirun --version | head -1
  } >> "$SUMMARY" 2>&1
}
