// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Deliberately hung jobs of 4 ranks (under tca-run), one per common case, for the state dumps
// and their merged diagnosis (tca-report --hang). Run with TCA_DUMP_ON_TIMEOUT=1,
// TCA_DUMP_SIGNAL=USR1, TCA_DUMP_FILE=DIR and a short TCA_TIMEOUT_MS: the ranks that wait time
// out (or see the dead peer) and dump; the others take the dump signal while the job is hung
// and dump at their next call. Each rank exits 0 when it saw what the case expects.
//   missing_notify: rank 3 waits for slot 5 from rank 1, which never notifies.
//   wrong_slot:     rank 1 kicks a chain that notifies rank 3 on slot 6; rank 3 waits on slot 5.
//   skipped_coll:   ranks 0, 1 and 3 start an allreduce that rank 2 never starts.
//   dead_peer:      rank 2 exits; rank 0 waits for slot 1 from it.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tca/tca.h"
#include "tca/tca_coll.h"

namespace {

int g_rank = 0;
constexpr int kLongMs = 30000;  // set-up and the closing barrier, far beyond the hang's timeout

bool check(tcaResult result, const char* call) {
  if (result == TCA_SUCCESS) return true;
  std::fprintf(stderr, "[rank %d] %s failed: %s\n", g_rank, call, tcaGetLastErrorMessage());
  return false;
}
#define CHECK(call) \
  if (!check((call), #call)) return 1

// The awaited failure: `expected`, with its message shown (the test checks what it names).
bool expect_failure(tcaResult result, tcaResult expected, const char* call) {
  std::fprintf(stderr, "[rank %d] %s: %s\n", g_rank, call, tcaGetLastErrorMessage());
  if (result == expected) return true;
  std::fprintf(stderr, "[rank %d] %s returned %d, expected %d\n", g_rank, call, result, expected);
  return false;
}

// A rank that is not waiting: takes the dump signal, and dumps at its next call.
int dump_on_signal() {
  raise(SIGUSR1);
  int arrived = 0;
  CHECK(tcaTestDMARecvDesc(TCA_ANY_RANK, 0, &arrived, nullptr));
  return arrived == 0 ? 0 : 1;
}

int missing_notify(int hang_ms) {
  if (g_rank == 3) {
    CHECK(tcaSetTimeout(hang_ms));
    if (!expect_failure(tcaWaitDMARecvDesc(1, 5, nullptr), TCA_ERROR_TIMEOUT, "wait")) return 1;
    CHECK(tcaSetTimeout(kLongMs));
    return 0;
  }
  return dump_on_signal();
}

int wrong_slot(int hang_ms) {
  const size_t bytes = 64;
  void* buffer = nullptr;
  tcaHandle mine{};
  std::vector<tcaHandle> all(4);
  CHECK(tcaMalloc(&buffer, bytes, TCA_MEM_CPU));
  CHECK(tcaCreateHandle(&mine, buffer, bytes, TCA_MEM_CPU));
  CHECK(tcaAllgatherHandles(&mine, all.data()));
  int status = 0;
  if (g_rank == 1) {
    tcaDesc chain = nullptr;
    CHECK(tcaDescNew(&chain));
    CHECK(tcaDescSetMemcpy(chain, &all[3], 0, &all[1], 0, bytes, TCA_FLAG_NOTIFY, 6));
    CHECK(tcaDescSet(chain, 0));
    CHECK(tcaStartDMADesc(chain));
    CHECK(tcaWaitDMAC(0));
    status = dump_on_signal();
    CHECK(tcaDescFree(chain));
  } else if (g_rank == 3) {
    CHECK(tcaSetTimeout(hang_ms));
    if (!expect_failure(tcaWaitDMARecvDesc(1, 5, nullptr), TCA_ERROR_TIMEOUT, "wait")) status = 1;
    CHECK(tcaSetTimeout(kLongMs));
    CHECK(tcaWaitDMARecvDesc(1, 6, nullptr));  // the notification that did come
  } else {
    status = dump_on_signal();
  }
  CHECK(tcaBarrier());
  CHECK(tcaDestroyHandle(&mine));
  CHECK(tcaFree(buffer));
  return status;
}

int skipped_coll(int hang_ms) {
  std::vector<float> send(256, 1.0f), recv(256, 0.0f);
  tcaColl coll = nullptr;
  CHECK(tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_FLOAT, TCA_SUM, send.size(), send.data(),
                   recv.data(), nullptr));
  int status = 0;
  if (g_rank == 2) {
    status = dump_on_signal();
  } else {
    CHECK(tcaSetTimeout(hang_ms));
    const tcaResult started = tcaCollStart(coll);
    const tcaResult result = started == TCA_SUCCESS ? tcaCollWait(coll) : started;
    if (!expect_failure(result, TCA_ERROR_TIMEOUT, "allreduce")) status = 1;
    CHECK(tcaSetTimeout(kLongMs));
  }
  CHECK(tcaBarrier());
  CHECK(tcaCollFree(coll));
  return status;
}

int dead_peer(int hang_ms) {
  if (g_rank == 2) _exit(0);  // dies without a word
  if (g_rank != 0) _exit(0);  // the others leave too: the job cannot finish collectively
  CHECK(tcaSetTimeout(hang_ms));
  const bool ok =
      expect_failure(tcaWaitDMARecvDesc(2, 1, nullptr), TCA_ERROR_PEER_FAILED, "wait for rank 2");
  _exit(ok ? 0 : 1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s missing_notify|wrong_slot|skipped_coll|dead_peer\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  CHECK(tcaInit());
  CHECK(tcaRank(&g_rank));
  int size = 0, hang_ms = 0;
  CHECK(tcaSize(&size));
  CHECK(tcaGetTimeout(&hang_ms));
  if (size != 4) {
    std::fprintf(stderr, "run on 4 ranks\n");
    return 2;
  }
  CHECK(tcaSetTimeout(kLongMs));
  CHECK(tcaBarrier());
  int status = 2;
  if (mode == "missing_notify") status = missing_notify(hang_ms);
  if (mode == "wrong_slot") status = wrong_slot(hang_ms);
  if (mode == "skipped_coll") status = skipped_coll(hang_ms);
  if (mode == "dead_peer") status = dead_peer(hang_ms);
  if (mode == "missing_notify") CHECK(tcaBarrier());
  CHECK(tcaFinalize());
  return status;
}
