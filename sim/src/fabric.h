// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Fabric descriptions (sim/fabrics/*.fabric) and the routes and per-message costs they imply.
// Nothing here needs SimGrid: engine.cc turns the links into SimGrid links and the routes into
// SimGrid routes; the flow-level sharing and the timing are SimGrid's.
//
// Families:
//   tca    PEACH2/PEACH3: a torus of PEACH routers (a ring is 1-D, the double ring 2xN), each
//          node's host port N into its router, address routing one dimension after the other;
//          sub-clusters of `subcluster` nodes joined by the fabric named by `inter` (InfiniBand).
//   apenet APEnet+: a 3-D torus of cards; GPU sends by P2P read or staged through the host,
//          whichever is faster at the size.
//   ib     InfiniBand fat tree (two levels, D-mod-k) with MVAPICH2 host overheads; GPU data by
//          GPUDirect RDMA up to a threshold, staged through host memory above it.
//   host   one host's insides: endpoints under PCIe switches under CPU sockets (K40 blog), or
//          under one NVSwitch (H200), or ranks on one host's memory.
//   gpu    ranks sharing one GPU (CUDA IPC on one device): the cost of a transfer depends on its
//          memory kinds and tca's CUDA path (copy engine or kernel), its bytes go through the
//          GPU's copy links, which every rank shares.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "params.h"

namespace tca_sim {

enum class MemKind { kCpu, kGpu, kGpuFar };  // kGpuFar: a GPU behind the other CPU socket
enum class Op { kDma, kPio, kNotify };

const char* mem_kind_name(MemKind kind);
MemKind parse_mem_kind(const std::string& text);  // cpu, gpu, gpu-far

struct LinkSpec {
  std::string name;
  double bandwidth = 0;  // bytes/s
  double latency = 0;    // s
};

// How one message travels: the caller is busy for `block`, the message leaves `pre` later,
// crosses its `head` links (the source's own limits: GPU read, host staging) and then `links`
// (the network route between the two nodes) — SimGrid: latencies plus the shared bandwidths —
// and is delivered `post` after its last byte arrived.
struct Plan {
  double block = 0;
  double pre = 0;
  double post = 0;
  std::vector<int> head;
  std::vector<int> links;
  bool synchronous = false;  // the caller copies (CPU engines): busy until delivered
  double rate = 0;           // bytes/s at most: a link of the sender node that its messages of
                             // this rate share (a GPU program's blocks); 0: none
  std::string protocol;      // for tables and tests: "dma", "gdr", "staged", "p2p", ...
};

struct Request {
  int src = 0, dst = 0;  // nodes
  double bytes = 0;
  MemKind src_kind = MemKind::kCpu, dst_kind = MemKind::kCpu;
  Op op = Op::kDma;
  bool register_mode = false;    // tca: descriptors pre-registered in the chip (no fetch)
  bool gdr = true;               // ib: GPUDirect RDMA on (off: CUDA copies around each message)
  std::string force;             // apenet: "p2p" or "staged" instead of the faster of the two
  std::string path;              // the transport a trace names (cuda.ce, cuda.sm, shm); gpu family
  int channels = 0;              // cuda.device: the GPU program's blocks storing it (0: unknown)
  bool inline_protocol = false;  // cuda.device: 4 bytes of data in every 8-byte store
};

class Fabric {
 public:
  // Loads `dir/name.fabric` (and the inter-cluster fabric it names from the same folder).
  static std::unique_ptr<Fabric> load(const std::string& dir, const std::string& name);
  static std::unique_ptr<Fabric> from_params(const ParamFile& params, const std::string& dir);

  const std::string& name() const { return name_; }
  const std::string& family() const { return family_; }
  int max_nodes() const { return max_nodes_; }
  // Makes the fabric's links for `nodes` nodes (throws when it cannot hold them).
  void build(int nodes);
  int nodes() const { return nodes_; }
  const std::vector<LinkSpec>& links() const { return links_; }
  Plan plan(const Request& request) const;
  // Router-to-router hops between two nodes (0 on one node; inter-cluster: the IB hops).
  int hops(int a, int b) const;
  // Zero-load time of a request (pre + block + post + latencies + bytes / narrowest link).
  double zero_load(const Request& request) const;
  // Host-called GPU collectives (host and gpu families; 0 where the file leaves them out or
  // says `unmeasured`): the iteration's own cost by how the host started it ("launch" and
  // "resident_start" pay device_launch_call, anything else device_call), and the program's
  // own work per step.
  double device_call(const std::string& form) const;
  double device_step() const;
  // A GPU program's work beyond its steps, `program` "allgather_ring", ...: device_work_<program>
  // (0 where the file leaves it out or unmeasured).
  double device_work(const std::string& program) const;
  bool has_device_work(const std::string& program) const;
  // The GPU program keys the file leaves out or marks unmeasured (families with GPU programs).
  std::vector<std::string> device_program_unset() const;
  // ib, apenet: one CUDA copy between GPU and host memory of `bytes` (staged collectives).
  double cuda_copy(double bytes) const;
  // The node's position in the torus (tca, apenet), for mappings and tests.
  std::vector<int> coordinates(int node) const;
  const std::vector<int>& dims() const { return dims_; }
  int subcluster() const { return subcluster_; }

 private:
  int add_link(const std::string& name, double bandwidth, double latency);
  void build_torus(int nodes);
  void build_fat_tree(int nodes);
  void build_host(int nodes);
  std::vector<int> torus_route(int a, int b) const;
  std::vector<int> fat_tree_route(int a, int b) const;
  std::vector<int> host_route(int a, int b) const;
  Plan plan_tca(const Request& r) const;
  Plan plan_apenet(const Request& r) const;
  Plan plan_ib(const Request& r) const;
  Plan plan_host(const Request& r) const;
  void build_gpu(int nodes);
  Plan plan_gpu(const Request& r) const;
  double p(const char* key) const;         // a loaded parameter by key
  double optional(const char* key) const;  // 0 when the file leaves it out or says unmeasured
  // cuda.device: the rate its blocks store at, where the file has device_block_bandwidth.
  void plan_device_program(const Request& r, Plan* plan) const;

  std::string name_, family_, topology_;
  std::vector<int> dims_;
  int subcluster_ = 0;
  int max_nodes_ = 0;
  int nodes_ = 0;
  std::vector<std::pair<std::string, double>> values_;
  std::unique_ptr<Fabric> inter_;
  int inter_offset_ = 0;  // index of the inter fabric's first link in links_
  std::vector<LinkSpec> links_;
  // Per-node and per-structure link indices.
  std::vector<int> port_out_, port_in_, gpu_read_, gpu_read_large_, gpu_far_, staged_;
  std::vector<std::vector<int>> torus_links_;           // [node][2*dim + dir]
  std::vector<std::vector<int>> leaf_up_, spine_down_;  // [leaf][spine], [spine][leaf]
  std::vector<int> group_up_, group_down_, socket_up_, socket_down_;
  int leaf_radix_ = 0;
  // gpu family: the one GPU's links, shared by every rank.
  int ce_d2d_ = -1, ce_h2d_ = -1, ce_d2h_ = -1, sm_d2d_ = -1, sm_host_ = -1, host_mem_ = -1;
};

}  // namespace tca_sim
