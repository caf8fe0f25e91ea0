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
    OMPI_MCA_pml=ob1 OMPI_MCA_osc=^ucx OMPI_MCA_btl=^uct)

# The building blocks (context, worker, endpoints, memory, requests), on the internal library.
add_executable(tca_ucx_tests ucx_test.cc)
target_link_libraries(tca_ucx_tests PRIVATE tca_internal tca_gtest_main)
target_compile_options(tca_ucx_tests PRIVATE ${TCA_WARNINGS})
foreach(ranks 1 2 3)
  tca_mpi_test(ucx_blocks_np${ranks} ${ranks} 120 "mpi;ucx" tca_ucx_tests)
  set_tests_properties(ucx_blocks_np${ranks} PROPERTIES ENVIRONMENT "${TCA_UCX_TEST_ENVIRONMENT}")
endforeach()

# The transport suite with ucx forced (tests/ucx_transfer_test.cc instantiates it), on one host
# and on fake hosts (TCA_HOST_ID: ranks of unlike parity on different hosts as tca sees them).
target_sources(tca_transport_tests PRIVATE ucx_transfer_test.cc)
tca_mpi_test(transport_ucx_np2 2 600 "mpi;transport_ucx" tca_transport_tests
             --gtest_filter=Ucx/TransportTest.*/ucx)
set_tests_properties(transport_ucx_np2 PROPERTIES ENVIRONMENT "${TCA_UCX_TEST_ENVIRONMENT}")
tca_mpi_test(transport_ucx_hosts_np3 3 600 "mpi;transport_ucx" tca_transport_tests
             --gtest_filter=Ucx/TransportTest.*/ucx)
set_tests_properties(transport_ucx_hosts_np3 PROPERTIES
                     ENVIRONMENT "${TCA_UCX_TEST_ENVIRONMENT};TCA_HOST_ID=cyclic:2")
