# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# tca-bfs's tests (included from apps/bfs/CMakeLists.txt inside the tca tree). CI runs them on CPU
# ranks; on a machine with a GPU per rank the same runs take the GPU backend (--device auto) and
# the test program adds the GPU cases (where no GPU serves more than two of a host's ranks).
find_package(GTest REQUIRED)

add_executable(tca_bfs_tests
  tests/test_main.cc
  tests/test_graph.cc
  tests/edge_file_test.cc
  tests/generator_test.cc
  tests/graph_test.cc
  tests/search_test.cc
  tests/validate_test.cc)
target_link_libraries(tca_bfs_tests PRIVATE tca_bfs_core GTest::gtest)
target_compile_options(tca_bfs_tests PRIVATE ${TCA_WARNINGS})

# Unit and multi-rank cases: the generator, kernel 1, edge files, known graphs level by level on
# every comm and direction, the planted validation errors.
add_test(NAME bfs_unit COMMAND tca_bfs_tests)
set_tests_properties(bfs_unit PROPERTIES TIMEOUT 300 LABELS "unit;apps;bfs"
                     ENVIRONMENT "${TCA_TEST_ENVIRONMENT}")
# The same under tca-run (tca's tcp bootstrap, the control layer's tca backend) in every build,
# and under mpirun where the build has MPI.
foreach(ranks 2 3 4)
  tca_run_test(bfs_run_tests_np${ranks} ${ranks} 300 "tcarun;apps;bfs" tca_bfs_tests)
endforeach()
tca_run_hosts_test(bfs_run_tests_np4_hosts2 4 2 300 "tcarun;apps;bfs;large" tca_bfs_tests)

# Whole runs under tca-run: every search validated, --comm mpi skipped with a note (no MPI
# there), nccl skipped on CPU ranks; at 2, 3 and 4 ranks and on fake hosts.
set(bfs_tcarun_runs "10 2" "12 3" "9 4")
foreach(run IN LISTS bfs_tcarun_runs)
  separate_arguments(run)
  list(GET run 0 scale)
  list(GET run 1 ranks)
  add_test(NAME bfs_run_s${scale}_np${ranks}
           COMMAND sh ${TCA_APPS_EXPECT_NOTE} "--comm mpi: skipped, no MPI" $<TARGET_FILE:tca-run>
                   -n ${ranks} $<TARGET_FILE:tca-bfs> --scale ${scale} --nbfs 16 --comm tca
                   --comm mpi --comm nccl)
  set_tests_properties(bfs_run_s${scale}_np${ranks} PROPERTIES TIMEOUT 300 PROCESSORS ${ranks}
                       LABELS "tcarun;apps;bfs" ENVIRONMENT "${TCA_TEST_ENVIRONMENT}")
endforeach()
tca_run_hosts_test(bfs_run_s11_np4_hosts2 4 2 300 "tcarun;apps;bfs" tca-bfs --scale 11 --nbfs 16
                   --comm tca --json)

if(TCA_APPS_MPI)
foreach(ranks 2 3 4)
  tca_mpi_test(bfs_tests_np${ranks} ${ranks} 300 "mpi;apps;bfs" tca_bfs_tests)
endforeach()

# Whole runs: 64 search keys, every search validated, --comm tca and mpi (and nccl where it
# loads) in the same run, at scales 6-14 on 1-4 ranks.
set(bfs_runs "6 1" "10 1" "14 1" "8 2" "12 2" "14 2" "7 3" "11 3" "13 3" "6 4" "9 4" "14 4")
foreach(run IN LISTS bfs_runs)
  separate_arguments(run)
  list(GET run 0 scale)
  list(GET run 1 ranks)
  tca_mpi_test(bfs_s${scale}_np${ranks} ${ranks} 300 "mpi;apps;bfs" tca-bfs
               --scale ${scale} --comm tca --comm mpi --comm nccl)
endforeach()
tca_mpi_test(bfs_s12_np3_top_down 3 300 "mpi;apps;bfs" tca-bfs --scale 12 --direction top-down
             --comm tca --comm mpi --nbfs 16)
tca_mpi_test(bfs_s12_np2_bottom_up 2 300 "mpi;apps;bfs" tca-bfs --scale 12 --direction bottom-up
             --comm tca --comm mpi --nbfs 16)
tca_mpi_test(bfs_s10_np2_json 2 300 "mpi;apps;bfs" tca-bfs --scale 10 --nbfs 4 --levels --json)
# GPU ranks with the levels' kernels launched in turn (TCA_BFS_EARLY=0; the default launches them
# early; CPU ranks ignore it), both directions, every search validated.
tca_mpi_test(bfs_s14_np2_in_turn 2 300 "mpi;apps;bfs" tca-bfs --scale 14 --comm tca --comm nccl
             --nbfs 16)
set_property(TEST bfs_s14_np2_in_turn APPEND PROPERTY ENVIRONMENT TCA_BFS_EARLY=0)
# GPU ranks whose pipelined levels gather the frontier (TCA_BFS_PUSH=0; by default they store it
# into the peers' copies where tca maps them), at 3 ranks, every search validated.
tca_mpi_test(bfs_s13_np3_gathered 3 300 "mpi;apps;bfs" tca-bfs --scale 13 --comm tca --nbfs 16)
set_property(TEST bfs_s13_np3_gathered APPEND PROPERTY ENVIRONMENT TCA_BFS_PUSH=0)
# --levels: the per-level spread of the ranks' compute and its total.
add_test(NAME bfs_s10_np2_levels_spread
         COMMAND sh ${TCA_APPS_EXPECT_NOTE} "^compute_slowest_rank_time: [0-9]" ${MPIEXEC_EXECUTABLE}
                 ${MPIEXEC_NUMPROC_FLAG} 2 ${TCA_MPIEXEC_FLAGS} ${MPIEXEC_PREFLAGS}
                 $<TARGET_FILE:tca-bfs> ${MPIEXEC_POSTFLAGS} --scale 10 --nbfs 2 --levels)
set_tests_properties(bfs_s10_np2_levels_spread PROPERTIES TIMEOUT 300 PROCESSORS 2
                     LABELS "mpi;apps;bfs" ENVIRONMENT "${TCA_TEST_ENVIRONMENT}")
# Two fake hosts (TCA_HOST_ID), UCX between them as the ucx tests run it (with cuda_copy for GPU
# memory): every search validated with --comm tca, not skipped. CPU ranks in CI; on a machine with
# a GPU per rank the GPU engine, whose collectives the host then runs over UCX.
if(TCA_HAVE_UCX)
  add_test(NAME bfs_s10_np2_fakehosts
           COMMAND sh ${TCA_APPS_EXPECT_NOTE} "^tca +4 +4 " ${MPIEXEC_EXECUTABLE}
                   ${MPIEXEC_NUMPROC_FLAG} 2 ${TCA_MPIEXEC_FLAGS} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:tca-bfs> ${MPIEXEC_POSTFLAGS} --scale 10 --nbfs 4 --comm tca)
  set_tests_properties(bfs_s10_np2_fakehosts PROPERTIES TIMEOUT 300 PROCESSORS 2
    LABELS "mpi;apps;bfs;fakehosts" ENVIRONMENT
    "${TCA_TEST_ENVIRONMENT};TCA_HOST_ID=cyclic:2;UCX_TLS=self,tcp,cuda_copy;UCX_NET_DEVICES=lo;UCX_WARN_UNUSED_ENV_VARS=n;OMPI_MCA_pml=^ucx;OMPI_MCA_osc=^ucx,pt2pt;OMPI_MCA_btl=^uct,openib,ofi")
endif()
# A slow reference with fewer searches: --comm mpi runs the first 3 keys, tca all 16.
add_test(NAME bfs_s10_np2_reference_nbfs
         COMMAND sh ${TCA_APPS_EXPECT_NOTE} "^NBFS: 3$" ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2
                 ${TCA_MPIEXEC_FLAGS} ${MPIEXEC_PREFLAGS} $<TARGET_FILE:tca-bfs> ${MPIEXEC_POSTFLAGS}
                 --scale 10 --nbfs 16 --reference-nbfs 3 --comm tca --comm mpi)
set_tests_properties(bfs_s10_np2_reference_nbfs PROPERTIES TIMEOUT 300 PROCESSORS 2
                     LABELS "mpi;apps;bfs" ENVIRONMENT "${TCA_TEST_ENVIRONMENT}")
# tca between CPU ranks of one host over its MPI transport instead of shared memory.
tca_mpi_test(bfs_s10_np3_mpi_transport 3 300 "mpi;apps;bfs" tca-bfs --scale 10 --nbfs 16
             --comm tca --comm mpi)
set_tests_properties(bfs_s10_np3_mpi_transport PROPERTIES
                     ENVIRONMENT "${TCA_TEST_ENVIRONMENT};TCA_TRANSPORT=mpi")
endif()

# Bad input: a clear error naming the value, a non-zero exit, no file left (not even a partial
# one). tca_bfs_bad_input(NAME RANKS MESSAGE FILE ARGS...): under mpirun where the build has
# MPI, else under tca-run.
set(bfs_expect ${CMAKE_CURRENT_SOURCE_DIR}/tests/expect_failure.sh)
set(bfs_scratch ${CMAKE_CURRENT_BINARY_DIR}/bad-input)
file(MAKE_DIRECTORY ${bfs_scratch})
function(tca_bfs_bad_input name ranks message file)
  if(TCA_APPS_MPI AND NOT BFS_BAD_INPUT_TCA_RUN)
    set(launcher ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${TCA_MPIEXEC_FLAGS}
                 ${MPIEXEC_PREFLAGS} $<TARGET_FILE:tca-bfs> ${MPIEXEC_POSTFLAGS})
    set(labels "mpi;apps;bfs")
  else()
    set(launcher $<TARGET_FILE:tca-run> -n ${ranks} $<TARGET_FILE:tca-bfs>)
    set(labels "tcarun;apps;bfs")
  endif()
  add_test(NAME bfs_bad_${name} COMMAND bash ${bfs_expect} ${message} ${file} ${launcher} ${ARGN})
  set_tests_properties(bfs_bad_${name} PROPERTIES TIMEOUT 120 PROCESSORS ${ranks}
                       LABELS "${labels}" ENVIRONMENT "${TCA_TEST_ENVIRONMENT}")
endfunction()
# Files made by the tests themselves: 40 bytes (not a whole number of 16- or 12-byte records),
# and one tuple (7, 3) of int64 records, which names vertex 7.
file(WRITE ${bfs_scratch}/forty-bytes.bin "0123456789012345678901234567890123456789")
file(WRITE ${bfs_scratch}/make-tuple.sh "printf '\\x07\\0\\0\\0\\0\\0\\0\\0\\x03\\0\\0\\0\\0\\0\\0\\0' > $1\n")
add_test(NAME bfs_bad_setup COMMAND bash ${bfs_scratch}/make-tuple.sh ${bfs_scratch}/tuple-7-3.bin)
set_tests_properties(bfs_bad_setup PROPERTIES FIXTURES_SETUP bfs_bad_files LABELS "apps;bfs")

tca_bfs_bad_input(scale_too_large 1 "--scale: Value 33 not in range" - --scale 33)
tca_bfs_bad_input(scale_zero 1 "--scale: Value 0 not in range" - --scale 0)
tca_bfs_bad_input(edgefactor 2 "--edgefactor: Value 5000 not in range" - --scale 8 --edgefactor 5000)
tca_bfs_bad_input(record_size 2 "size, 40 bytes, is not a whole number of 16-byte int64 records"
                  ${bfs_scratch}/parents-a --edges ${bfs_scratch}/forty-bytes.bin --vertices 8
                  --parents-out ${bfs_scratch}/parents-a)
tca_bfs_bad_input(record_size_packed48 1 "40 bytes, is not a whole number of 12-byte packed48"
                  - --edges ${bfs_scratch}/forty-bytes.bin --edge-format packed48 --vertices 8)
tca_bfs_bad_input(vertex_id 2 "record 0 has vertex id 7, outside \\[0, 5\\)"
                  ${bfs_scratch}/parents-b --edges ${bfs_scratch}/tuple-7-3.bin --vertices 5
                  --parents-out ${bfs_scratch}/parents-b)
tca_bfs_bad_input(root_degree_zero 2 "search key 5 has degree 0"
                  ${bfs_scratch}/parents-c --edges ${bfs_scratch}/tuple-7-3.bin --vertices 10
                  --root 3 --root 5 --parents-out ${bfs_scratch}/parents-c)
tca_bfs_bad_input(root_not_vertex 2 "search key 300 is not a vertex" ${bfs_scratch}/parents-d
                  --scale 8 --root 300 --parents-out ${bfs_scratch}/parents-d)
tca_bfs_bad_input(more_ranks_than_vertices 3 "3 ranks for a graph of 2 vertices" -
                  --edges ${bfs_scratch}/tuple-7-3.bin --vertices 2)
tca_bfs_bad_input(roots_file 1 "no-such-roots-file" - --scale 6 --roots ${bfs_scratch}/no-such-roots-file)
set_tests_properties(bfs_bad_vertex_id bfs_bad_more_ranks_than_vertices bfs_bad_root_degree_zero
                     PROPERTIES
                     FIXTURES_REQUIRED bfs_bad_files)
# Errors agreed between ranks under tca-run in builds with MPI too.
if(TCA_APPS_MPI)
  set(BFS_BAD_INPUT_TCA_RUN ON)
  tca_bfs_bad_input(run_vertex_id 2 "record 0 has vertex id 7, outside \\[0, 5\\)"
                    ${bfs_scratch}/parents-e --edges ${bfs_scratch}/tuple-7-3.bin --vertices 5
                    --parents-out ${bfs_scratch}/parents-e)
  tca_bfs_bad_input(run_more_ranks_than_vertices 3 "3 ranks for a graph of 2 vertices" -
                    --edges ${bfs_scratch}/tuple-7-3.bin --vertices 2)
  set_tests_properties(bfs_bad_run_vertex_id bfs_bad_run_more_ranks_than_vertices PROPERTIES
                       FIXTURES_REQUIRED bfs_bad_files)
  unset(BFS_BAD_INPUT_TCA_RUN)
endif()
