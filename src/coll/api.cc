// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The public C API of the persistent collectives: argument checks, then the object works.
#include <memory>
#include <set>

#include "coll/collective.h"
#include "coll/status.h"
#include "core/reserved.h"

namespace {

// Every object tcaCollNew returned and tcaCollFree has not freed, so that a stale or forged
// tcaColl is an error instead of a crash.
std::set<const tcaColl_st*>& live_objects() {
  static std::set<const tcaColl_st*> objects;
  return objects;
}

}  // namespace

tcaResult tca::coll::check_live(tcaColl coll) {
  if (coll == nullptr || live_objects().count(coll) == 0)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "collective {} is not a live tcaColl",
             static_cast<const void*>(coll));
  return TCA_SUCCESS;
}

extern "C" {

size_t tcaDataTypeSize(tcaDataType type) {
  switch (type) {
    case TCA_INT32:
      return 4;
    case TCA_INT64:
      return 8;
    case TCA_FLOAT:
      return 4;
    case TCA_DOUBLE:
      return 8;
  }
  return 0;
}

const char* tcaCollAlgorithmName(tcaCollAlgorithm algorithm) {
  switch (algorithm) {
    case TCA_COLL_AUTO:
      return "auto";
    case TCA_COLL_RING:
      return "ring";
    case TCA_COLL_NEIGHBOR_EXCHANGE:
      return "neighbor_exchange";
    case TCA_COLL_RECURSIVE_DOUBLING:
      return "recursive_doubling";
    case TCA_COLL_DISSEMINATION:
      return "dissemination";
    case TCA_COLL_DIRECT:
      return "direct";
  }
  return "unknown";
}

tcaResult tcaCollNew(tcaColl* coll, tcaCollKind kind, tcaDataType type, tcaRedOp op, size_t count,
                     const void* sendbuf, void* recvbuf, const tcaCollConfig* config) {
  tca::ReservedScope reserved;  // collectives use tca's own slots and channel
  if (coll == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "coll is NULL");
  const tcaCollConfig defaults{};
  std::unique_ptr<tcaColl_st> made;
  TCA_CHECK(tcaColl_st::create(kind, type, op, count, sendbuf, recvbuf,
                               config != nullptr ? *config : defaults, &made));
  live_objects().insert(made.get());
  *coll = made.release();
  return TCA_SUCCESS;
}

tcaResult tcaCollStart(tcaColl coll) {
  tca::ReservedScope reserved;  // collectives use tca's own slots and channel
  TCA_CHECK(tca::coll::check_live(coll));
  return coll->start();
}

tcaResult tcaCollTest(tcaColl coll, int* done) {
  tca::ReservedScope reserved;  // collectives use tca's own slots and channel
  TCA_CHECK(tca::coll::check_live(coll));
  if (done == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "done is NULL");
  bool finished = false;
  TCA_CHECK(coll->progress(false, &finished));
  *done = finished ? 1 : 0;
  return TCA_SUCCESS;
}

tcaResult tcaCollWait(tcaColl coll) {
  tca::ReservedScope reserved;  // collectives use tca's own slots and channel
  TCA_CHECK(tca::coll::check_live(coll));
  bool finished = false;
  return coll->progress(true, &finished);
}

tcaResult tcaCollFree(tcaColl coll) {
  tca::ReservedScope reserved;  // collectives use tca's own slots and channel
  TCA_CHECK(tca::coll::check_live(coll));
  if (coll->running())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "the collective is running: tcaCollWait before freeing");
  // Peers may still write into this rank's buffers until every rank has finished. An object
  // whose iteration failed is freed locally: its peers may be gone (tcaTeamShrink first, so
  // that the survivors have stopped writing).
  if (!coll->failed()) TCA_CHECK(tca::coll::team_barrier(coll->team()));
  live_objects().erase(coll);
  const std::unique_ptr<tcaColl_st> owned(coll);
  return owned->release();
}

tcaResult tcaCollGetAlgorithm(tcaColl coll, tcaCollAlgorithm* algorithm) {
  tca::ReservedScope reserved;  // collectives use tca's own slots and channel
  TCA_CHECK(tca::coll::check_live(coll));
  if (algorithm == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "algorithm is NULL");
  *algorithm = coll->algorithm();
  return TCA_SUCCESS;
}

}  // extern "C"
