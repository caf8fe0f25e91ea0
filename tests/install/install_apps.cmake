# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Run by ctest (tests/install/CMakeLists.txt): installs the built tca tree into WORK_DIR/prefix,
# copies apps/ and harness/ out of the source tree (so relative paths into src/ or tests/
# cannot resolve) and builds the copy as its own CMake project against the installed package.
foreach(variable TCA_SOURCE_DIR TCA_BUILD_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${variable} OR "${${variable}}" STREQUAL "")
    message(FATAL_ERROR "install_apps.cmake: ${variable} is not set")
  endif()
endforeach()

# run(STEP COMMAND...): one step; its output is shown when it fails.
function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "install_apps: ${step} failed (${result}):\n${output}")
  endif()
  message(STATUS "install_apps: ${step}: done")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run("install tca into ${prefix}" ${CMAKE_COMMAND} --install ${TCA_BUILD_DIR} --prefix ${prefix})
foreach(required include/tca/tca.h)
  if(NOT EXISTS ${prefix}/${required})
    message(FATAL_ERROR "install_apps: the install lacks ${required}")
  endif()
endforeach()

file(COPY ${TCA_SOURCE_DIR}/apps ${TCA_SOURCE_DIR}/harness DESTINATION ${WORK_DIR}/src)

set(configure_args -S ${WORK_DIR}/src/apps -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
if(BUILD_TYPE)
  list(APPEND configure_args -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
endif()
if(CXX_FLAGS)
  list(APPEND configure_args -DCMAKE_CXX_FLAGS=${CXX_FLAGS} -DCMAKE_EXE_LINKER_FLAGS=${CXX_FLAGS})
endif()
if(CUDA_COMPILER)
  get_filename_component(cuda_root ${CUDA_COMPILER} DIRECTORY)
  get_filename_component(cuda_root ${cuda_root} DIRECTORY)
  string(REPLACE "|" ";" architectures "${CUDA_ARCHITECTURES}")
  list(APPEND configure_args -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} -DCUDAToolkit_ROOT=${cuda_root}
       "-DCMAKE_CUDA_ARCHITECTURES=${architectures}")
endif()
run("configure apps/ against the installed tca" ${CMAKE_COMMAND} ${configure_args})
run("build apps/" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)

# Every application folder was part of the build.
file(GLOB children LIST_DIRECTORIES true RELATIVE ${WORK_DIR}/src/apps ${WORK_DIR}/src/apps/*)
foreach(child IN LISTS children)
  if(EXISTS ${WORK_DIR}/src/apps/${child}/CMakeLists.txt)
    if(NOT IS_DIRECTORY ${WORK_DIR}/build/${child})
      message(FATAL_ERROR "install_apps: apps/${child} was not configured")
    endif()
    message(STATUS "install_apps: apps/${child} built against the installed tca")
  endif()
endforeach()
