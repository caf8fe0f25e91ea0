// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A job in which one rank dies by SIGKILL in the middle of an exchange.
//
// Usage: tca_killed_rank TRANSPORT [finalize]   (under mpirun, at least 2 ranks;
//        run_killed_rank.sh)
//
// Round after round every survivor puts a block into the victim (the last rank) and notifies
// it; the victim answers each survivor with a chained transfer and a notification. In round
// kKillRound the victim starts its answer to rank 0 and kills itself before answering anyone
// else. Survivors keep going until a tca call fails, print one line
//   survivor R: CALL returned RESULT_NAME after S s: MESSAGE
// and leave at once, or with "finalize" call tcaFinalize first and print
//   survivor R: tcaFinalize returned RESULT_NAME after S s
// (it must return, whatever it says: the victim is gone). They exit 0 when the failure was
// TCA_ERROR_PEER_FAILED or TCA_ERROR_TIMEOUT, non-zero otherwise.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "test_util.h"

namespace {

constexpr int kTimeoutMs = 5000;  // a wait on the dead rank gives up after this
constexpr int kKillRound = 3;
constexpr int kMaxRounds = 50;  // a survivor that sees no error by then has failed
constexpr size_t kBlockBytes = 64 * 1024;
constexpr size_t kAnswerBytes = 4 * 1024 * 1024;  // large, so the kill lands mid-transfer
constexpr int kRequestSlot = 0;
constexpr int kAnswerSlot = 1;

double g_start = 0;
int g_rank = -1;
bool g_finalize = false;

// Leaves without finalizing: reports `call`'s failure and exits by its verdict.
[[noreturn]] void survivor_exit(const char* call, tcaResult result) {
  const bool expected = result == TCA_ERROR_PEER_FAILED || result == TCA_ERROR_TIMEOUT;
  std::printf("survivor %d: %s returned %s after %.1f s: %s\n", g_rank, call,
              tca_test::result_name(result), tca_test::seconds_since(g_start),
              tcaGetLastErrorMessage());
  std::fflush(stdout);
  if (g_finalize) {
    const tcaResult finalized = tcaFinalize();
    std::printf("survivor %d: tcaFinalize returned %s after %.1f s\n", g_rank,
                tca_test::result_name(finalized), tca_test::seconds_since(g_start));
    std::fflush(stdout);
  }
  std::_Exit(expected ? 0 : 1);
}

#define SURVIVOR_CALL(call)                                    \
  do {                                                         \
    const tcaResult result_ = (call);                          \
    if (result_ != TCA_SUCCESS) survivor_exit(#call, result_); \
  } while (0)

// Set-up failures before the kill are plain failures of the program.
#define SETUP_CALL(call)                                                      \
  do {                                                                        \
    const tcaResult result_ = (call);                                         \
    if (result_ != TCA_SUCCESS) {                                             \
      std::printf("rank %d: set-up call %s returned %s: %s\n", g_rank, #call, \
                  tca_test::result_name(result_), tcaGetLastErrorMessage());  \
      std::fflush(stdout);                                                    \
      std::_Exit(2);                                                          \
    }                                                                         \
  } while (0)

void run_victim(int size, uint8_t* region, const std::vector<tcaHandle>& handles) {
  tcaHandle own = handles[g_rank];
  for (int round = 0;; ++round) {
    for (int survivor = 0; survivor < size - 1; ++survivor) {
      SETUP_CALL(tcaWaitDMARecvDesc(survivor, kRequestSlot, nullptr));
      tcaDesc answer = nullptr;
      SETUP_CALL(tcaDescNew(&answer));
      SETUP_CALL(tcaDescSetMemcpy(answer, &handles[survivor], 0, &own, 0, kAnswerBytes,
                                  TCA_FLAG_NOTIFY, kAnswerSlot));
      SETUP_CALL(tcaDescSet(answer, 0));
      SETUP_CALL(tcaStartDMADesc(answer));
      if (round == kKillRound) {
        std::printf("victim %d: killing itself in round %d after %.1f s\n", g_rank, round,
                    tca_test::seconds_since(g_start));
        std::fflush(stdout);
        raise(SIGKILL);
      }
      SETUP_CALL(tcaWaitDMAC(0));
      SETUP_CALL(tcaDescFree(answer));
    }
    region[0] = static_cast<uint8_t>(round);  // keep the region in use
  }
}

void run_survivor(int victim, uint8_t* region, const std::vector<tcaHandle>& handles) {
  for (int round = 0; round < kMaxRounds; ++round) {
    SURVIVOR_CALL(tcaPut(&handles[victim], g_rank * kBlockBytes, region, kBlockBytes));
    SURVIVOR_CALL(tcaNotify(victim, kRequestSlot));
    SURVIVOR_CALL(tcaWaitDMARecvDesc(victim, kAnswerSlot, nullptr));
  }
  std::printf("survivor %d: no error in %d rounds with a dead peer\n", g_rank, kMaxRounds);
  std::fflush(stdout);
  std::_Exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::strcmp(argv[2], "finalize") != 0)) {
    std::fprintf(stderr, "usage: %s TRANSPORT [finalize]\n", argv[0]);
    return 2;
  }
  g_finalize = argc == 3;
  g_start = tca_test::now_seconds();
  tcaConfig config{};
  config.transport = argv[1];
  config.timeout_ms = kTimeoutMs;
  SETUP_CALL(tcaInitWithConfig(&config));
  int size = 0;
  SETUP_CALL(tcaRank(&g_rank));
  SETUP_CALL(tcaSize(&size));
  if (size < 2) {
    std::printf("rank %d: needs at least 2 ranks\n", g_rank);
    return 2;
  }
  const size_t region_bytes = std::max(kAnswerBytes, kBlockBytes * size);
  void* block = nullptr;
  SETUP_CALL(tcaMalloc(&block, region_bytes, TCA_MEM_CPU));
  auto* region = static_cast<uint8_t*>(block);
  std::memset(region, g_rank, region_bytes);
  tcaHandle own{};
  SETUP_CALL(tcaCreateHandle(&own, region, region_bytes, TCA_MEM_CPU));
  std::vector<tcaHandle> handles(size);
  SETUP_CALL(tcaAllgatherHandles(&own, handles.data()));
  SETUP_CALL(tcaBarrier());

  const int victim = size - 1;
  if (g_rank == victim) {
    run_victim(size, region, handles);
  } else {
    run_survivor(victim, region, handles);
  }
  return 1;  // not reached
}
