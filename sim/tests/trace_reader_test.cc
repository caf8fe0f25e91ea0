// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The trace reader: recorded traces (data/), and malformed traces whose errors name the line.
#include "trace_reader.h"

#include <gtest/gtest.h>

namespace tca_sim {
namespace {

const char* kHeader =
    "tca-trace 1 rank=0 world=2 host=00000000000000aa clock=steady_ns start=1000 pid=7\n";

std::string error_of(const std::string& text) {
  try {
    parse_rank_trace(text, "r.trace");
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(TraceReaderTest, SmallTrace) {
  const std::string text = std::string(kHeader) +
                           "100 phase_begin name=X\n"
                           "200 kick dur=50 id=1 chain=7ca0 channel=0 n=2\n"
                           "200 xfer kick=1 src=0 dst=1 width=64 count=4 spitch=128 dpitch=64 "
                           "skind=cpu dkind=gpu path=shm notify=-1\n"
                           "200 xfer kick=1 src=0 dst=1 width=8 count=1 spitch=8 dpitch=8 "
                           "skind=cpu dkind=cpu path=shm notify=3\n"
                           "400 wait dur=100 peer=-1 slot=3 from=1\n"
                           "600 phase_end name=X\n"
                           "700 end\n";
  const RankTrace t = parse_rank_trace(text, "r.trace");
  EXPECT_EQ(t.rank, 0);
  EXPECT_EQ(t.world, 2);
  EXPECT_EQ(t.start, 1000u);
  ASSERT_EQ(t.events.size(), 7u);
  EXPECT_EQ(t.events[1].dur, 50u);
  RankTrace other = t;
  other.rank = 1;
  other.events = {t.events.back()};
  const TraceJob job = job_from_traces({t, other});
  ASSERT_EQ(job.job.ranks.size(), 2u);
  const Program& p = job.job.ranks[0];
  // phase, compute, kick, compute, wait, compute, phase end, compute up to the end
  std::vector<Step::Kind> kinds;
  for (const Step& s : p) kinds.push_back(s.kind);
  EXPECT_EQ(kinds, (std::vector<Step::Kind>{Step::kPhaseBegin, Step::kCompute, Step::kKick,
                                            Step::kCompute, Step::kWait, Step::kCompute,
                                            Step::kPhaseEnd, Step::kCompute}));
  const Step& kick = p[2];
  ASSERT_EQ(kick.messages.size(), 2u);
  EXPECT_DOUBLE_EQ(kick.messages[0].bytes, 256);
  EXPECT_EQ(kick.messages[0].dst_kind, MemKind::kGpu);
  EXPECT_EQ(kick.messages[1].notify_slot, 3);
  EXPECT_EQ(p[4].peer, 1);                 // a wait for any rank waits for the one it got
  EXPECT_DOUBLE_EQ(p[3].seconds, 150e-9);  // 250 (kick end) to 400
  EXPECT_DOUBLE_EQ(job.measured, 600e-9);
  EXPECT_DOUBLE_EQ(job.measured_phases.at("X").seconds, 500e-9);
  EXPECT_EQ(job.kicks, 1);
  EXPECT_EQ(job.transfers, 2);
}

TEST(TraceReaderTest, MalformedTracesNameTheLine) {
  EXPECT_NE(error_of("").find("r.trace:1: empty trace"), std::string::npos);
  EXPECT_NE(error_of("tca-log 1\n").find("r.trace:1: not a tca trace"), std::string::npos);
  EXPECT_NE(error_of("tca-trace 2 rank=0\n").find("r.trace:1: trace format version"),
            std::string::npos);
  EXPECT_NE(error_of("tca-trace 1 rank=0 world=2 clock=steady_ns start=1\n")
                .find("r.trace:1: header without host="),
            std::string::npos);
  const std::string h = kHeader;
  EXPECT_NE(
      error_of(h + "10 kick dur=1 n=1\n20 end\n").find("r.trace:3: kick announced 1 more xfer"),
      std::string::npos);
  EXPECT_NE(error_of(h + "10 xfer src=0\n").find("r.trace:2: xfer without a kick"),
            std::string::npos);
  EXPECT_NE(error_of(h + "10 jump\n").find("r.trace:2: unknown event 'jump'"), std::string::npos);
  EXPECT_NE(error_of(h + "x wait\n").find("r.trace:2: time 'x'"), std::string::npos);
  EXPECT_NE(error_of(h + "10 wait dur=-3\n").find("r.trace:2: dur '-3'"), std::string::npos);
  EXPECT_NE(error_of(h + "10 wait slot\n").find("r.trace:2: expected key=value"),
            std::string::npos);
  EXPECT_NE(error_of(h + "20 end\n10 wait\n").find("r.trace:3: event after 'end'"),
            std::string::npos);
  EXPECT_NE(error_of(h + "20 drain dur=1\n10 drain dur=1\n").find("r.trace:3: time goes backwards"),
            std::string::npos);
  EXPECT_NE(error_of(h + "20 drain dur=1\n").find("no 'end' line"), std::string::npos);
  const std::string bad_kind =
      h + "10 kick dur=1 n=1\n10 xfer src=0 dst=1 width=8 count=1 skind=hbm dkind=cpu\n20 end\n";
  RankTrace t = parse_rank_trace(bad_kind, "r.trace");
  try {
    job_from_traces({t});
    FAIL() << "a memory kind 'hbm' was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("r.trace:3:"), std::string::npos) << error.what();
  }
}

TEST(TraceReaderTest, RecordedTraces) {
  for (const char* dir : {"coll2", "cg2"}) {
    const std::vector<RankTrace> traces =
        read_trace_dir(std::string(TCA_SIM_TEST_DATA) + "/" + dir);
    ASSERT_EQ(traces.size(), 2u) << dir;
    const TraceJob job = job_from_traces(traces);
    EXPECT_TRUE(job.common_clock) << dir;
    EXPECT_GT(job.kicks, 0) << dir;
    EXPECT_GT(job.waits, 0) << dir;
    EXPECT_GT(job.measured, 0) << dir;
  }
}

TEST(TraceReaderTest, MissingRanksAreAnError) {
  EXPECT_THROW(read_trace_dir(std::string(TCA_SIM_TEST_DATA) + "/no-such-folder"), Error);
  EXPECT_THROW(read_trace_dir(std::string(TCA_SIM_TEST_DATA) + "/one-rank-of-two"), Error);
}

}  // namespace
}  // namespace tca_sim
