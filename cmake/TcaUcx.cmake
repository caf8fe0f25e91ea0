# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# The UCX transport (src/transport/ucx): found with find_package(ucx CONFIG).
#
#   TCA_UCX=AUTO  builds it when UCX is found (default), ON requires it, OFF leaves it out.
#
# Where UCX comes from, first match wins:
#   - ucx_DIR or CMAKE_PREFIX_PATH, as for any CMake package (a site's UCX: verbs, GPUDirect RDMA);
#   - the libucx-cu13 (or -cu12) Python wheel that `python3` imports (`pip install libucx-cu13`):
#     its prefix holds lib/cmake/ucx/ucx-config.cmake.
#
# Binaries find UCX's libraries through their run path (the library directory is put into
# BUILD_RPATH and INSTALL_RPATH of every target linked with tca_use_ucx), and UCX finds its
# transport modules (lib/ucx/libuct_*.so) next to libucs on its own, so nothing needs
# LD_LIBRARY_PATH. docs/UCX.md says how to keep Open MPI's own UCX out of the same process.
#
# Included from the top CMakeLists.txt after src/: sets TCA_HAVE_UCX and, when UCX is found,
# adds the transport's sources to the library's objects.

set(TCA_UCX "AUTO" CACHE STRING "Build the UCX transport: AUTO (when UCX is found), ON, OFF")
set_property(CACHE TCA_UCX PROPERTY STRINGS AUTO ON OFF)
if(NOT TCA_UCX MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "TCA_UCX must be AUTO, ON or OFF, not '${TCA_UCX}'")
endif()

# The prefix of the UCX wheel that python3 imports, or "" (no python3, or no wheel installed).
function(tca_ucx_wheel_prefix out)
  set(${out} "" PARENT_SCOPE)
  find_program(TCA_PYTHON3 NAMES python3 python)
  if(NOT TCA_PYTHON3)
    return()
  endif()
  # find_spec locates the package without importing it (nothing is loaded).
  execute_process(
    COMMAND "${TCA_PYTHON3}" -c
            "import importlib.util as u; s = u.find_spec('libucx'); print(s.submodule_search_locations[0] if s else '')"
    OUTPUT_VARIABLE prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
  if(NOT failed AND prefix AND EXISTS "${prefix}/lib/cmake/ucx/ucx-config.cmake")
    set(${out} "${prefix}" PARENT_SCOPE)
  endif()
endfunction()

set(TCA_HAVE_UCX OFF)
if(NOT TCA_UCX STREQUAL "OFF")
  # Protocols v2 and the nbx calls with memory types (UCX 1.12 and later).
  find_package(ucx 1.12 CONFIG QUIET)
  if(NOT ucx_FOUND)
    tca_ucx_wheel_prefix(tca_ucx_wheel)
    if(tca_ucx_wheel)
      find_package(ucx 1.12 CONFIG QUIET PATHS "${tca_ucx_wheel}" NO_DEFAULT_PATH)
    endif()
  endif()
  if(ucx_FOUND AND TARGET ucx::ucp AND TARGET ucx::ucs)
    set(TCA_HAVE_UCX ON)
    get_target_property(tca_ucx_ucp ucx::ucp IMPORTED_LOCATION)
    get_filename_component(TCA_UCX_LIBDIR "${tca_ucx_ucp}" DIRECTORY)
    message(STATUS "tca: UCX transport ON (UCX ${ucx_VERSION}, ${TCA_UCX_LIBDIR})")
  elseif(TCA_UCX STREQUAL "ON")
    message(FATAL_ERROR
      "TCA_UCX=ON but no UCX 1.12 or later was found. Install the wheel (pip install "
      "libucx-cu13) so that python3 can import libucx, or point CMake at a UCX installation "
      "with -Ducx_DIR=<prefix>/lib/cmake/ucx (or CMAKE_PREFIX_PATH=<prefix>); -DTCA_UCX=OFF "
      "builds without it.")
  else()
    message(STATUS "tca: UCX transport OFF (no UCX 1.12+ found: pip install libucx-cu13, or "
                   "-Ducx_DIR=<prefix>/lib/cmake/ucx)")
  endif()
else()
  message(STATUS "tca: UCX transport OFF (TCA_UCX=OFF)")
endif()

# Links the library or program `target` with UCX (ucp and ucs) and gives it a run path to
# UCX's libraries, in the build tree and once installed.
function(tca_use_ucx target visibility)
  target_link_libraries(${target} ${visibility} ucx::ucp ucx::ucs)
  set_property(TARGET ${target} APPEND PROPERTY BUILD_RPATH "${TCA_UCX_LIBDIR}")
  set_property(TARGET ${target} APPEND PROPERTY INSTALL_RPATH "${TCA_UCX_LIBDIR}")
endfunction()

if(TCA_HAVE_UCX)
  set(tca_ucx_dir "${PROJECT_SOURCE_DIR}/src/transport/ucx")
  target_sources(tca_objects PRIVATE
    ${tca_ucx_dir}/endpoints.cc
    ${tca_ucx_dir}/memory.cc
    ${tca_ucx_dir}/progress.cc
    ${tca_ucx_dir}/request.cc
    ${tca_ucx_dir}/ucx_run.cc
    ${tca_ucx_dir}/ucx_transport.cc
    ${tca_ucx_dir}/worker.cc)
  target_compile_definitions(tca_objects PUBLIC TCA_HAVE_UCX=1)
  # tca_internal's users (unit tests) link UCX through the objects' usage requirements.
  target_link_libraries(tca_objects PUBLIC ucx::ucp ucx::ucs)
  tca_use_ucx(tca PRIVATE)
endif()
