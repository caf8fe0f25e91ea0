# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# The tcp bootstrap (src/bootstrap): good and bad starts from the environment, init again, and the
# suites started by tca-run in builds with MPI too. Included from tests/CMakeLists.txt.

# One rank of a job however the environment starts it (tests/bootstrap/probe.cc).
add_executable(tca_bootstrap_probe bootstrap/probe.cc)
target_link_libraries(tca_bootstrap_probe PRIVATE tca::tca)
target_compile_options(tca_bootstrap_probe PRIVATE ${TCA_WARNINGS})

# The good and bad starts, each case its own processes of the probe.
add_executable(tca_bootstrap_tests bootstrap/bad_start_test.cc)
target_link_libraries(tca_bootstrap_tests PRIVATE tca::tca GTest::gtest_main)
target_compile_definitions(tca_bootstrap_tests PRIVATE
                           TCA_BOOTSTRAP_PROBE="$<TARGET_FILE:tca_bootstrap_probe>")
if(TCA_HAVE_MPI)
  target_compile_definitions(tca_bootstrap_tests PRIVATE TCA_TESTS_MPI=1)
endif()
if(TCA_HAVE_PMIX)
  target_compile_definitions(tca_bootstrap_tests PRIVATE TCA_TESTS_PMIX=1)
endif()
target_compile_options(tca_bootstrap_tests PRIVATE ${TCA_WARNINGS})
add_dependencies(tca_bootstrap_tests tca_bootstrap_probe)
add_test(NAME bootstrap_starts COMMAND tca_bootstrap_tests)
set_tests_properties(bootstrap_starts PROPERTIES TIMEOUT 300 PROCESSORS 4 LABELS "tcp;bootstrap"
                     ENVIRONMENT "${TCA_TEST_ENVIRONMENT}")

# tcaFinalize then tcaInit, 100 times, and a job that goes on with fewer ranks.
tca_run_test(bootstrap_reinit_np3 3 300 "tcp;bootstrap" tca_bootstrap_probe --loops 100)
tca_run_test(bootstrap_shrink_np4 4 120 "tcp;bootstrap" tca_bootstrap_probe --shrink 2 --loops 3)

# The suites themselves start through tca-run (tests/CMakeLists.txt, tests/coll, tests/ucx/ucx.cmake),
# with mpirun beside them where tca has MPI.

# The pmix bootstrap, where built, under mpirun's PMIx server (the programs leave MPI alone when
# TCA_BOOTSTRAP names another bootstrap): the shm suite and init again.
if(TCA_HAVE_PMIX AND TCA_HAVE_MPI)
  tca_mpi_test(transport_shm_pmix_np3 3 600 "pmix;transport_shm" tca_transport_tests
               --gtest_filter=Transports/TransportTest.*/shm)
  tca_mpi_test(bootstrap_pmix_reinit_np3 3 300 "pmix;bootstrap" tca_bootstrap_probe --loops 30)
  foreach(name transport_shm_pmix_np3 bootstrap_pmix_reinit_np3)
    set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT TCA_BOOTSTRAP=pmix)
  endforeach()
endif()

# The launchers users start tca programs with, where this machine has them; elsewhere the cases
# report themselves skipped with the reason (exit 77).
function(tca_launcher_test name program_name)
  find_program(TCA_LAUNCHER_${program_name} ${program_name})
  if(TCA_LAUNCHER_${program_name})
    add_test(NAME ${name} COMMAND ${TCA_LAUNCHER_${program_name}} ${ARGN})
  else()
    add_test(NAME ${name} COMMAND sh -c "echo '${program_name} not found here: skipped'; exit 77")
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT 300 PROCESSORS 3 SKIP_RETURN_CODE 77
                       LABELS "bootstrap;launchers" ENVIRONMENT "${TCA_TEST_ENVIRONMENT}")
endfunction()
tca_launcher_test(bootstrap_torchrun_np3 torchrun --standalone --nproc-per-node 3 --no-python
                  $<TARGET_FILE:tca_bootstrap_probe> --loops 5)
tca_launcher_test(bootstrap_srun_np3 srun -n 3 --mpi=pmix $<TARGET_FILE:tca_bootstrap_probe>
                  --loops 5)
