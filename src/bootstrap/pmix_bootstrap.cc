// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The PMIx bootstrap: ranks and size from the PMIx server that started this process (srun
// --mpi=pmix, Open MPI's and PRRTE's launchers), exchanges as put / commit / fence / get of
// byte objects under keys unique to each exchange, every fence bounded by the timeout.
#include <pmix.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "bootstrap/bootstrap.h"

namespace tca {
namespace {

// Exchanges of earlier jobs of this process stay in the server: every job numbers its keys anew.
int g_epoch = 0;

// One PMIx session per process, from the first job to exit: a server may count a finalized
// process as gone, so a job after tcaFinalize keeps the session the first one opened.
pmix_status_t g_session = PMIX_ERR_INIT;
pmix_proc_t g_me;

void end_session() { PMIx_Finalize(nullptr, 0); }

pmix_status_t open_session(pmix_proc_t* me) {
  if (g_session != PMIX_SUCCESS) {
    PMIX_PROC_CONSTRUCT(&g_me);
    g_session = PMIx_Init(&g_me, nullptr, 0);
    if (g_session == PMIX_SUCCESS) std::atexit(end_session);
  }
  *me = g_me;
  return g_session;
}

class PmixBootstrap final : public Bootstrap {
 public:
  PmixBootstrap(const pmix_proc_t& me, int size, int timeout_ms)
      : me_(me), size_(size), timeout_ms_(timeout_ms), epoch_(++g_epoch) {}
  PmixBootstrap(const PmixBootstrap&) = delete;
  PmixBootstrap& operator=(const PmixBootstrap&) = delete;
  ~PmixBootstrap() override = default;

  int rank() const override { return static_cast<int>(me_.rank); }
  int size() const override { return size_; }
  const char* name() const override { return "pmix"; }
  void set_timeout_ms(int timeout_ms) override { timeout_ms_ = timeout_ms; }

  tcaResult allgather(const void* mine, void* all, size_t bytes) override {
    const std::string key = next_key();
    TCA_CHECK(put(key, mine, bytes));
    TCA_CHECK(fence(true));
    for (int r = 0; r < size_; ++r)
      TCA_CHECK(
          get(key, r, static_cast<unsigned char*>(all) + static_cast<size_t>(r) * bytes, bytes));
    return TCA_SUCCESS;
  }

  tcaResult broadcast(void* data, size_t bytes, int root) override {
    if (root < 0 || root >= size_)
      TCA_FAIL(TCA_ERROR_INVALID_RANK, "broadcast from rank {} outside [0, {})", root, size_);
    const std::string key = next_key();
    if (rank() == root) TCA_CHECK(put(key, data, bytes));
    TCA_CHECK(fence(true));
    if (rank() != root) TCA_CHECK(get(key, root, data, bytes));
    return TCA_SUCCESS;
  }

  tcaResult barrier() override { return fence(false); }

 private:
  std::string next_key() { return "tca." + std::to_string(epoch_) + "." + std::to_string(++seq_); }

  tcaResult put(const std::string& key, const void* data, size_t bytes) {
    TCA_TRACE("pmix put {} of {} bytes", key, bytes);
    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = static_cast<char*>(const_cast<void*>(data));
    value.data.bo.size = bytes;
    pmix_status_t status = PMIx_Put(PMIX_GLOBAL, key.c_str(), &value);
    if (status == PMIX_SUCCESS) status = PMIx_Commit();
    if (status != PMIX_SUCCESS)
      TCA_FAIL(TCA_ERROR_TRANSPORT, "PMIx_Put/Commit of {}: {}", key, PMIx_Error_string(status));
    return TCA_SUCCESS;
  }

  tcaResult fence(bool collect) {
    TCA_TRACE("pmix fence after exchange {} (collect {})", seq_, collect);
    pmix_proc_t all;
    PMIX_PROC_CONSTRUCT(&all);
    std::memcpy(all.nspace, me_.nspace, sizeof all.nspace);
    all.rank = PMIX_RANK_WILDCARD;
    pmix_info_t info[2];
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    const int seconds = std::max(1, (timeout_ms_ + 999) / 1000);
    const bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &seconds, PMIX_INT);
    PMIX_INFO_LOAD(&info[1], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    const pmix_status_t status = PMIx_Fence(&all, 1, info + 1, collect ? 1 : 0);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (status == PMIX_ERR_TIMEOUT)
      TCA_FAIL(TCA_ERROR_TIMEOUT, "a PMIx fence of {} ranks did not complete within {} s", size_,
               seconds);
    if (status != PMIX_SUCCESS)
      TCA_FAIL(TCA_ERROR_PEER_FAILED, "PMIx_Fence: {}", PMIx_Error_string(status));
    return TCA_SUCCESS;
  }

  tcaResult get(const std::string& key, int from, void* out, size_t bytes) {
    pmix_proc_t proc;
    PMIX_PROC_CONSTRUCT(&proc);
    std::memcpy(proc.nspace, me_.nspace, sizeof proc.nspace);
    proc.rank = static_cast<pmix_rank_t>(from);
    pmix_value_t* value = nullptr;
    const pmix_status_t status = PMIx_Get(&proc, key.c_str(), nullptr, 0, &value);
    if (status != PMIX_SUCCESS || value == nullptr)
      TCA_FAIL(TCA_ERROR_TRANSPORT, "PMIx_Get of {} from rank {}: {}", key, from,
               PMIx_Error_string(status));
    const bool fits = value->type == PMIX_BYTE_OBJECT && value->data.bo.size == bytes;
    if (fits && bytes > 0) std::memcpy(out, value->data.bo.bytes, bytes);
    const size_t got = value->type == PMIX_BYTE_OBJECT ? value->data.bo.size : 0;
    PMIX_VALUE_RELEASE(value);
    if (!fits)
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
               "the ranks disagree: rank {} gave {} bytes to exchange {}, this rank {}", from, got,
               key, bytes);
    return TCA_SUCCESS;
  }

  pmix_proc_t me_;
  int size_;
  int timeout_ms_;
  int epoch_;
  uint64_t seq_ = 0;
};

}  // namespace

tcaResult make_pmix_bootstrap(int timeout_ms, std::unique_ptr<Bootstrap>* out) {
  pmix_proc_t me;
  pmix_status_t status = open_session(&me);
  if (status != PMIX_SUCCESS)
    TCA_FAIL(TCA_ERROR_TRANSPORT,
             "PMIx_Init: {} (TCA_BOOTSTRAP=pmix needs a PMIx server: srun --mpi=pmix, mpirun, "
             "prterun)",
             PMIx_Error_string(status));
  pmix_proc_t job;
  PMIX_PROC_CONSTRUCT(&job);
  std::memcpy(job.nspace, me.nspace, sizeof job.nspace);
  job.rank = PMIX_RANK_WILDCARD;
  pmix_value_t* value = nullptr;
  status = PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &value);
  if (status != PMIX_SUCCESS || value == nullptr || value->type != PMIX_UINT32) {
    if (value != nullptr) PMIX_VALUE_RELEASE(value);
    TCA_FAIL(TCA_ERROR_TRANSPORT, "PMIx_Get of the job's size: {}", PMIx_Error_string(status));
  }
  const int size = static_cast<int>(value->data.uint32);
  PMIX_VALUE_RELEASE(value);
  *out = std::make_unique<PmixBootstrap>(me, size, timeout_ms);
  return TCA_SUCCESS;
}

}  // namespace tca
