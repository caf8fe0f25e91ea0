// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
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
  EXPECT_NEAR(r.makespan / tj.measured, 1.0, 0.15)
      << "model " << r.makespan << " s, measured " << tj.measured << " s";
  ASSERT_TRUE(r.phases.count("coll.allreduce"));
}

// tca-pingpong on one H200 shared by two ranks (three of its rows, trimmed by
// data/trim_pingpong_trace.py from a trace taken there), replayed on h200-shared: the run and
// every row within 15% of the times the trace recorded.
TEST(ReplayTest, RecordedPingPongOnOneSharedGpu) {
  const TraceJob tj = job_from_traces(
      read_trace_dir(std::string(TCA_SIM_TEST_DATA) + "/pingpong-h200-shared"), true);
  auto f = built("h200-shared", 2);
  const Result r = simulate(*f, tj.job);
  EXPECT_NEAR(r.makespan / tj.measured, 1.0, 0.15)
      << "model " << r.makespan << " s, measured " << tj.measured << " s";
  for (const char* row : {"cuda.ce.gpu>gpu.8", "cuda.ce.cpu>gpu.32768", "cuda.sm.gpu>cpu.262144"}) {
    ASSERT_TRUE(r.phases.count(row)) << row;
    ASSERT_TRUE(tj.measured_phases.count(row)) << row;
    const double model = r.phases.at(row).max_seconds,
                 measured = tj.measured_phases.at(row).max_seconds;
    EXPECT_GT(measured, 0) << row;
    EXPECT_NEAR(model / measured, 1.0, 0.15)
        << row << ": model " << model << " s, measured " << measured << " s";
  }
  EXPECT_EQ(r.phases.size(), 3u);
}

TEST(ReplayTest, SegmentsEndWithTheWaitTheirRowRaised) {
  const TraceJob tj = job_from_traces(
      read_trace_dir(std::string(TCA_SIM_TEST_DATA) + "/pingpong-h200-shared"), true);
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

// tca-coll on GPU memory, 2 ranks on one H200 (its first row: the ring allreduce of 8 B, whose
// steps the GPU ran), replayed on h200-shared, whose device_latency comes from tca-topo: the run
// and the row within 15% of the times the trace recorded.
TEST(ReplayTest, RecordedGpuCollectivesOnOneSharedGpu) {
  const TraceJob tj =
      job_from_traces(read_trace_dir(std::string(TCA_SIM_TEST_DATA) + "/coll-gpu-h200-shared"));
  EXPECT_EQ(tj.kicks, 0);
  EXPECT_EQ(tj.device_collectives, 124);  // 62 a rank: 2 warm-up, 3 batches of 20
  const Result r = simulate(*built("h200-shared", 2), tj.job);
  EXPECT_NEAR(r.makespan / tj.measured, 1.0, 0.15)
      << "model " << r.makespan << " s, measured " << tj.measured << " s";
  const char* row = "allreduce.tca.ring.8";
  ASSERT_TRUE(r.phases.count(row));
  ASSERT_TRUE(tj.measured_phases.count(row));
  const double model = r.phases.at(row).max_seconds,
               measured = tj.measured_phases.at(row).max_seconds;
  EXPECT_NEAR(model / measured, 1.0, 0.15)
      << row << ": model " << model << " s, measured " << measured << " s";
}

// Collectives a GPU program ran are recorded whole (coll_begin ... steps=device): the replay
// puts the library's steps in their place, each paying h200-shared's device_latency, and drops
// the recorded time between begin and end; the time outside them stays as recorded.
TEST(ReplayTest, CollectivesRunByTheGpuAreModelled) {
  auto trace_of = [](int rank, const std::string& steps) {
    std::string text = "tca-trace 1 rank=" + std::to_string(rank) +
                       " world=2 host=00000000000000aa clock=steady_ns start=1000 pid=7\n";
    for (int i = 0; i < 3; ++i) {  // a 10 ms ring allreduce, then 1 ms of the application
      const long begin = 1000000L + i * 11000000L;
      text += std::to_string(begin) +
              " coll_begin op=allreduce algorithm=ring bytes=64 ranks=2 memory=gpu steps=" + steps +
              "\n" + std::to_string(begin + 10000000L) + " coll_end\n";
    }
    return text + "34000000 end\n";
  };
  for (const std::string steps : {"device", "host"}) {
    const TraceJob tj = job_from_traces({parse_rank_trace(trace_of(0, steps), "rank-0.trace"),
                                         parse_rank_trace(trace_of(1, steps), "rank-1.trace")});
    const Result r = simulate(*built("h200-shared", 2), tj.job);
    EXPECT_NEAR(tj.measured, 33e-3, 1e-9);  // first event to the end
    if (steps == "host") {  // nothing between begin and end: the recorded time is kept
      EXPECT_EQ(tj.device_collectives, 0);
      EXPECT_NEAR(r.makespan, 33e-3, 1e-6) << steps;
      continue;
    }
    EXPECT_EQ(tj.device_collectives, 6);
    // Each allreduce: a reduce-scatter and an allgather step of 32 B, 2246 us each; the 1 ms
    // after each is the application's.
    const double step = 2246e-6;
    EXPECT_NEAR(r.makespan, 3 * (1e-3 + 2 * step), 1e-6);
    ASSERT_TRUE(r.phases.count("coll.allreduce"));
    EXPECT_NEAR(r.phases.at("coll.allreduce").max_seconds, 3 * 2 * step, 1e-6);
  }
  // What a replay cannot model is an error naming the line.
  const std::string bad =
      "tca-trace 1 rank=0 world=1 host=00000000000000aa clock=steady_ns start=1000 pid=7\n"
      "10 coll_begin op=allreduce algorithm=ring bytes=8 ranks=1 steps=later\n20 coll_end\n30 "
      "end\n";
  try {
    job_from_traces({parse_rank_trace(bad, "b.trace")});
    FAIL() << "steps=later was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("b.trace:2: steps='later'"), std::string::npos)
        << error.what();
  }
  const std::string part =
      "tca-trace 1 rank=0 world=1 host=00000000000000aa clock=steady_ns start=1000 pid=7\n"
      "10 coll_begin op=allreduce algorithm=ring bytes=8 ranks=4 steps=device\n20 coll_end\n30 "
      "end\n";
  EXPECT_THROW(job_from_traces({parse_rank_trace(part, "p.trace")}), Error);
}

}  // namespace
}  // namespace tca_sim
