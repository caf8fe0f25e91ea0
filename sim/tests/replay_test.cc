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

// tca-pingpong on one H200 shared by two ranks (three of its rows, trimmed by
// data/trim_pingpong_trace.py from a trace taken there), replayed on h200-shared: the run and
// every row within 15% of the times the trace recorded.
TEST(ReplayTest, RecordedPingPongOnOneSharedGpu) {
  const TraceJob tj = job_from_traces(read_trace_dir(std::string(TCA_SIM_TEST_DATA) + "/pingpong-h200-shared"), true);
  auto f = built("h200-shared", 2);
  const Result r = simulate(*f, tj.job);
  EXPECT_NEAR(r.makespan / tj.measured, 1.0, 0.15) << "model " << r.makespan << " s, measured " << tj.measured << " s";
  for (const char* row : {"cuda.ce.gpu>gpu.8", "cuda.ce.cpu>gpu.32768", "cuda.sm.gpu>cpu.262144"}) {
    ASSERT_TRUE(r.phases.count(row)) << row;
    ASSERT_TRUE(tj.measured_phases.count(row)) << row;
    const double model = r.phases.at(row).max_seconds, measured = tj.measured_phases.at(row).max_seconds;
    EXPECT_GT(measured, 0) << row;
    EXPECT_NEAR(model / measured, 1.0, 0.15) << row << ": model " << model << " s, measured " << measured << " s";
  }
  EXPECT_EQ(r.phases.size(), 3u);
}

TEST(ReplayTest, SegmentsEndWithTheWaitTheirRowRaised) {
  const TraceJob tj = job_from_traces(read_trace_dir(std::string(TCA_SIM_TEST_DATA) + "/pingpong-h200-shared"), true);
  // 63 round trips a row (the check of each size, warm-up and 3 batches of 20): both ranks kick
  // 63 times in each row; one begin/end pair per rank and row.
  ASSERT_EQ(tj.measured_phases.size(), 3u);
  for (const auto& [row, total] : tj.measured_phases) EXPECT_EQ(total.count, 2) << row;
  for (const Program& program : tj.job.ranks) {
    std::string open;
    long kicks = 0, waits = 0;
    for (const Step& step : program) {
      if (step.kind == Step::kPhaseBegin) {
        EXPECT_TRUE(open.empty());
        open = step.name;
        kicks = waits = 0;
      } else if (step.kind == Step::kPhaseEnd) {
        EXPECT_EQ(step.name, open);
        EXPECT_EQ(kicks, 63) << open;
        // Rank 0 waits for each answer inside the row; rank 1's first wait comes before the
        // row's first kick and its wait for the next row after the row's end.
        EXPECT_TRUE(waits == 63 || waits == 62) << open << ": " << waits;
        open.clear();
      } else if (!open.empty() && step.kind == Step::kKick) {
        ++kicks;
      } else if (!open.empty() && step.kind == Step::kWait) {
        ++waits;
      }
    }
    EXPECT_TRUE(open.empty());
  }
}

}  // namespace
}  // namespace tca_sim
