// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Parameter files: units, and errors that name the file and the line.
#include "params.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fabric.h"

namespace tca_sim {
namespace {

std::string error_of(const std::string& text) {
  try {
    Fabric::from_params(ParamFile::parse(text, "x.fabric"), TCA_SIM_FABRIC_DIR);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(ParamsTest, Units) {
  EXPECT_DOUBLE_EQ(parse_seconds("1.9us"), 1.9e-6);
  EXPECT_DOUBLE_EQ(parse_seconds("250 ns"), 250e-9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("3.5GB/s"), 3.5e9);
  EXPECT_DOUBLE_EQ(parse_bytes("2MiB"), 2097152.0);
  EXPECT_THROW(parse_seconds("3.5GB/s"), Error);
  EXPECT_THROW(parse_bytes("fast"), Error);
}

TEST(ParamsTest, CommentsAndValues) {
  const ParamFile f =
      ParamFile::parse("# a comment\n\nname = x   # the name\nlink = 4GB/s\ndims = 2x8\n", "f");
  EXPECT_EQ(f.word("name"), "x");
  EXPECT_DOUBLE_EQ(f.bytes_per_second("link"), 4e9);
  EXPECT_EQ(f.dims("dims"), (std::vector<int>{2, 8}));
}

TEST(ParamsTest, MalformedLinesNameTheLine) {
  EXPECT_NE(error_of("name = a\nfamily tca\n").find("x.fabric:2: expected 'key = value'"),
            std::string::npos);
  EXPECT_NE(error_of("name = a\nname = b\n").find("x.fabric:2: 'name' set twice (first on line 1)"),
            std::string::npos);
  EXPECT_NE(error_of("na-me = a\n").find("x.fabric:1:"), std::string::npos);
}

TEST(ParamsTest, BadValuesAndUnknownKeysNameTheLine) {
  std::string text;
  {
    std::ifstream in(std::string(TCA_SIM_FABRIC_DIR) + "/k40-host.fabric");
    std::stringstream all;
    all << in.rdbuf();
    text = all.str();
  }
  ASSERT_EQ(error_of(text), "");
  std::string bad_unit = text;
  bad_unit.replace(bad_unit.find("endpoint_bandwidth = 10.6GB/s"), 29,
                   "endpoint_bandwidth = 10.6us");
  const std::string e1 = error_of(bad_unit);
  EXPECT_NE(e1.find("x.fabric:"), std::string::npos) << e1;
  EXPECT_NE(e1.find("endpoint_bandwidth"), std::string::npos) << e1;
  EXPECT_NE(e1.find("not a bandwidth"), std::string::npos) << e1;
  const std::string e2 = error_of(text + "endpoint_bandwith = 3GB/s\n");
  EXPECT_NE(e2.find("unknown parameter 'endpoint_bandwith'"), std::string::npos) << e2;
  const int last_line = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  EXPECT_NE(e2.find("x.fabric:" + std::to_string(last_line) + ":"), std::string::npos) << e2;
  std::string missing = text;
  missing.replace(missing.find("overhead = 7.3us"), 16, "");
  EXPECT_NE(error_of(missing).find("missing parameter 'overhead'"), std::string::npos);
  EXPECT_NE(error_of("name = a\nfamily = bus\nmax_nodes = 2\n").find("family 'bus'"),
            std::string::npos);
}

TEST(ParamsTest, EveryShippedFabricLoads) {
  // Every .fabric file of the folder, so a new one is checked without being listed here; the
  // list below makes sure the folder is the one that holds the seeds' fabrics.
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(TCA_SIM_FABRIC_DIR))
    if (entry.path().extension() == ".fabric") names.push_back(entry.path().stem().string());
  for (const char* name : {"peach2", "peach3", "apenet", "ib-qdr2", "ib-fdr", "ib-apenet-testbed",
                           "k40-host", "h200-nvlink", "h200-shared", "shm-here"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  for (const std::string& name : names)
    EXPECT_NO_THROW(Fabric::load(TCA_SIM_FABRIC_DIR, name)) << name;
}

}  // namespace
}  // namespace tca_sim
