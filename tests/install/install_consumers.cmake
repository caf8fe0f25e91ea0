# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# ctest -P script: installs the tca build tree into WORK_DIR/prefix, builds a C and a C++
# program against it (MODE cmake: a C-only and a C++-only project through find_package(tca);
# MODE pkgconfig: the compilers with `pkg-config --cflags --libs tca`), and runs each on 2 ranks.
# Parameters: TCA_SOURCE_DIR TCA_BUILD_DIR WORK_DIR MODE GENERATOR C_COMPILER CXX_COMPILER FLAGS
# PKG_CONFIG MPIEXEC MPIEXEC_ARGS (items separated by '|').

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    string(REPLACE ";" " " shown "${ARGN}")
    message(FATAL_ERROR "failed (${code}): ${shown}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${TCA_BUILD_DIR} --prefix ${prefix})
string(REPLACE "|" ";" mpiexec_args "${MPIEXEC_ARGS}")
separate_arguments(flags UNIX_COMMAND "${FLAGS}")

# The installed tca-report finds its package under share/tca/report (--help needs no matplotlib).
run(${prefix}/bin/tca-report --help)
if(NOT run_output MATCHES "FILE.json")
  message(FATAL_ERROR "the installed tca-report --help says:\n${run_output}")
endif()

set(programs "")
if(MODE STREQUAL "cmake")
  foreach(lang c cxx)
    set(build ${WORK_DIR}/build-${lang})
    run(${CMAKE_COMMAND} -S ${TCA_SOURCE_DIR}/tests/install/consumer/${lang} -B ${build} -G ${GENERATOR}
        -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
        "-DCMAKE_C_FLAGS=${FLAGS}" "-DCMAKE_CXX_FLAGS=${FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${FLAGS}")
    run(${CMAKE_COMMAND} --build ${build})
    list(APPEND programs ${build}/consumer_${lang})
  endforeach()
elseif(MODE STREQUAL "pkgconfig")
  set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
  if(EXISTS ${prefix}/lib64/pkgconfig)
    set(ENV{PKG_CONFIG_PATH} ${prefix}/lib64/pkgconfig)
  endif()
  run(${PKG_CONFIG} --cflags --libs tca)
  separate_arguments(tca_flags UNIX_COMMAND "${run_output}")
  run(${PKG_CONFIG} --variable=libdir tca)
  string(STRIP "${run_output}" libdir)
  # Only tca's own flags: these programs call no MPI themselves.
  run(${C_COMPILER} -std=c99 ${flags} ${TCA_SOURCE_DIR}/tests/install/consumer/consumer.c ${tca_flags}
      -Wl,-rpath,${libdir} -o ${WORK_DIR}/consumer_c_pkgconfig)
  run(${CXX_COMPILER} -std=c++17 ${flags} ${TCA_SOURCE_DIR}/tests/install/consumer/consumer.cc ${tca_flags}
      -Wl,-rpath,${libdir} -o ${WORK_DIR}/consumer_cxx_pkgconfig)
  list(APPEND programs ${WORK_DIR}/consumer_c_pkgconfig ${WORK_DIR}/consumer_cxx_pkgconfig)
else()
  message(FATAL_ERROR "MODE must be cmake or pkgconfig, not '${MODE}'")
endif()

foreach(program IN LISTS programs)
  run(${MPIEXEC} ${mpiexec_args} ${program})
  string(REGEX MATCHALL ": ok" oks "${run_output}")
  list(LENGTH oks count)
  if(NOT count EQUAL 2)
    message(FATAL_ERROR "${program} on 2 ranks: expected 2 lines ending ': ok', got:\n${run_output}")
  endif()
  message(STATUS "${program}: 2 ranks ok")
endforeach()
