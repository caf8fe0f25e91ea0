// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// TCA_TRACE=DIR: every rank writes DIR/rank-R.trace with the header and one line per event
// (kicks with their transfers, puts, notifications, waits, PIO pointers, barriers, phases), and
// an unwritable folder fails tcaInit with a message naming it.
#include <gtest/gtest.h>
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tca/tca.h"
#include "tca/tca_coll.h"
#include "tca/tca_trace.h"

namespace {

#define ASSERT_OK(call) ASSERT_EQ((call), TCA_SUCCESS) << #call << ": " << tcaGetLastErrorMessage()

struct Line {
  uint64_t t = 0;
  std::string event;
  std::map<std::string, std::string> fields;
};

std::map<std::string, std::string> fields_of(std::istringstream& in) {
  std::map<std::string, std::string> out;
  std::string token;
  while (in >> token) {
    const size_t eq = token.find('=');
    EXPECT_NE(eq, std::string::npos) << token;
    if (eq != std::string::npos) out[token.substr(0, eq)] = token.substr(eq + 1);
  }
  return out;
}

// A folder every rank agrees on (rank 0 makes it).
std::string shared_folder() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[256] = "/tmp/tca-trace-test-XXXXXX";
  if (rank == 0 && mkdtemp(path) == nullptr) path[0] = 0;
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  return path;
}

// tcaInit with TCA_TRACE set to `folder` for this initialization only.
void init_traced(const std::string& folder) {
  ASSERT_FALSE(folder.empty());
  setenv("TCA_TRACE", folder.c_str(), 1);
  ASSERT_OK(tcaInit());
  unsetenv("TCA_TRACE");
}

// Removes every rank's trace and then the folder.
void remove_traces(const std::string& folder, const std::string& file, int rank) {
  MPI_Barrier(MPI_COMM_WORLD);
  std::remove(file.c_str());
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) rmdir(folder.c_str());
}

TEST(TraceTest, UnwritableFolderFailsInit) {
  setenv("TCA_TRACE", "/proc/self/no-such-folder/trace", 1);
  EXPECT_NE(tcaInit(), TCA_SUCCESS);
  EXPECT_NE(std::strstr(tcaGetLastErrorMessage(), "/proc/self/no-such-folder/trace"), nullptr)
      << tcaGetLastErrorMessage();
  unsetenv("TCA_TRACE");
  EXPECT_EQ(tcaTraceEnabled(), 0);
  tcaTracePhaseBegin("NOTHING");  // safe without a trace
  tcaTracePhaseEnd("NOTHING");
}

TEST(TraceTest, TwoRanksWriteTheDocumentedEvents) {
  const std::string folder = shared_folder();
  init_traced(folder);
  if (HasFatalFailure()) return;
  EXPECT_EQ(tcaTraceEnabled(), 1);
  int rank = 0, ranks = 0;
  ASSERT_OK(tcaRank(&rank));
  ASSERT_OK(tcaSize(&ranks));
  ASSERT_EQ(ranks, 2);
  const int next = (rank + 1) % ranks, prev = (rank + ranks - 1) % ranks;
  void* buffer = nullptr;
  ASSERT_OK(tcaMalloc(&buffer, 65536, TCA_MEM_CPU));
  tcaHandle mine, all[2];
  ASSERT_OK(tcaCreateHandle(&mine, buffer, 65536, TCA_MEM_CPU));
  ASSERT_OK(tcaAllgatherHandles(&mine, all));
  tcaDesc desc;
  ASSERT_OK(tcaDescNew(&desc));
  ASSERT_OK(
      tcaDescSetMemcpy2D(desc, &all[next], 4096, 512, &mine, 0, 512, 256, 4, TCA_FLAG_NOTIFY, 1));
  ASSERT_OK(tcaDescSet(desc, 0));
  ASSERT_OK(tcaBarrier());
  tcaTracePhaseBegin("EXCHANGE");
  ASSERT_OK(tcaStartDMADesc(desc));
  ASSERT_OK(tcaWaitDMARecvDesc(prev, 1, nullptr));
  tcaTracePhaseEnd("EXCHANGE");
  ASSERT_OK(tcaWaitDMAC(0));
  char bytes[64] = {1};
  ASSERT_OK(tcaPut(&all[next], 8192, bytes, sizeof bytes));
  ASSERT_OK(tcaNotify(next, 2));
  int from = -1;
  ASSERT_OK(tcaWaitDMARecvDesc(TCA_ANY_RANK, 2, &from));
  EXPECT_EQ(from, prev);
  void* pio = nullptr;
  ASSERT_OK(tcaPIOPointer(&pio, &all[next], 0, 64));
  ASSERT_OK(tcaBarrier());
  ASSERT_OK(tcaDescFree(desc));
  ASSERT_OK(tcaDestroyHandle(&mine));
  ASSERT_OK(tcaFree(buffer));
  ASSERT_OK(tcaFinalize());
  EXPECT_EQ(tcaTraceEnabled(), 0);

  const std::string file = folder + "/rank-" + std::to_string(rank) + ".trace";
  std::ifstream in(file);
  ASSERT_TRUE(in.good()) << file;
  std::string header;
  ASSERT_TRUE(std::getline(in, header));
  std::istringstream head(header);
  std::string magic, version;
  head >> magic >> version;
  EXPECT_EQ(magic, "tca-trace");
  EXPECT_EQ(version, "1");
  const auto h = fields_of(head);
  EXPECT_EQ(h.at("rank"), std::to_string(rank));
  EXPECT_EQ(h.at("world"), "2");
  EXPECT_EQ(h.at("clock"), "steady_ns");
  EXPECT_EQ(h.count("host"), 1u);
  EXPECT_EQ(h.count("start"), 1u);
  std::vector<Line> lines;
  for (std::string raw; std::getline(in, raw);) {
    std::istringstream fields(raw);
    Line line;
    ASSERT_TRUE(fields >> line.t >> line.event) << raw;
    line.fields = fields_of(fields);
    if (!lines.empty()) {
      EXPECT_GE(line.t, lines.back().t) << raw;
    }
    lines.push_back(line);
  }
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().event, "end");
  std::map<std::string, int> seen;
  for (size_t i = 0; i < lines.size(); ++i) {
    const Line& l = lines[i];
    ++seen[l.event];
    if (l.event == "kick") {
      EXPECT_EQ(l.fields.at("n"), "1");
      EXPECT_EQ(l.fields.at("channel"), "0");
      ASSERT_LT(i + 1, lines.size());
      const auto& x = lines[i + 1].fields;
      EXPECT_EQ(lines[i + 1].event, "xfer");
      EXPECT_EQ(x.at("src"), std::to_string(rank));
      EXPECT_EQ(x.at("dst"), std::to_string(next));
      EXPECT_EQ(x.at("width"), "256");
      EXPECT_EQ(x.at("count"), "4");
      EXPECT_EQ(x.at("spitch"), "512");
      EXPECT_EQ(x.at("dpitch"), "512");
      EXPECT_EQ(x.at("skind"), "cpu");
      EXPECT_EQ(x.at("dkind"), "cpu");
      EXPECT_EQ(x.at("notify"), "1");
      EXPECT_FALSE(x.at("path").empty());
    } else if (l.event == "wait") {
      EXPECT_EQ(l.fields.at("from"), std::to_string(prev));
      EXPECT_TRUE(l.fields.at("peer") == std::to_string(prev) || l.fields.at("peer") == "-1");
    } else if (l.event == "put") {
      EXPECT_EQ(l.fields.at("width"), "64");
      EXPECT_EQ(l.fields.at("dst"), std::to_string(next));
    } else if (l.event == "notify") {
      EXPECT_EQ(l.fields.at("dst"), std::to_string(next));
      EXPECT_EQ(l.fields.at("slot"), "2");
    } else if (l.event == "pio") {
      EXPECT_EQ(l.fields.at("owner"), std::to_string(next));
      EXPECT_EQ(l.fields.at("bytes"), "64");
    } else if (l.event == "phase_begin" || l.event == "phase_end") {
      EXPECT_EQ(l.fields.at("name"), "EXCHANGE");
    }
  }
  EXPECT_EQ(seen["kick"], 1);
  EXPECT_EQ(seen["xfer"], 1);
  EXPECT_EQ(seen["wait"], 2);
  EXPECT_EQ(seen["put"], 1);
  EXPECT_EQ(seen["notify"], 1);
  EXPECT_EQ(seen["pio"], 1);
  EXPECT_EQ(seen["drain"], 1);
  EXPECT_EQ(seen["barrier"], 2);
  EXPECT_EQ(seen["phase_begin"], 1);
  EXPECT_EQ(seen["phase_end"], 1);
  remove_traces(folder, file, rank);
}

// A host-memory collective is recorded with its memory and who ran its steps (the host: its
// kicks, notifications and waits follow), so a replay knows what to model.
TEST(TraceTest, CollectivesNameTheirMemoryAndSteps) {
  const std::string folder = shared_folder();
  init_traced(folder);
  if (HasFatalFailure()) return;
  int rank = 0;
  ASSERT_OK(tcaRank(&rank));
  double mine = rank + 1.0, sum = 0;
  tcaColl coll = nullptr;
  tcaCollConfig config{};
  config.algorithm = TCA_COLL_RING;
  ASSERT_OK(tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 1, &mine, &sum, &config));
  ASSERT_OK(tcaCollStart(coll));
  ASSERT_OK(tcaCollWait(coll));
  EXPECT_EQ(sum, 3.0);
  ASSERT_OK(tcaCollFree(coll));
  ASSERT_OK(tcaFinalize());

  const std::string file = folder + "/rank-" + std::to_string(rank) + ".trace";
  std::ifstream in(file);
  ASSERT_TRUE(in.good()) << file;
  std::map<std::string, int> seen;
  bool inside = false;
  for (std::string raw; std::getline(in, raw);) {
    std::istringstream fields(raw);
    uint64_t t = 0;
    std::string event;
    if (!(fields >> t >> event)) continue;  // the header
    ++seen[event];
    if (event == "coll_begin") {
      const auto f = fields_of(fields);
      EXPECT_EQ(f.at("op"), "allreduce");
      EXPECT_EQ(f.at("algorithm"), "ring");
      EXPECT_EQ(f.at("bytes"), "8");
      EXPECT_EQ(f.at("ranks"), "2");
      EXPECT_EQ(f.at("memory"), "cpu");
      EXPECT_EQ(f.at("steps"), "host");
      inside = true;
    } else if (event == "coll_end") {
      inside = false;
    } else if (inside && (event == "kick" || event == "wait")) {
      ++seen["step." + event];
    }
  }
  EXPECT_EQ(seen["coll_begin"], 1);
  EXPECT_EQ(seen["coll_end"], 1);
  EXPECT_GE(seen["step.kick"], 1);  // the steps are in the trace between begin and end
  EXPECT_GE(seen["step.wait"], 1);
  remove_traces(folder, file, rank);
}

}  // namespace
