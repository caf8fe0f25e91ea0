// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Host-called GPU collectives: the fabric's own costs of a GPU program (the call, the work per
// step, the blocks' store rate), what a trace records of such an iteration (protocol, channels,
// how the host started it), and the replay's time of an iteration from them.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fabric.h"
#include "trace_reader.h"

namespace tca_sim {
namespace {

// A host of 4 GPUs whose flag takes 2 x 0.4 us and whose links are too fast to matter, with the
// GPU program's parameters given by `device` (lines of the file).
std::string host_text(const std::string& device) {
  return "name = t\nfamily = host\nmax_nodes = 4\nsockets = 1\nswitches_per_socket = 1\n"
         "endpoints_per_switch = 4\nendpoint_bandwidth = 1000000GB/s\nendpoint_latency = 0.4us\n"
         "switch_bandwidth = 1000000GB/s\nswitch_latency = 0.1us\n"
         "socket_bandwidth = 1000000GB/s\nsocket_latency = 0.1us\noverhead = 0us\n"
         "synchronous = 0\nnotify_overhead = 0us\nlarge_threshold = 1GiB\n"
         "large_bandwidth = 1000000GB/s\n" +
         device;
}

std::unique_ptr<Fabric> host(const std::string& device, int nodes = 4) {
  auto fabric = Fabric::from_params(ParamFile::parse(host_text(device), "t.fabric"), ".");
  fabric->build(nodes);
  return fabric;
}

std::string error_of(const std::string& text) {
  try {
    Fabric::from_params(ParamFile::parse(text, "t.fabric"), TCA_SIM_FABRIC_DIR);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

constexpr char kDevice[] =
    "device_call = 5us\ndevice_launch_call = 11us\ndevice_step = 1.5us\n"
    "device_block_bandwidth = 2GB/s\n";

TEST(DeviceProgramTest, ParametersAreOptionalAndChecked) {
  const auto none = host("");
  EXPECT_EQ(none->device_call("resident"), 0);
  EXPECT_EQ(none->device_call("launch"), 0);
  EXPECT_EQ(none->device_step(), 0);
  const auto all = host(kDevice);
  EXPECT_DOUBLE_EQ(all->device_call("resident"), 5e-6);
  EXPECT_DOUBLE_EQ(all->device_call(""), 5e-6);  // a trace that does not say: the doorbell's
  EXPECT_DOUBLE_EQ(all->device_call("launch"), 11e-6);
  EXPECT_DOUBLE_EQ(all->device_call("resident_start"), 11e-6);
  EXPECT_EQ(all->device_call("stream"), 0);  // timed on the GPU from the stream's arrival
  EXPECT_DOUBLE_EQ(all->device_step(), 1.5e-6);
  // `unmeasured` is the same as leaving the key out.
  const auto marked = host("device_call = unmeasured\ndevice_step = unmeasured\n");
  EXPECT_EQ(marked->device_call("resident"), 0);
  EXPECT_EQ(marked->device_step(), 0);
  EXPECT_EQ(none->device_program_unset().size(), 4u);
  EXPECT_TRUE(all->device_program_unset().empty());
  EXPECT_EQ(
      host("device_call = 1us\ndevice_step = unmeasured\n")->device_program_unset(),
      (std::vector<std::string>{"device_launch_call", "device_step", "device_block_bandwidth"}));
  // Wrong units, a zero rate, a misspelt value: errors naming the file and the line.
  const int line = 18;  // the first line after host_text's 17
  const std::string e1 = error_of(host_text("device_call = 5GB/s\n"));
  EXPECT_NE(e1.find("t.fabric:" + std::to_string(line) + ": device_call"), std::string::npos) << e1;
  EXPECT_NE(e1.find("not a time"), std::string::npos) << e1;
  const std::string e2 = error_of(host_text("device_block_bandwidth = 0GB/s\n"));
  EXPECT_NE(e2.find("device_block_bandwidth must be positive"), std::string::npos) << e2;
  const std::string e3 = error_of(host_text("device_step = unmeasurd\n"));
  EXPECT_NE(e3.find("t.fabric:18: device_step"), std::string::npos) << e3;
  const std::string e4 = error_of(host_text("device_step = -1us\n"));
  EXPECT_NE(e4.find("t.fabric:18"), std::string::npos) << e4;
  // Families without GPU programs do not know them.
  std::ifstream in(std::string(TCA_SIM_FABRIC_DIR) + "/peach2.fabric");
  std::stringstream peach2;
  peach2 << in.rdbuf();
  ASSERT_EQ(error_of(peach2.str()), "");
  EXPECT_NE(error_of(peach2.str() + "device_call = 5us\n").find("unknown parameter 'device_call'"),
            std::string::npos);
}

// One rank's trace of `iterations` host-called GPU collectives (coll_begin ... coll_end of
// `fields`), 1 ms apart, then the end.
std::string trace_of(int rank, int world, const std::string& fields, int iterations) {
  std::string text = "tca-trace 1 rank=" + std::to_string(rank) +
                     " world=" + std::to_string(world) +
                     " host=00000000000000aa clock=steady_ns start=1000 pid=7\n";
  long t = 1000000;
  for (int i = 0; i < iterations; ++i, t += 1000000)
    text += std::to_string(t) + " coll_begin " + fields + "\n" + std::to_string(t + 20000) +
            " coll_end\n";
  return text + std::to_string(t) + " end\n";
}

Result replay(const Fabric& fabric, const std::string& fields, int world, int iterations,
              TraceJob* out = nullptr) {
  std::vector<RankTrace> traces;
  for (int r = 0; r < world; ++r)
    traces.push_back(parse_rank_trace(trace_of(r, world, fields, iterations),
                                      "rank-" + std::to_string(r) + ".trace"));
  TraceJob tj = job_from_traces(traces);
  const Result result = simulate(fabric, tj.job);
  if (out != nullptr) *out = std::move(tj);
  return result;
}

// A host-called iteration of k steps of b bytes costs the call, k times the flag and the
// program's work per step, and b over the blocks' rate per step: recursive doubling on 4 ranks
// is 2 steps of the whole vector.
TEST(DeviceProgramTest, HostCalledIterationCostsCallStepsAndBytes) {
  const double flag = 0.8e-6, call = 5e-6, launch = 11e-6, step = 1.5e-6, block = 2e9;
  const double bytes = 64 * 1024;
  const std::string shape =
      "op=allreduce algorithm=recursive_doubling bytes=65536 ranks=4 memory=gpu steps=device";
  const auto fabric = host(kDevice);
  struct Case {
    std::string fields;
    double expected;  // one iteration
  } cases[] = {
      // 4 channels of plain stores: 4 x 2 GB/s for each step's 64 KiB.
      {shape + " protocol=simple channels=4 call=resident",
       call + 2 * (flag + step + bytes / (4 * block))},
      // The inline protocol's stores carry half data; a launch per call.
      {shape + " protocol=ll channels=4 call=launch",
       launch + 2 * (flag + step + bytes / (2 * block))},
      // A trace from before the fields: the doorbell's cost, no bound on the bytes.
      {shape, call + 2 * (flag + step)},
  };
  for (const Case& c : cases) {
    TraceJob tj;
    const Result r = replay(*fabric, c.fields, 4, 3, &tj);
    EXPECT_EQ(tj.device_collectives, 12) << c.fields;
    EXPECT_EQ(tj.device_unlabelled, c.fields == shape ? 12 : 0) << c.fields;
    ASSERT_TRUE(r.phases.count("coll.allreduce")) << c.fields;
    EXPECT_NEAR(r.phases.at("coll.allreduce").max_seconds, 3 * c.expected, 3e-9) << c.fields;
    // The recorded 1 ms between iterations (less the recorded 20 us of each) stays.
    EXPECT_NEAR(r.makespan, 3 * (c.expected + 1e-3 - 20e-6), 3e-9) << c.fields;
  }
  // Without the parameters the replay is what it was: the flags alone (the links are too fast
  // for the bytes to count).
  const Result bare = replay(*host(""), shape + " protocol=simple channels=4 call=resident", 4, 3);
  EXPECT_NEAR(bare.phases.at("coll.allreduce").max_seconds, 3 * 2 * flag, 3e-9);
}

// The ring allreduce on 4 ranks is 6 steps: six times the program's work, one call.
TEST(DeviceProgramTest, EveryStepPaysTheProgramsWork) {
  const auto fabric = host("device_call = 4us\ndevice_step = 2us\n");
  const Result r = replay(*fabric,
                          "op=allreduce algorithm=ring bytes=8 ranks=4 memory=gpu steps=device "
                          "protocol=ll channels=1 call=resident",
                          4, 2);
  EXPECT_NEAR(r.phases.at("coll.allreduce").max_seconds, 2 * (4e-6 + 6 * (0.8e-6 + 2e-6)), 3e-9);
}

// The work beyond the steps, by collective and algorithm: once per iteration, only the program's
// own; a fabric without it charges nothing (and says which programs it leaves unset).
TEST(DeviceProgramTest, ProgramWorkByCollectiveAndAlgorithm) {
  const auto fabric = host(
      "device_call = 4us\ndevice_step = 2us\ndevice_work_allgather_dissemination = 3us\n"
      "device_work_allreduce_ring = unmeasured\n");
  EXPECT_DOUBLE_EQ(fabric->device_work("allgather_dissemination"), 3e-6);
  EXPECT_TRUE(fabric->has_device_work("allgather_dissemination"));
  EXPECT_EQ(fabric->device_work("allreduce_ring"), 0);
  EXPECT_FALSE(fabric->has_device_work("allreduce_ring"));
  EXPECT_FALSE(fabric->has_device_work("allgather_ring"));
  // Dissemination's allgather on 4 ranks: 2 steps, then its work.
  TraceJob tj;
  const Result r = replay(*fabric,
                          "op=allgather algorithm=dissemination bytes=32 ranks=4 memory=gpu "
                          "steps=device protocol=ll channels=1 call=resident",
                          4, 2, &tj);
  EXPECT_EQ(tj.device_programs, (std::set<std::string>{"allgather_dissemination"}));
  EXPECT_NEAR(r.phases.at("coll.allgather").max_seconds, 2 * (4e-6 + 2 * (0.8e-6 + 2e-6) + 3e-6),
              3e-9);
  // The ring's allgather is not given: its 3 steps alone.
  const Result ring = replay(*fabric,
                             "op=allgather algorithm=ring bytes=32 ranks=4 memory=gpu "
                             "steps=device protocol=ll channels=1 call=resident",
                             4, 2);
  EXPECT_NEAR(ring.phases.at("coll.allgather").max_seconds, 2 * (4e-6 + 3 * (0.8e-6 + 2e-6)), 3e-9);
  // Misspelt keys are unknown parameters; a bad value names the line.
  EXPECT_NE(error_of(host_text("device_work_allgather_rng = 1us\n")).find("unknown parameter"),
            std::string::npos);
  EXPECT_NE(error_of(host_text("device_work_allreduce_direct = 1GB/s\n")).find("t.fabric:18"),
            std::string::npos);
}

// Stream-ordered iterations, timed on the GPU and written after the host's later lines: put in
// place by time, replayed as their steps without a call's cost; the host's time around them
// stays as recorded.
TEST(DeviceProgramTest, GpuTimedStreamIterationsArePutInPlace) {
  const std::string fields =
      "op=allreduce algorithm=recursive_doubling bytes=8 ranks=2 memory=gpu steps=device "
      "protocol=ll channels=1 call=stream timed=gpu";
  std::vector<RankTrace> traces;
  for (int r = 0; r < 2; ++r) {
    // Host phases at 0.1 and 0.9 ms; the GPU ran the iteration from 0.5 to 0.52 ms, written
    // after the second phase began (as tca writes it once its events have completed).
    const std::string text = "tca-trace 1 rank=" + std::to_string(r) +
                             " world=2 host=00000000000000aa clock=steady_ns start=1000 pid=7\n"
                             "100000 phase_begin name=A\n"
                             "110000 phase_end name=A\n"
                             "900000 phase_begin name=B\n"
                             "500000 coll_begin " +
                             fields +
                             "\n"
                             "520000 coll_end timed=gpu\n"
                             "910000 phase_end name=B\n"
                             "1000000 end\n";
    traces.push_back(parse_rank_trace(text, "rank-" + std::to_string(r) + ".trace"));
  }
  std::vector<std::string> order;
  for (const TraceEvent& e : traces[0].events) order.push_back(e.kind);
  EXPECT_EQ(order, (std::vector<std::string>{"phase_begin", "phase_end", "coll_begin", "coll_end",
                                             "phase_begin", "phase_end", "end"}));
  EXPECT_EQ(traces[0].gpu_overlaps, 0);
  const TraceJob tj = job_from_traces(traces);
  EXPECT_EQ(tj.device_collectives, 2);
  EXPECT_EQ(tj.gpu_timed, 2);
  EXPECT_NEAR(tj.measured_phases.at("coll.allreduce").seconds, 2 * 20e-6, 1e-12);
  const auto fabric = host(kDevice, 2);
  const Result r = simulate(*fabric, tj.job);
  // One step of recursive doubling on 2 ranks: the flag, the program's work and 8 bytes at one
  // block's inline rate (half of 2 GB/s); no call.
  const double modelled = 0.8e-6 + 1.5e-6 + 8 / 1e9;
  EXPECT_NEAR(r.phases.at("coll.allreduce").max_seconds, modelled, 3e-9);
  EXPECT_NEAR(r.makespan, 1e-3 - 100e-6 - 20e-6 + modelled, 3e-9);
}

// A host call inside a GPU-timed span (the host ran ahead of its stream) comes after it: one
// line of time per rank; counted.
TEST(DeviceProgramTest, HostEventsInsideAGpuTimedSpanComeAfterIt) {
  const std::string text =
      "tca-trace 1 rank=0 world=1 host=00000000000000aa clock=steady_ns start=1000 pid=7\n"
      "100 phase_begin name=A\n"
      "300 phase_end name=A\n"
      "200 coll_begin op=allreduce algorithm=ring bytes=8 ranks=1 memory=gpu steps=device "
      "call=stream timed=gpu\n"
      "400 coll_end timed=gpu\n"
      "500 end\n";
  const RankTrace t = parse_rank_trace(text, "r.trace");
  std::vector<std::string> order;
  for (const TraceEvent& e : t.events) order.push_back(e.kind);
  EXPECT_EQ(order, (std::vector<std::string>{"phase_begin", "coll_begin", "coll_end", "phase_end",
                                             "end"}));
  EXPECT_EQ(t.gpu_overlaps, 1);
}

TEST(DeviceProgramTest, BadGpuTimedLinesNameTheLine) {
  const std::string h =
      "tca-trace 1 rank=0 world=1 host=00000000000000aa clock=steady_ns start=1000 pid=7\n";
  const std::string begin =
      "op=allreduce algorithm=ring bytes=8 ranks=1 memory=gpu steps=device call=stream";
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {h + "10 coll_begin " + begin + " timed=cpu\n", "r.trace:2: timed='cpu' is not gpu"},
           {h + "10 drain dur=1 timed=gpu\n",
            "r.trace:2: only coll_begin and coll_end are timed on the GPU"},
           {h + "10 coll_end timed=gpu\n", "r.trace:2: a GPU-timed coll_end without its"},
           {h + "10 coll_begin " + begin + " timed=gpu\n5 coll_end timed=gpu\n20 end\n",
            "r.trace:3: a GPU-timed coll_end before its coll_begin"},
           {h + "10 coll_begin " + begin + " timed=gpu\n20 end\n",
            "r.trace:2: a GPU-timed coll_begin without its coll_end"},
           {h + "10 coll_begin " + begin + " timed=gpu\n11 coll_begin " + begin + " timed=gpu\n",
            "r.trace:3: a GPU-timed coll_begin before the last one's coll_end"},
       }) {
    try {
      parse_rank_trace(text, "r.trace");
      FAIL() << text << " was accepted";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
    }
  }
}

TEST(DeviceProgramTest, BadIterationFieldsNameTheLine) {
  const std::string shape = "op=allreduce algorithm=ring bytes=8 ranks=1 memory=gpu steps=device";
  for (const auto& [fields, message] : std::vector<std::pair<std::string, std::string>>{
           {shape + " protocol=fast", "protocol='fast' is not ll or simple"},
           {shape + " channels=0", "channels=0 is not >= 1"},
           {shape + " channels=two", "channels 'two'"},
           {shape + " call=doorbell",
            "call='doorbell' is not resident, resident_start, launch or stream"},
       }) {
    try {
      job_from_traces({parse_rank_trace(trace_of(0, 1, fields, 1), "b.trace")});
      FAIL() << fields << " was accepted";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("b.trace:2: " + message), std::string::npos)
          << error.what();
    }
  }
}

}  // namespace
}  // namespace tca_sim
