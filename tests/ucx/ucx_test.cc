// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The UCX building blocks of the ucx transport (src/transport/ucx), between real ranks: context,
// worker and endpoints to every rank, host memory mapped and reached through packed remote keys,
// put / get / flush with completion, waits bounded by their check, and UCX failures turned into
// tca errors that name UCX's status. Runs with UCX_TLS=self,tcp (tests/ucx/ucx.cmake), where data
// moves only inside the target's progress.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "bootstrap/bootstrap.h"
#include "transport/ucx/endpoints.h"
#include "transport/ucx/memory.h"
#include "transport/ucx/request.h"
#include "transport/ucx/status.h"
#include "transport/ucx/worker.h"

namespace {

using namespace tca::ucx;

::testing::AssertionResult ok(tcaResult result, const char* call) {
  if (result == TCA_SUCCESS) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << call << " failed (" << result << "): " << tca::last_error_message();
}
#define ASSERT_OK(call) ASSERT_TRUE(ok((call), #call))

// Fails a wait once it has run `limit` checks.
WaitCheck checks_up_to(int limit, std::shared_ptr<int> count) {
  return [limit, count]() -> tcaResult {
    if (++*count >= limit) TCA_FAIL(TCA_ERROR_TIMEOUT, "the test's wait limit");
    return TCA_SUCCESS;
  };
}

uint8_t byte_of(int rank, size_t offset) {
  return static_cast<uint8_t>(rank * 37 + offset * 11 + 1);
}

// Context, worker and endpoints to every rank, made and torn down per test.
class UcxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(tca::make_bootstrap(60000, &bootstrap_));  // MPI under mpirun, tcp under tca-run
    rank_ = bootstrap_->rank();
    size_ = bootstrap_->size();
    ASSERT_OK(UcpContext::create(UCP_FEATURE_RMA, {}, &context_));
    ASSERT_OK(Worker::create(context_, &worker_));
    ASSERT_OK(Endpoints::connect(worker_, *bootstrap_, &endpoints_));
    for (int peer = 0; peer < size_; ++peer) ASSERT_OK(endpoints_.reach(peer));
  }
  void TearDown() override {
    if (endpoints_.size() > 0) {
      EXPECT_TRUE(ok(endpoints_.close(*bootstrap_, {}), "close"));
    }
  }

  // Every rank's packed key of `region`, unpacked for the endpoint to its owner.
  std::vector<RemoteKey> exchange_keys(const MemoryRegion& region) {
    std::vector<uint8_t> mine;
    EXPECT_TRUE(ok(region.pack_rkey(&mine), "pack_rkey"));
    uint64_t size = mine.size();
    std::vector<uint64_t> sizes(static_cast<size_t>(size_));
    EXPECT_TRUE(ok(bootstrap_->allgather(&size, sizes.data(), sizeof size), "allgather"));
    size_t stride = 0;
    for (uint64_t s : sizes) stride = std::max<size_t>(stride, s);
    mine.resize(stride);
    std::vector<uint8_t> all(stride * sizes.size());
    EXPECT_TRUE(ok(bootstrap_->allgather(mine.data(), all.data(), stride), "allgather"));
    std::vector<RemoteKey> keys(static_cast<size_t>(size_));
    for (int owner = 0; owner < size_; ++owner)
      EXPECT_TRUE(ok(RemoteKey::unpack(endpoints_[owner], all.data() + owner * stride,
                                       sizes[static_cast<size_t>(owner)], &keys[owner]),
                     "unpack"));
    return keys;
  }
  uint64_t address_of(const MemoryRegion& region, int owner) {
    uint64_t mine = reinterpret_cast<uintptr_t>(region.address());
    std::vector<uint64_t> all(static_cast<size_t>(size_));
    EXPECT_TRUE(ok(bootstrap_->allgather(&mine, all.data(), sizeof mine), "allgather"));
    return all[static_cast<size_t>(owner)];
  }
  // Progresses this rank's worker while waiting for every rank (data over tcp lands only
  // inside the target's progress).
  void barrier_with_progress() {
    Request flushed;
    ASSERT_OK(flush(worker_, &flushed));
    ASSERT_OK(wait(worker_, flushed, {}));
    ASSERT_OK(tca::ucx::barrier_with_progress(*bootstrap_, worker_));
  }

  std::unique_ptr<tca::Bootstrap> bootstrap_;
  int rank_ = 0;
  int size_ = 1;
  UcpContext context_;
  Worker worker_;
  Endpoints endpoints_;
};

TEST_F(UcxTest, EveryRankHasAHealthyEndpoint) {
  ASSERT_EQ(endpoints_.size(), size_);
  for (int peer = 0; peer < size_; ++peer) {
    EXPECT_NE(endpoints_[peer], nullptr) << "peer " << peer;
    EXPECT_EQ(endpoints_.peer_status(peer), UCS_OK) << "peer " << peer;
  }
  std::vector<uint8_t> address;
  ASSERT_OK(worker_.address(&address));
  EXPECT_FALSE(address.empty());
}

// An endpoint is made on first reach, once; a rank outside the job is an error.
TEST_F(UcxTest, EndpointsAreMadeOnFirstReach) {
  Endpoints lazy;
  ASSERT_OK(Endpoints::connect(worker_, *bootstrap_, &lazy));
  ASSERT_EQ(lazy.size(), size_);
  for (int peer = 0; peer < size_; ++peer) EXPECT_EQ(lazy[peer], nullptr) << "peer " << peer;
  const int next = (rank_ + 1) % size_;
  ASSERT_OK(lazy.reach(next));
  const ucp_ep_h made = lazy[next];
  EXPECT_NE(made, nullptr);
  ASSERT_OK(lazy.reach(next));
  EXPECT_EQ(lazy[next], made);
  EXPECT_EQ(lazy.reach(size_), TCA_ERROR_INTERNAL);
  EXPECT_EQ(lazy.reach(-1), TCA_ERROR_INTERNAL);
  EXPECT_TRUE(ok(lazy.close(*bootstrap_, {}), "close"));
}

TEST_F(UcxTest, HostMemoryIsDetectedOrTakenAsGiven) {
  std::vector<uint8_t> buffer(4096);
  MemoryRegion detected;
  ASSERT_OK(MemoryRegion::map(context_, buffer.data(), buffer.size(), UCS_MEMORY_TYPE_UNKNOWN,
                              &detected));
  EXPECT_EQ(detected.memory_type(), UCS_MEMORY_TYPE_HOST);
  EXPECT_STREQ(memory_type_name(detected.memory_type()), "host");
  MemoryRegion given;
  ASSERT_OK(MemoryRegion::map(context_, buffer.data() + 64, 128, UCS_MEMORY_TYPE_HOST, &given));
  EXPECT_EQ(given.address(), buffer.data() + 64);
  EXPECT_EQ(given.bytes(), 128u);
  std::vector<uint8_t> key;
  ASSERT_OK(given.pack_rkey(&key));
  EXPECT_FALSE(key.empty());
  MemoryRegion moved = std::move(given);
  EXPECT_NE(moved.get(), nullptr);
  EXPECT_EQ(given.get(), nullptr);
}

// Each rank puts into the next and gets from the previous, at odd offsets and sizes.
TEST_F(UcxTest, PutAndGetAroundTheRing) {
  constexpr size_t kBytes = 3 * 65536 + 17;
  std::vector<uint8_t> exposed(kBytes + 64, 0);
  std::vector<uint8_t> source(kBytes);
  for (size_t i = 0; i < kBytes; ++i) source[i] = byte_of(rank_, i);
  MemoryRegion region;
  ASSERT_OK(
      MemoryRegion::map(context_, exposed.data(), exposed.size(), UCS_MEMORY_TYPE_HOST, &region));
  std::vector<RemoteKey> keys = exchange_keys(region);
  const int next = (rank_ + 1) % size_;
  const int previous = (rank_ + size_ - 1) % size_;
  const uint64_t next_base = address_of(region, next) + 5;  // odd offset at the target
  Request put_done;
  ASSERT_OK(put(endpoints_[next], source.data(), kBytes, UCS_MEMORY_TYPE_HOST, next_base,
                keys[next].get(), &put_done));
  ASSERT_OK(wait(worker_, put_done, {}));
  Request flushed;
  ASSERT_OK(flush(endpoints_[next], &flushed));
  ASSERT_OK(wait(worker_, flushed, {}));
  barrier_with_progress();
  for (size_t i = 0; i < kBytes; ++i)
    ASSERT_EQ(exposed[5 + i], byte_of(previous, i)) << "byte " << i << " from rank " << previous;
  EXPECT_EQ(exposed[4], 0);
  EXPECT_EQ(exposed[5 + kBytes], 0);

  // The previous rank's region holds what the rank before it put there.
  std::vector<uint8_t> fetched(kBytes - 3, 0);
  Request got;
  ASSERT_OK(get(endpoints_[previous], fetched.data(), fetched.size(), UCS_MEMORY_TYPE_HOST,
                address_of(region, previous) + 8, keys[previous].get(), &got));
  ASSERT_OK(wait(worker_, got, {}));
  const int before_previous = (previous + size_ - 1) % size_;
  for (size_t i = 0; i < fetched.size(); ++i)
    ASSERT_EQ(fetched[i], byte_of(before_previous, i + 3)) << "byte " << i;
  barrier_with_progress();  // no rank unmaps while a peer still reads
}

// Over tcp a get completes only inside the target's progress: with the target parked in a
// barrier, the wait ends through its check, and the operation completes once it progresses.
TEST_F(UcxTest, AWaitEndsWithItsCheckAndTheOperationCompletesLater) {
  if (size_ < 2) GTEST_SKIP() << "needs a peer";
  std::vector<uint8_t> exposed(1 << 20, static_cast<uint8_t>(rank_ + 1));
  MemoryRegion region;
  ASSERT_OK(
      MemoryRegion::map(context_, exposed.data(), exposed.size(), UCS_MEMORY_TYPE_HOST, &region));
  std::vector<RemoteKey> keys = exchange_keys(region);
  const uint64_t peer_base = address_of(region, 1);
  std::vector<uint8_t> fetched(exposed.size(), 0);
  if (rank_ == 0) {
    Request got;
    ASSERT_OK(get(endpoints_[1], fetched.data(), fetched.size(), UCS_MEMORY_TYPE_HOST, peer_base,
                  keys[1].get(), &got));
    auto checks = std::make_shared<int>(0);
    const tcaResult result = wait(worker_, got, checks_up_to(3, checks));
    EXPECT_EQ(result, TCA_ERROR_TIMEOUT);
    EXPECT_NE(std::string(tca::last_error_message()).find("the test's wait limit"),
              std::string::npos)
        << tca::last_error_message();
    EXPECT_EQ(*checks, 3);
    ASSERT_EQ(got.test(), UCS_INPROGRESS);  // over tcp, not without rank 1's progress
    ASSERT_OK(bootstrap_->barrier());
    ASSERT_OK(wait(worker_, got, {}));
    for (size_t i = 0; i < fetched.size(); i += 4099) ASSERT_EQ(fetched[i], 2) << "byte " << i;
  } else {
    ASSERT_OK(bootstrap_->barrier());  // no progress here until rank 0 gave up waiting
  }
  barrier_with_progress();
}

TEST_F(UcxTest, BadInputsFailWithAMessage) {
  uint8_t byte = 0;
  MemoryRegion region;
  EXPECT_EQ(MemoryRegion::map(context_, &byte, 0, UCS_MEMORY_TYPE_HOST, &region),
            TCA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tca::last_error_message()).find("zero bytes"), std::string::npos);
  RemoteKey key;
  EXPECT_EQ(RemoteKey::unpack(endpoints_[rank_], &byte, 0, &key), TCA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(key.get(), nullptr);
}

TEST(UcxStatus, FailuresNameTheCallAndUcxStatus) {
  Request request;
  EXPECT_EQ(Request::adopt(UCS_STATUS_PTR(UCS_ERR_NO_MEMORY), "ucp_put_nbx", &request),
            TCA_ERROR_OUT_OF_MEMORY);
  const std::string message = tca::last_error_message();
  EXPECT_NE(message.find("ucp_put_nbx failed"), std::string::npos) << message;
  EXPECT_NE(message.find(ucs_status_string(UCS_ERR_NO_MEMORY)), std::string::npos) << message;
  EXPECT_EQ(result_of(UCS_ERR_CONNECTION_RESET), TCA_ERROR_PEER_FAILED);
  EXPECT_EQ(result_of(UCS_ERR_ENDPOINT_TIMEOUT), TCA_ERROR_PEER_FAILED);
  EXPECT_EQ(result_of(UCS_ERR_UNSUPPORTED), TCA_ERROR_UNSUPPORTED);
  EXPECT_EQ(result_of(UCS_ERR_IO_ERROR), TCA_ERROR_TRANSPORT);
  EXPECT_EQ(result_of(UCS_OK), TCA_SUCCESS);
  Request done;
  EXPECT_EQ(Request::adopt(UCS_STATUS_PTR(UCS_OK), "ucp_put_nbx", &done), TCA_SUCCESS);
  EXPECT_EQ(done.test(), UCS_OK);
}

}  // namespace
