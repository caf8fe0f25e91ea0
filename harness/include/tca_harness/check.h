// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Failure handling for programs built on tca: one message format and a non-zero end.
#pragma once

#include <tca/tca.h>

#include <string>

namespace tca_harness {

// The name that starts every failure message ("tca-pingpong: rank 0: ...").
void set_program_name(const std::string& name);
const std::string& program_name();

// Prints "<program>: rank <r>: <message>" to stderr and ends the whole job: MPI_Abort while MPI
// runs (a peer may be blocked in a wait), else exit(1), which a launcher without MPI (tca-run,
// torchrun) answers by ending the other ranks.
[[noreturn]] void die(const std::string& message);

// "<call>: <tca's last error message>" (or the result's name where there is no message).
std::string describe_failure(tcaResult result, const char* call);

// die(describe_failure(...)) unless result is TCA_SUCCESS.
void check(tcaResult result, const char* call);

}  // namespace tca_harness
