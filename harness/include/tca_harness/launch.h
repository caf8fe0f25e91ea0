// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// How the job was started, and the MPI of the programs' MPI reference rows. A program that
// initializes MPI makes tca's automatic bootstrap choose MPI, so a program whose control runs
// through tca initializes MPI only where an MPI launcher started it, and skips its MPI rows
// elsewhere (under tca-run, torchrun, or without a launcher) with the reason given here.
#pragma once

#include <string>

namespace tca_harness {

// "" where an MPI launcher started this process (Open MPI's mpirun: OMPI_COMM_WORLD_SIZE, or
// PMIX_RANK with OMPI_* variables other than OMPI_MCA_*; a PMI launcher: PMI_SIZE; MVAPICH:
// MV2_COMM_WORLD_SIZE) or TCA_BOOTSTRAP=mpi asks for MPI; else why not. tca's own launch
// environment (TCA_RANK, TCA_ROOT) or another TCA_BOOTSTRAP wins over variables inherited from an
// outer launcher.
std::string mpi_launch_missing();

// This process's rank as its launcher tells it, before tcaInit: TCA_RANK (tca-run), RANK
// (torchrun), OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, MV2_COMM_WORLD_RANK, SLURM_PROCID; 0
// where none does. For choosing the one rank that prints --help and option errors.
int launch_rank();

// Call first in main, before tcaInit: initializes MPI (MPI_THREAD_SERIALIZED: tca may call MPI
// from its guard thread) where this build has MPI and mpi_launch_missing() is "". Returns ""
// once MPI runs, else why the MPI reference rows are skipped (a note for the output).
std::string start_reference_mpi(int* argc, char*** argv);
// Whether start_reference_mpi started MPI.
bool reference_mpi_running();
// MPI_Finalize where start_reference_mpi started MPI (after tcaFinalize); else nothing.
void finish_reference_mpi();

}  // namespace tca_harness
