// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The choice between transports by size, run under mpirun with TCA_CHOICE=measure and a
// TCA_CHOICE_FILE of the test's own (ctest sets both): the table AUTO found, transfers at every
// measured size moved byte-exactly by whichever transport it chose, the cache read back by the
// next start, and no table where a transport is forced.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "tca/tca.h"
#include "test_util.h"

namespace {

#define ASSERT_TCA(call) ASSERT_EQ(TCA_SUCCESS, (call)) << #call << ": " << tcaGetLastErrorMessage()

const std::vector<size_t> kSizes = {1, 8, 511, 512, 8192, 65537, 524288, 4u << 20};

std::string table_to(int peer) {
  const char* name = nullptr;
  const char* table = nullptr;
  if (tcaAutoTransport(peer, TCA_MEM_CPU, TCA_MEM_CPU, 8, &name, &table) != TCA_SUCCESS)
    return "error";
  return table;
}

class Choice : public ::testing::Test {
 protected:
  void SetUp() override {
    rank_ = tca_test::world_rank();
    size_ = tca_test::world_size();
  }
  int rank_ = 0;
  int size_ = 1;
};

TEST_F(Choice, AutoPicksAMeasuredTransportPerSizeAndMovesEveryByte) {
  ASSERT_TCA(tcaInit());
  const int next = (rank_ + 1) % size_;
  const int prev = (rank_ + size_ - 1) % size_;
  const std::string table = table_to(next);
  if (size_ > 1) {
    // Ranks of one host: shm and mpi both reach host memory, so a table was measured.
    ASSERT_FALSE(table.empty()) << "no choice table between ranks " << rank_ << " and " << next;
    EXPECT_EQ(0u, table.rfind("0:", 0)) << table;
  }
  for (size_t bytes : kSizes) {
    const char* name = nullptr;
    ASSERT_TCA(tcaAutoTransport(next, TCA_MEM_CPU, TCA_MEM_CPU, bytes, &name, nullptr));
    if (size_ > 1) {
      EXPECT_NE(std::string::npos, table.find(name)) << bytes << " B: " << name;
    }
  }
  const size_t largest = kSizes.back();
  void* buffer = nullptr;
  ASSERT_TCA(tcaMalloc(&buffer, largest, TCA_MEM_CPU));
  tcaHandle mine;
  ASSERT_TCA(tcaCreateHandle(&mine, buffer, largest, TCA_MEM_CPU));
  std::vector<tcaHandle> all(size_);
  ASSERT_TCA(tcaAllgatherHandles(&mine, all.data()));
  std::vector<unsigned char> source(largest);
  for (size_t bytes : kSizes) {
    for (size_t i = 0; i < bytes; ++i)
      source[i] = static_cast<unsigned char>((i * 131 + bytes + rank_ * 7) & 0xff);
    std::memset(buffer, 0, largest);
    ASSERT_TCA(tcaBarrier());
    ASSERT_TCA(tcaPut(&all[next], 0, source.data(), bytes));
    ASSERT_TCA(tcaNotify(next, 0));
    ASSERT_TCA(tcaWaitDMARecvDesc(prev, 0, nullptr));
    const auto* got = static_cast<const unsigned char*>(buffer);
    size_t wrong = 0;
    for (size_t i = 0; i < bytes; ++i)
      wrong += got[i] != static_cast<unsigned char>((i * 131 + bytes + prev * 7) & 0xff);
    for (size_t i = bytes; i < largest && i < bytes + 64; ++i) wrong += got[i] != 0;
    EXPECT_EQ(0u, wrong) << bytes << " B from rank " << prev;
  }
  ASSERT_TCA(tcaBarrier());
  ASSERT_TCA(tcaDestroyHandle(&mine));
  ASSERT_TCA(tcaFree(buffer));

  // The next start reads the cache rank 0 wrote and finds the same table.
  ASSERT_TCA(tcaFinalize());
  if (rank_ == 0 && size_ > 1) {
    std::ifstream file(std::getenv("TCA_CHOICE_FILE"));
    std::string header;
    ASSERT_TRUE(std::getline(file, header));
    EXPECT_EQ("tca-transport-choice 1", header);
  }
  setenv("TCA_CHOICE", "auto", 1);
  ASSERT_TCA(tcaInit());
  EXPECT_EQ(table, table_to(next));
  ASSERT_TCA(tcaFinalize());
  setenv("TCA_CHOICE", "measure", 1);
}

TEST_F(Choice, AForcedTransportOrChoiceOffKeepsTheRegistryOrder) {
  tcaConfig config = {"mpi", 0};
  ASSERT_TCA(tcaInitWithConfig(&config));
  EXPECT_EQ("", table_to((rank_ + 1) % size_));
  const char* name = nullptr;
  ASSERT_TCA(
      tcaAutoTransport((rank_ + 1) % size_, TCA_MEM_CPU, TCA_MEM_CPU, 4u << 20, &name, nullptr));
  EXPECT_STREQ("mpi", name);
  ASSERT_TCA(tcaFinalize());
  setenv("TCA_CHOICE", "off", 1);
  ASSERT_TCA(tcaInit());
  EXPECT_EQ("", table_to((rank_ + 1) % size_));
  ASSERT_TCA(tcaFinalize());
  setenv("TCA_CHOICE", "measure", 1);
}

TEST_F(Choice, BadArgumentsAreRefused) {
  ASSERT_TCA(tcaInit());
  const char* name = nullptr;
  EXPECT_EQ(TCA_ERROR_INVALID_RANK,
            tcaAutoTransport(size_, TCA_MEM_CPU, TCA_MEM_CPU, 8, &name, nullptr));
  EXPECT_EQ(TCA_ERROR_INVALID_ARGUMENT,
            tcaAutoTransport(0, static_cast<tcaMemKind>(7), TCA_MEM_CPU, 8, &name, nullptr));
  EXPECT_EQ(TCA_ERROR_INVALID_ARGUMENT,
            tcaAutoTransport(0, TCA_MEM_CPU, TCA_MEM_CPU, 8, nullptr, nullptr));
  ASSERT_TCA(tcaFinalize());
  EXPECT_EQ(TCA_ERROR_NOT_INITIALIZED,
            tcaAutoTransport(0, TCA_MEM_CPU, TCA_MEM_CPU, 8, &name, nullptr));
}

}  // namespace
