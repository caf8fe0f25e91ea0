// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-cg --spmv-alone P: no CG, the SpMV of one rank's block of a P-rank layout (1d rows or 2d
// blocks) on this process's CPU or GPU, with no communication: a GPU's share of a P-GPU run
// measured on one. For each --spmv and --cg-variant (the variant decides what the GPU's slab
// sum forms beside y) and each repetition: x = 1, the first call checked against the block's
// row sums, warm-up calls, then --spmv-calls calls timed in one span (GPU: CUDA events), the
// last of them checked too; with
// --kernel-times (GPU) also each kernel's own time per call.
#pragma once

#include "config.h"
#include "problem.h"
#include "tca_harness/report.h"
#include "tca_harness/table.h"

namespace tca_cg {

// 0 when every check held, 2 when a result differed from the row sums.
int run_spmv_alone(const Config& config, const Problem& problem, const tca_harness::Table& table,
                   tca_harness::Report& report);

}  // namespace tca_cg
