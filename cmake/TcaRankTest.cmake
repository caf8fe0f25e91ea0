# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# How multi-rank tests are launched; included from the top level so that tests/, bench/,
# examples/ and apps/ share it. tca_rank_test starts a program's ranks the way this build's
# users would: mpirun where tca has MPI, else tca-run (tca's own launcher, the tcp bootstrap).
# tca_run_test always uses tca-run, tca_mpi_test always mpirun.

set(TCA_OPEN_MPI OFF)
set(TCA_MPIEXEC_FLAGS "")
if(TCA_HAVE_MPI)
  # Open MPI refuses to start as root (CI runs as root) and to place more ranks than cores
  # without these flags; other launchers do not know them.
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE tca_mpiexec_version
                  ERROR_QUIET)
  if(tca_mpiexec_version MATCHES "Open MPI|OpenRTE")
    set(TCA_OPEN_MPI ON)
    set(TCA_MPIEXEC_FLAGS --oversubscribe --allow-run-as-root)
  endif()
endif()

# Open MPI's own libraries leak at exit. Only allocations made inside the MPI stack are
# suppressed (lsan_mpi.supp), so leaks of libtca still fail sanitizer builds. Matching by
# library needs whole stacks: Open MPI has no frame pointers (hence the slow unwinder) and
# unloads its plugins at MPI_Finalize (hence disable_dlclose).
# The leak scan at exit reads every thread's dynamic TLS blocks as ASan recorded them from
# __tls_get_addr; with the MPI and UCX plugins of these runs that record held a stale entry
# (an address near 0) and LeakSanitizer's tracer crashed on it ("Tracer caught signal 11 ...
# LeakSanitizer has encountered a fatal error") after every test had passed, in ranks that leaked
# nothing. intercept_tls_get_addr=0 leaves that record out; static TLS, stacks and the heap are
# still scanned. With CUDA, the driver maps memory inside the range ASan keeps unmapped between
# its shadow regions (the shadow gap), so that range is left unprotected (protect_shadow_gap=0);
# without it CUDA cannot start in a sanitized process.
set(TCA_TEST_ENVIRONMENT "")
if(TCA_SANITIZE)
  set(tca_asan_options "fast_unwind_on_malloc=0:intercept_tls_get_addr=0")
  if(TCA_HAVE_CUDA)
    string(APPEND tca_asan_options ":protect_shadow_gap=0")
    # Where a GPU runs the cases, the CUDA driver and NCCL keep allocations for the life of the
    # process in libraries ASan cannot name (frames of "<unknown module>"), so no suppression can
    # single them out: there the leak scan is off. Machines without a GPU (CI) keep it.
    execute_process(COMMAND nvidia-smi -L OUTPUT_VARIABLE tca_gpu_list ERROR_QUIET
                    RESULT_VARIABLE tca_gpu_status)
    if(tca_gpu_status EQUAL 0 AND tca_gpu_list MATCHES "GPU [0-9]")
      string(APPEND tca_asan_options ":detect_leaks=0")
      message(STATUS "tca: a GPU is present: the sanitized tests run without the leak scan")
    endif()
  endif()
  set(TCA_TEST_ENVIRONMENT
      "ASAN_OPTIONS=${tca_asan_options}"
      "OMPI_MCA_mca_base_component_disable_dlclose=1"
      "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/lsan_mpi.supp:print_suppressions=0")
endif()

# tca_mpi_test(NAME RANKS TIMEOUT_S LABELS PROGRAM [ARGS...])
function(tca_mpi_test name ranks timeout labels program)
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${TCA_MPIEXEC_FLAGS}
                   ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${program}> ${MPIEXEC_POSTFLAGS} ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout} PROCESSORS ${ranks}
                       LABELS "${labels}" ENVIRONMENT "${TCA_TEST_ENVIRONMENT}")
endfunction()

# tca_run_test(NAME RANKS TIMEOUT_S LABELS PROGRAM [ARGS...]): RANKS local ranks started by
# tca-run (tools/run), which finds each other through the tcp bootstrap.
function(tca_run_test name ranks timeout labels program)
  add_test(NAME ${name} COMMAND $<TARGET_FILE:tca-run> -n ${ranks} $<TARGET_FILE:${program}> ${ARGN})
  # UCX, where tca has it, over TCP on loopback only, as the ucx tests run (tests/ucx/ucx.cmake).
  set(environment ${TCA_TEST_ENVIRONMENT})
  if(TCA_HAVE_UCX)
    list(APPEND environment UCX_TLS=self,tcp UCX_NET_DEVICES=lo UCX_WARN_UNUSED_ENV_VARS=n)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout} PROCESSORS ${ranks}
                       LABELS "${labels}" ENVIRONMENT "${environment}")
endfunction()

# tca_run_hosts_test(NAME RANKS HOSTS_PER TIMEOUT_S LABELS PROGRAM [ARGS...]): as tca_run_test,
# with every HOSTS_PER ranks a fake host of their own (tca-run --hosts-per).
function(tca_run_hosts_test name ranks hosts_per timeout labels program)
  add_test(NAME ${name} COMMAND $<TARGET_FILE:tca-run> -n ${ranks} --hosts-per ${hosts_per}
                                $<TARGET_FILE:${program}> ${ARGN})
  set(environment ${TCA_TEST_ENVIRONMENT})
  if(TCA_HAVE_UCX)
    list(APPEND environment UCX_TLS=self,tcp UCX_NET_DEVICES=lo UCX_WARN_UNUSED_ENV_VARS=n)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout} PROCESSORS ${ranks}
                       LABELS "${labels}" ENVIRONMENT "${environment}")
endfunction()

# tca_rank_test(NAME RANKS TIMEOUT_S LABELS PROGRAM [ARGS...]): mpirun where tca has MPI, else
# tca-run.
function(tca_rank_test name ranks timeout labels program)
  if(TCA_HAVE_MPI)
    tca_mpi_test(${name} ${ranks} ${timeout} "${labels}" ${program} ${ARGN})
  else()
    tca_run_test(${name} ${ranks} ${timeout} "${labels}" ${program} ${ARGN})
  endif()
endfunction()
