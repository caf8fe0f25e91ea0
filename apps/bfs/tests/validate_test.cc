// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Validation: a correct tree passes; one planted error fails the check it breaks (each of the
// specification's five), on every backend.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "test_graph.h"

namespace bfs {
namespace {

struct Tree {
  std::vector<int64_t> parents;
  std::vector<int32_t> levels;
  std::vector<std::set<int64_t>> adjacency;
  std::vector<int> children;
};

// A plant: the vertex, its new parent and level; found by `find` in a correct tree.
struct Plant {
  uint64_t vertex;
  int64_t parent;
  int32_t level;
};
using Finder = std::function<bool(const Tree&, int64_t root, Plant&)>;

class PlantedErrors : public ::testing::Test {
 protected:
  static constexpr uint64_t kVertices = 1024;

  PlantedErrors() : edges_(test::kronecker_edges(10, 8, 17)) {}

  // Searches, plants, validates; the failed checks must be exactly `expected` (or include it,
  // for the cycle, which also breaks the tree edge levels).
  void expect_fails(const Finder& find, unsigned expected, bool exactly = true) {
    for (const std::string& device : test::devices()) {
      SCOPED_TRACE(device);
      test::TestGraph graph(edges_, kVertices, device);
      const vertex_t root = static_cast<vertex_t>(edges_[0].u);
      ASSERT_TRUE(graph.search(root, test::reference_comm()));
      ASSERT_TRUE(graph.validate(root).ok());
      Tree tree{graph.parents(), graph.levels(), std::vector<std::set<int64_t>>(kVertices),
                std::vector<int>(kVertices, 0)};
      for (const Edge& e : edges_) {
        tree.adjacency[e.u].insert(e.v);
        tree.adjacency[e.v].insert(e.u);
      }
      for (uint64_t v = 0; v < kVertices; ++v)
        if (tree.parents[v] >= 0 && tree.parents[v] != static_cast<int64_t>(v))
          ++tree.children[tree.parents[v]];
      Plant plant{};
      ASSERT_TRUE(find(tree, root, plant)) << "no place for the planted error in this graph";
      graph.plant(plant.vertex, plant.parent, plant.level);
      const Validation v = graph.validate(root);
      EXPECT_FALSE(v.ok());
      if (exactly)
        EXPECT_EQ(v.failed, expected) << describe_checks(v.failed) << ": " << v.detail;
      else
        EXPECT_EQ(v.failed & expected, expected) << describe_checks(v.failed) << ": " << v.detail;
      EXPECT_NE(v.detail.find("vertex"), std::string::npos) << v.detail;
    }
  }

  std::vector<Edge> edges_;
};

TEST_F(PlantedErrors, CycleFailsCheck1) {
  expect_fails(
      [](const Tree& t, int64_t, Plant& p) {
        for (uint64_t c = 0; c < kVertices; ++c) {
          const int64_t v = t.parents[c];
          if (v < 0 || t.levels[v] < 2 || v == static_cast<int64_t>(c)) continue;
          p = Plant{static_cast<uint64_t>(v), static_cast<int64_t>(c), t.levels[v]};  // v <-> c
          return true;
        }
        return false;
      },
      kCheckTree, false);
}

TEST_F(PlantedErrors, ParentOnTheSameLevelFailsCheck2) {
  expect_fails(
      [](const Tree& t, int64_t root, Plant& p) {
        for (uint64_t v = 0; v < kVertices; ++v) {
          if (t.levels[v] < 1 || static_cast<int64_t>(v) == root) continue;
          for (const int64_t w : t.adjacency[v])
            if (w != static_cast<int64_t>(v) && t.levels[w] == t.levels[v]) {
              p = Plant{v, w, t.levels[v]};
              return true;
            }
        }
        return false;
      },
      kCheckTreeLevels);
}

TEST_F(PlantedErrors, LevelTwoAwayFromANeighbourFailsCheck3) {
  expect_fails(
      [](const Tree& t, int64_t, Plant& p) {
        for (uint64_t v = 0; v < kVertices; ++v) {
          if (t.levels[v] < 1 || t.children[v] != 0) continue;
          for (const int64_t x : t.adjacency[v])
            if (t.levels[x] == t.levels[v] + 1) {
              p = Plant{v, x, t.levels[v] + 2};
              return true;
            }
        }
        return false;
      },
      kCheckEdgeLevels);
}

TEST_F(PlantedErrors, DroppedLeafFailsCheck4) {
  expect_fails(
      [](const Tree& t, int64_t, Plant& p) {
        for (uint64_t v = 0; v < kVertices; ++v)
          if (t.levels[v] >= 1 && t.children[v] == 0) {
            p = Plant{v, -1, -1};
            return true;
          }
        return false;
      },
      kCheckSpans);
}

TEST_F(PlantedErrors, ParentThatIsNoNeighbourFailsCheck5) {
  expect_fails(
      [](const Tree& t, int64_t, Plant& p) {
        for (uint64_t v = 0; v < kVertices; ++v) {
          if (t.levels[v] < 2) continue;
          for (uint64_t y = 0; y < kVertices; ++y)
            if (t.levels[y] == t.levels[v] - 1 && !t.adjacency[v].count(static_cast<int64_t>(y))) {
              p = Plant{v, static_cast<int64_t>(y), t.levels[v]};
              return true;
            }
        }
        return false;
      },
      kCheckParentEdge);
}

TEST_F(PlantedErrors, RootThatIsNotItsOwnParentFailsCheck1) {
  expect_fails(
      [](const Tree& t, int64_t root, Plant& p) {
        for (const int64_t w : t.adjacency[root])
          if (w != root) {
            p = Plant{static_cast<uint64_t>(root), w, 0};
            return true;
          }
        return false;
      },
      kCheckTree, false);
}

}  // namespace
}  // namespace bfs
