// Replay: a small recorded trace on the description of the machine it was taken on, and the
// order a replay honours (a wait ends after its notification, a chain's transfers in order).
#include <gtest/gtest.h>

#include "trace_reader.h"

namespace tca_sim {
namespace {

std::unique_ptr<Fabric> built(const std::string& name, int nodes) {
  auto f = Fabric::load(TCA_SIM_FABRIC_DIR, name);
  f->build(nodes);
  return f;
}

TEST(ReplayTest, WaitEndsAfterItsNotification) {
  auto f = built("peach2", 2);
  Job job;
  job.ranks.resize(2);
  Step compute;
  compute.kind = Step::kCompute;
  compute.seconds = 10e-6;
  Step kick;
  kick.kind = Step::kKick;
  Message m;
  m.dst_rank = 1;
  m.bytes = 8;
  m.notify_slot = 2;
  kick.messages = {m};
  job.ranks[0] = {compute, kick};
  Step wait;
  wait.kind = Step::kWait;
  wait.peer = 0;
  wait.slot = 2;
  job.ranks[1] = {wait};
  const Result r = simulate(*f, job);
  EXPECT_NEAR(r.rank_end[1], 10e-6 + 1.9e-6, 5e-9);  // compute, then PEACH2's 1.9 us (+ 8 B)
  EXPECT_NEAR(r.rank_end[0], 10e-6 + 1.9e-6, 5e-9);  // the chain in flight counts to its rank
}

TEST(ReplayTest, ChainRunsInOrderAndSharesLinks) {
  auto f = built("peach2", 2);
  Job job;
  job.ranks.resize(2);
  Step kick;
  kick.kind = Step::kKick;
  Message m;
  m.dst_rank = 1;
  m.bytes = 1 << 20;
  kick.messages = {m, m};
  kick.messages[1].notify_slot = 0;
  job.ranks[0] = {kick};
  Step wait;
  wait.kind = Step::kWait;
  wait.peer = 0;
  wait.slot = 0;
  job.ranks[1] = {wait};
  const Result r = simulate(*f, job);
  Request one_transfer;
  one_transfer.src = 0;
  one_transfer.dst = 1;
  one_transfer.bytes = 1 << 20;
  const double one = f->zero_load(one_transfer);
  // The second transfer starts after the first; the kick's doorbell is paid once.
  EXPECT_NEAR(r.rank_end[1], 2 * one - 0.2e-6, 1e-8);
}

TEST(ReplayTest, RecordedCollectiveTraceOnThisMachine) {
  const TraceJob tj = job_from_traces(read_trace_dir(std::string(TCA_SIM_TEST_DATA) + "/coll2"));
  auto f = built("shm-here", 2);
  const Result r = simulate(*f, tj.job);
  EXPECT_GT(r.makespan, 0);
  // The replay keeps the recorded compute time, so it cannot end before it: within 15% of the
  // measured run (the validation of docs/SIM.md, on a small trace).
  EXPECT_NEAR(r.makespan / tj.measured, 1.0, 0.15) << "model " << r.makespan << " s, measured " << tj.measured << " s";
  ASSERT_TRUE(r.phases.count("coll.allreduce"));
}

}  // namespace
}  // namespace tca_sim
