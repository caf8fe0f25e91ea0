# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Tests of the UCX transport, where it is built (TCA_HAVE_UCX; cmake/TcaUcx.cmake). Included from
# tests/CMakeLists.txt.
if(NOT TCA_HAVE_UCX)
  return()
endif()

# UCX's network path on every host, CI included: TCP over loopback, never shared memory, so the
# data moves only inside the target's progress (the hardest case for waits). Open MPI keeps its
# own UCX components out of the process (docs/UCX.md).
set(TCA_UCX_TEST_ENVIRONMENT ${TCA_TEST_ENVIRONMENT}
    UCX_TLS=self,tcp UCX_NET_DEVICES=lo UCX_WARN_UNUSED_ENV_VARS=n
    OMPI_MCA_pml=^ucx OMPI_MCA_osc=^ucx,pt2pt OMPI_MCA_btl=^uct,openib,ofi)

# The building blocks (context, worker, endpoints, memory, requests), on the internal library.
add_executable(tca_ucx_tests ucx/ucx_test.cc)
target_link_libraries(tca_ucx_tests PRIVATE tca_internal tca_gtest_main)
target_compile_options(tca_ucx_tests PRIVATE ${TCA_WARNINGS})
foreach(ranks 1 2 3)
  tca_run_test(ucx_blocks_np${ranks} ${ranks} 120 "tcp;ucx" tca_ucx_tests)
  set_tests_properties(ucx_blocks_np${ranks} PROPERTIES ENVIRONMENT "${TCA_UCX_TEST_ENVIRONMENT}")
endforeach()

# The transport suite with ucx forced (tests/ucx/ucx_transfer_test.cc instantiates it), on one host
# and on fake hosts (TCA_HOST_ID: ranks of unlike parity on different hosts as tca sees them).
target_sources(tca_transport_tests PRIVATE ucx/ucx_transfer_test.cc)
tca_run_test(transport_ucx_np2 2 600 "tcp;transport_ucx" tca_transport_tests
             --gtest_filter=Ucx/TransportTest.*/ucx)
set_tests_properties(transport_ucx_np2 PROPERTIES ENVIRONMENT "${TCA_UCX_TEST_ENVIRONMENT}")
# Labelled large: the sanitized pass leaves it out (UCX between fake hosts under ASan is the
# slowest case there; transport_ucx_np2 runs the same suite on one host, the survivor and
# killed-rank cases cross fake hosts).
tca_run_test(transport_ucx_hosts_np3 3 600 "tcp;transport_ucx;fakehosts;large" tca_transport_tests
             --gtest_filter=Ucx/TransportTest.*/ucx)
set_tests_properties(transport_ucx_hosts_np3 PROPERTIES
                     ENVIRONMENT "${TCA_UCX_TEST_ENVIRONMENT};TCA_HOST_ID=cyclic:2")

# A rank SIGKILLed mid-transfer over ucx: the job ends within the bound, every survivor either
# reporting TCA_ERROR_PEER_FAILED / TCA_ERROR_TIMEOUT or ended by the launcher
# (tests/run_killed_rank.sh), on one host and on fake hosts. Launcher mode only: with UCX 1.22
# over TCP a survivor that is the target of the dead rank's put may be aborted inside UCX itself
# (ucp_put_handler's acknowledgement to the dead peer fails: "Fatal: unexpected error: Endpoint
# timeout"), so survivors cannot be promised to run on (docs/UCX.md).
if(TCA_OPEN_MPI)
  foreach(hosts one fake)
    set(name killed_rank_ucx_${hosts}_hosts)
    add_test(NAME ${name}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/run_killed_rank.sh launcher 3
                     ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3 ${TCA_MPIEXEC_FLAGS}
                     ${MPIEXEC_PREFLAGS} $<TARGET_FILE:tca_killed_rank> ${MPIEXEC_POSTFLAGS} ucx)
    set(environment ${TCA_UCX_TEST_ENVIRONMENT})
    if(hosts STREQUAL "fake")
      list(APPEND environment TCA_HOST_ID=cyclic:2)
    endif()
    set_tests_properties(${name} PROPERTIES TIMEOUT 180 PROCESSORS 3
                         LABELS "mpi;killed_rank;transport_ucx" ENVIRONMENT "${environment}")
  endforeach()
endif()

# GPU memory over ucx between fake hosts (tests/ucx/ucx_gpu_test.cc): two ranks sharing a GPU, sizes up
# to 256 MiB. Skips without a GPU (CI); on a GPU machine, UCX needs its cuda_copy transport.
if(TCA_HAVE_CUDA AND TCA_HAVE_MPI)
  tca_test_program(tca_ucx_gpu_tests ucx/ucx_gpu_test.cc)
  target_link_libraries(tca_ucx_gpu_tests PRIVATE tca_gpu_test_support)
  tca_mpi_test(ucx_gpu_hosts_np2 2 900 "mpi;cuda;transport_ucx" tca_ucx_gpu_tests)
  set(environment ${TCA_UCX_TEST_ENVIRONMENT} TCA_HOST_ID=cyclic:2)
  list(TRANSFORM environment REPLACE "^UCX_TLS=.*" "UCX_TLS=self,tcp,cuda_copy")
  set_tests_properties(ucx_gpu_hosts_np2 PROPERTIES ENVIRONMENT "${environment}")
endif()
