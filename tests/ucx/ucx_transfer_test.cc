// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The transport suite (transfers, notifications, errors, soak and attack cases of
// tca_transport_tests) once more with the UCX transport forced, where it is built.
#include "test_util.h"

namespace tca_test {
namespace {

INSTANTIATE_TEST_SUITE_P(Ucx, TransportTest, ::testing::Values("ucx"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tca_test
