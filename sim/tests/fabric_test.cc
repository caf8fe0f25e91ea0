// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Fabric builders and routes: hop counts on the double ring / 2x8 torus, the ring, APEnet+'s
// 3-D torus, the fat tree and one host; sub-clusters joined by InfiniBand; per-message plans.
#include "fabric.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "params.h"

namespace tca_sim {
namespace {

std::unique_ptr<Fabric> fabric(const std::string& name, int nodes) {
  auto f = Fabric::load(TCA_SIM_FABRIC_DIR, name);
  f->build(nodes);
  return f;
}

TEST(FabricTest, DoubleRingHops) {
  auto f = fabric("peach2", 16);
  // Ring A is nodes 0-7 (E/W ports), ring B 8-15; node i and i+8 share an S link.
  EXPECT_EQ(f->hops(0, 1), 1);
  EXPECT_EQ(f->hops(0, 7), 1);  // the ring wraps
  EXPECT_EQ(f->hops(0, 4), 4);  // half the ring
  EXPECT_EQ(f->hops(0, 3), 3);
  EXPECT_EQ(f->hops(0, 5), 3);   // the other way round
  EXPECT_EQ(f->hops(0, 8), 1);   // the S link
  EXPECT_EQ(f->hops(3, 12), 2);  // one along the ring, one across
  EXPECT_EQ(f->hops(0, 12), 5);  // the farthest: 4 + 1
  int farthest = 0;
  for (int a = 0; a < 16; ++a)
    for (int b = 0; b < 16; ++b) {
      EXPECT_EQ(f->hops(a, b), f->hops(b, a));
      farthest = std::max(farthest, f->hops(a, b));
    }
  EXPECT_EQ(farthest, 5);
}

TEST(FabricTest, SingleRingHops) {
  std::ifstream in(std::string(TCA_SIM_FABRIC_DIR) + "/peach2.fabric");
  std::stringstream text;
  text << in.rdbuf();
  std::string ring = text.str();
  ring.replace(ring.find("dims = 2x8"), 10, "dims = 8   ");
  auto f = Fabric::from_params(ParamFile::parse(ring, "ring.fabric"), TCA_SIM_FABRIC_DIR);
  f->build(8);
  EXPECT_EQ(f->hops(0, 1), 1);
  EXPECT_EQ(f->hops(0, 4), 4);
  EXPECT_EQ(f->hops(6, 1), 3);  // across the wrap
  EXPECT_EQ(f->hops(1, 6), 3);
  f->build(16);                 // beyond 8: rings of 8 joined by InfiniBand
  EXPECT_EQ(f->hops(0, 7), 1);  // the ring
  EXPECT_EQ(f->hops(0, 9), 1);  // another ring: one InfiniBand leaf
}

TEST(FabricTest, TorusRouteUsesOneLinkPerHopAndThePorts) {
  auto f = fabric("peach3", 16);
  Request r;
  r.src = 0;
  r.dst = 12;
  r.bytes = 8;
  const Plan plan = f->plan(r);
  ASSERT_EQ(plan.links.size(), 5u + 2u);  // port out, 5 hops, port in
  EXPECT_EQ(f->links()[plan.links.front()].name, "peach3.n0.port_out");
  EXPECT_EQ(f->links()[plan.links.back()].name, "peach3.n12.port_in");
  // Along ring A from node 0 the short way (E), then across (S) from node 4.
  EXPECT_EQ(f->links()[plan.links[1]].name, "peach3.n0.E");
  EXPECT_EQ(f->links()[plan.links[5]].name, "peach3.n4.S");
  r.dst = 6;
  EXPECT_EQ(f->links()[f->plan(r).links[1]].name, "peach3.n0.W");
  EXPECT_EQ(plan.protocol, "dma.chain");
  r.register_mode = true;
  EXPECT_LT(f->zero_load(r), [&] {
    Request c = r;
    c.register_mode = false;
    return f->zero_load(c);
  }());
}

TEST(FabricTest, ApenetTorus) {
  auto f = fabric("apenet", 128);
  EXPECT_EQ(f->coordinates(0), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(f->coordinates(127), (std::vector<int>{7, 3, 3}));
  EXPECT_EQ(f->hops(0, 127), 3);                         // one wrap-around hop per dimension
  EXPECT_EQ(f->hops(0, 4 * 16 + 2 * 4 + 2), 4 + 2 + 2);  // the farthest node
}

TEST(FabricTest, SubClustersJoinedByInfiniBand) {
  auto f = fabric("peach2", 64);
  EXPECT_EQ(f->hops(0, 15), 2);  // inside the first sub-cluster
  EXPECT_EQ(f->hops(0, 16), 1);  // another sub-cluster, the same InfiniBand leaf switch
  EXPECT_EQ(f->hops(0, 40), 3);  // another leaf: HCA, leaf, spine, leaf, HCA
  Request r;
  r.src = 0;
  r.dst = 40;
  r.bytes = 8;
  r.src_kind = r.dst_kind = MemKind::kGpu;
  EXPECT_EQ(f->plan(r).protocol, "ib.gdr");
  r.dst = 5;
  EXPECT_EQ(f->plan(r).protocol, "dma.chain");
}

TEST(FabricTest, FatTreeAndHost) {
  auto ib = fabric("ib-qdr2", 64);
  EXPECT_EQ(ib->hops(0, 17), 1);  // one leaf of 18
  EXPECT_EQ(ib->hops(0, 18), 3);
  auto k40 = fabric("k40-host", 8);
  EXPECT_EQ(k40->hops(0, 1), 1);  // same switch
  EXPECT_EQ(k40->hops(0, 2), 3);  // two switches, one CPU
  EXPECT_EQ(k40->hops(0, 4), 4);  // across QPI
}

TEST(FabricTest, SizeDependentProtocols) {
  auto p3 = fabric("peach3", 2);
  Request r;
  r.src = 0;
  r.dst = 1;
  r.src_kind = r.dst_kind = MemKind::kGpu;
  r.bytes = 2 * 1024 * 1024;
  const double at_threshold = r.bytes / p3->zero_load(r);
  r.bytes = 4 * 1024 * 1024;
  EXPECT_LT(r.bytes / p3->zero_load(r), at_threshold);  // PEACH3's fall above 2 MiB
  auto ib = fabric("ib-qdr2", 2);
  EXPECT_EQ(ib->plan(r).protocol, "staged");
  r.bytes = 64 * 1024;
  EXPECT_EQ(ib->plan(r).protocol, "gdr");
  auto ape = fabric("apenet", 2);
  r.bytes = 1024;
  EXPECT_EQ(ape->plan(r).protocol, "p2p");
  r.bytes = 1024 * 1024;
  EXPECT_EQ(ape->plan(r).protocol, "staged");
}

TEST(FabricTest, TooManyNodesIsAnError) {
  auto f = Fabric::load(TCA_SIM_FABRIC_DIR, "k40-host");
  EXPECT_THROW(f->build(9), Error);
  auto a = Fabric::load(TCA_SIM_FABRIC_DIR, "apenet");
  EXPECT_THROW(a->build(129), Error);
}

}  // namespace
}  // namespace tca_sim
