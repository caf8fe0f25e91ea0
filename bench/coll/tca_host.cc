// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-coll's host-called tca collectives: tcaCollStart + tcaCollWait per call, on either memory.
#include "coll.h"
#include "tca_harness/check.h"

namespace tca_coll_bench {

using tca_harness::check;

void CollFree::operator()(tcaColl coll) const { check(tcaCollFree(coll), "tcaCollFree"); }

CollPtr new_collective(const Shape& shape, const Buffers& buffers, tcaCollAlgorithm algorithm,
                       unsigned resident_idle_us) {
  tcaCollConfig config{};
  config.algorithm = algorithm;
  config.memory = buffers.memory;
  config.resident_idle_us = resident_idle_us;
  tcaColl coll = nullptr;
  check(tcaCollNew(&coll, shape.kind, shape.type, shape.op, shape.count, buffers.send, buffers.recv,
                   &config),
        "tcaCollNew");
  return CollPtr(coll);
}

namespace {

// Host-called: tcaCollStart + tcaCollWait per call (with resident_idle_us: served by a resident
// kernel where the object runs in one block).
class TcaCollective final : public Implementation {
 public:
  TcaCollective(const Shape& shape, const Buffers& buffers, tcaCollAlgorithm algorithm,
                unsigned resident_idle_us)
      : coll_(new_collective(shape, buffers, algorithm, resident_idle_us)),
        memory_(buffers.memory) {}
  void run(int calls) override {
    for (int i = 0; i < calls; ++i) {
      check(tcaCollStart(coll_.get()), "tcaCollStart");
      check(tcaCollWait(coll_.get()), "tcaCollWait");
    }
  }
  void describe(Row* row) const override {
    if (memory_ == TCA_MEM_GPU) describe_program(coll_.get(), row);
  }

 private:
  CollPtr coll_;
  tcaMemKind memory_;
};

}  // namespace

std::unique_ptr<Implementation> open_tca_host(const Shape& shape, const Buffers& buffers,
                                              tcaCollAlgorithm algorithm,
                                              unsigned resident_idle_us) {
  return std::make_unique<TcaCollective>(shape, buffers, algorithm, resident_idle_us);
}

}  // namespace tca_coll_bench
