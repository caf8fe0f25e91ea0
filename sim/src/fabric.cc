// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "fabric.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tca_sim {
namespace {

// The keys each family reads; a file with any other key is refused (check_all_used).
const std::vector<std::pair<const char*, char>> kKeys[] = {
    // tca   (t: time, b: bandwidth, s: size, n: number)
    {{"link_bandwidth", 'b'},
     {"hop_latency", 't'},
     {"port_bandwidth", 'b'},
     {"port_latency", 't'},
     {"kick", 't'},
     {"descriptor_fetch", 't'},
     {"register_setup", 't'},
     {"read_latency_cpu", 't'},
     {"read_latency_gpu", 't'},
     {"gpu_read_bandwidth", 'b'},
     {"gpu_read_large_threshold", 's'},
     {"gpu_read_large_bandwidth", 'b'},
     {"gpu_far_read_bandwidth", 'b'},
     {"pio_overhead", 't'},
     {"pio_bandwidth", 'b'},
     {"notify_overhead", 't'}},
    // apenet
    {{"link_bandwidth", 'b'},
     {"hop_latency", 't'},
     {"port_bandwidth", 'b'},
     {"port_latency", 't'},
     {"kick", 't'},
     {"host_latency", 't'},
     {"p2p_latency", 't'},
     {"p2p_read_bandwidth", 'b'},
     {"cuda_copy_latency", 't'},
     {"cuda_copy_bandwidth", 'b'},
     {"notify_overhead", 't'}},
    // ib
    {{"link_bandwidth", 'b'},
     {"switch_latency", 't'},
     {"port_latency", 't'},
     {"leaf_radix", 'n'},
     {"send_overhead", 't'},
     {"cpu_latency", 't'},
     {"gdr_latency", 't'},
     {"gdr_read_bandwidth", 'b'},
     {"staged_threshold", 's'},
     {"staged_latency", 't'},
     {"staged_bandwidth", 'b'},
     {"nogdr_latency", 't'},
     {"notify_overhead", 't'},
     {"cuda_copy_latency", 't'},
     {"cuda_copy_bandwidth", 'b'}},
    // host
    {{"sockets", 'n'},
     {"switches_per_socket", 'n'},
     {"endpoints_per_switch", 'n'},
     {"endpoint_bandwidth", 'b'},
     {"endpoint_latency", 't'},
     {"switch_bandwidth", 'b'},
     {"switch_latency", 't'},
     {"socket_bandwidth", 'b'},
     {"socket_latency", 't'},
     {"overhead", 't'},
     {"synchronous", 'n'},
     {"notify_overhead", 't'},
     {"large_threshold", 's'},
     {"large_bandwidth", 'b'}},
    // gpu (ranks sharing one GPU)
    {{"kick", 't'},
     {"ce_gpu_latency", 't'},
     {"ce_gpu_bandwidth", 'b'},
     {"ce_h2d_sliced_max", 's'},
     {"ce_h2d_sliced_latency", 't'},
     {"ce_h2d_latency", 't'},
     {"ce_d2h_latency", 't'},
     {"ce_host_bandwidth", 'b'},
     {"sm_latency", 't'},
     {"sm_gpu_bandwidth", 'b'},
     {"sm_host_bandwidth", 'b'},
     {"cpu_overhead", 't'},
     {"cpu_bandwidth", 'b'},
     {"notify_overhead", 't'},
     {"device_latency", 't'}},
};
const char* const kFamilies[] = {"tca", "apenet", "ib", "host", "gpu"};

// Keys a file of the families that run GPU programs (host, gpu) may leave out, or set to
// `unmeasured` (the same): host-called GPU collectives' own costs. Without them a replay takes
// a GPU program's step as its message alone (the behaviour before they existed).
const std::pair<const char*, char> kDeviceProgramKeys[] = {{"device_call", 't'},
                                                           {"device_launch_call", 't'},
                                                           {"device_step", 't'},
                                                           {"device_block_bandwidth", 'b'}};
// ... and a program's work beyond its steps, by collective and algorithm (device_work_allgather_
// ring, ...): the same optional keys, 0 where left out.
const char* const kDeviceWorkOps[] = {"allreduce", "allgather"};
const char* const kDeviceWorkAlgorithms[] = {"ring", "neighbor_exchange", "recursive_doubling",
                                             "dissemination", "direct"};
constexpr char kUnmeasured[] = "unmeasured";

std::vector<std::pair<std::string, char>> device_optional_keys() {
  std::vector<std::pair<std::string, char>> keys(std::begin(kDeviceProgramKeys),
                                                 std::end(kDeviceProgramKeys));
  for (const char* op : kDeviceWorkOps)
    for (const char* algorithm : kDeviceWorkAlgorithms)
      keys.emplace_back(std::string("device_work_") + op + "_" + algorithm, 't');
  return keys;
}

double typed_value(const ParamFile& params, const std::string& key, char type) {
  switch (type) {
    case 't':
      return params.seconds(key);
    case 'b':
      return params.bytes_per_second(key);
    case 's':
      return params.bytes(key);
    default:
      return params.number(key);
  }
}

int positive_mod(int value, int modulus) { return ((value % modulus) + modulus) % modulus; }

}  // namespace

const char* mem_kind_name(MemKind kind) {
  switch (kind) {
    case MemKind::kCpu:
      return "cpu";
    case MemKind::kGpu:
      return "gpu";
    case MemKind::kGpuFar:
      return "gpu-far";
  }
  return "?";
}

MemKind parse_mem_kind(const std::string& text) {
  if (text == "cpu") return MemKind::kCpu;
  if (text == "gpu") return MemKind::kGpu;
  if (text == "gpu-far") return MemKind::kGpuFar;
  throw Error("memory kind '" + text + "' is not cpu, gpu or gpu-far");
}

std::unique_ptr<Fabric> Fabric::load(const std::string& dir, const std::string& name) {
  return from_params(ParamFile::load(dir + "/" + name + ".fabric"), dir);
}

std::unique_ptr<Fabric> Fabric::from_params(const ParamFile& params, const std::string& dir) {
  auto fabric = std::make_unique<Fabric>();
  fabric->name_ = params.word("name");
  fabric->family_ = params.word("family");
  fabric->max_nodes_ = static_cast<int>(params.number("max_nodes"));
  int family = -1;
  for (int i = 0; i < 5; ++i)
    if (fabric->family_ == kFamilies[i]) family = i;
  if (family < 0)
    throw Error(params.name() + ": family '" + fabric->family_ +
                "' is not tca, apenet, ib, host or gpu");
  for (const auto& [key, type] : kKeys[family]) {
    const double value = typed_value(params, key, type);
    if (type == 'b' && value <= 0) throw Error(params.name() + ": " + key + " must be positive");
    fabric->values_.emplace_back(key, value);
  }
  for (const auto& [key, type] : device_optional_keys()) {
    if ((family != 3 && family != 4) || !params.has(key)) continue;
    if (params.word(key) == kUnmeasured) continue;
    const double value = typed_value(params, key, type);
    if (type == 'b' && value <= 0)
      throw Error(params.name() + ": " + key + " must be positive (or " + kUnmeasured + ")");
    fabric->values_.emplace_back(key, value);
  }
  if (family == 0 || family == 1) {
    fabric->topology_ = "torus";
    fabric->dims_ = params.dims("dims");
    fabric->subcluster_ = 1;
    for (int d : fabric->dims_) fabric->subcluster_ *= d;
    if (family == 0 && params.has("inter")) fabric->inter_ = load(dir, params.word("inter"));
  } else if (family == 2) {
    fabric->topology_ = "fat-tree";
    fabric->leaf_radix_ = static_cast<int>(fabric->p("leaf_radix"));
    if (fabric->leaf_radix_ < 1) throw Error(params.name() + ": leaf_radix must be at least 1");
  } else if (family == 3) {
    fabric->topology_ = "host";
  } else {
    fabric->topology_ = "gpu";
  }
  params.check_all_used();
  return fabric;
}

double Fabric::p(const char* key) const {
  for (const auto& [name, value] : values_)
    if (name == key) return value;
  throw Error("fabric " + name_ + " has no parameter " + key);
}

double Fabric::optional(const char* key) const {
  for (const auto& [name, value] : values_)
    if (name == key) return value;
  return 0;
}

double Fabric::device_call(const std::string& form) const {
  // A stream-ordered iteration is timed on the GPU from the stream's arrival at it: no host call.
  if (form == "stream") return 0;
  return optional(form == "launch" || form == "resident_start" ? "device_launch_call"
                                                               : "device_call");
}

double Fabric::device_step() const { return optional("device_step"); }

double Fabric::device_work(const std::string& program) const {
  return optional(("device_work_" + program).c_str());
}

bool Fabric::has_device_work(const std::string& program) const {
  const std::string key = "device_work_" + program;
  return std::any_of(values_.begin(), values_.end(),
                     [&](const auto& value) { return value.first == key; });
}

std::vector<std::string> Fabric::device_program_unset() const {
  std::vector<std::string> unset;
  if (family_ != "host" && family_ != "gpu") return unset;
  for (const auto& [key, type] : kDeviceProgramKeys)
    if (std::none_of(values_.begin(), values_.end(),
                     [key = key](const auto& value) { return value.first == key; }))
      unset.push_back(key);
  return unset;
}

// A step of a GPU program: its channels' blocks store the bytes, each at device_block_bandwidth,
// so the step moves at most that much whatever the links would give it (the engine sends an
// inline step's stores, twice its data).
void Fabric::plan_device_program(const Request& r, Plan* plan) const {
  const double block = optional("device_block_bandwidth");
  if (block <= 0 || r.channels <= 0) return;
  plan->rate = r.channels * block;
}

int Fabric::add_link(const std::string& name, double bandwidth, double latency) {
  links_.push_back(LinkSpec{name_ + "." + name, bandwidth, latency});
  return static_cast<int>(links_.size()) - 1;
}

void Fabric::build(int nodes) {
  if (nodes < 1 || nodes > max_nodes_)
    throw Error("fabric " + name_ + " holds 1 to " + std::to_string(max_nodes_) + " nodes, not " +
                std::to_string(nodes));
  nodes_ = nodes;
  links_.clear();
  port_out_.assign(nodes, -1);
  port_in_.assign(nodes, -1);
  if (topology_ == "torus") build_torus(nodes);
  if (topology_ == "fat-tree") build_fat_tree(nodes);
  if (topology_ == "host") build_host(nodes);
  if (topology_ == "gpu") build_gpu(nodes);
}

std::vector<int> Fabric::coordinates(int node) const {
  std::vector<int> c(dims_.size());
  int local = subcluster_ > 0 ? node % subcluster_ : node;
  for (size_t i = dims_.size(); i-- > 0;) {
    c[i] = local % dims_[i];
    local /= dims_[i];
  }
  return c;
}

void Fabric::build_torus(int nodes) {
  if (nodes > subcluster_ && inter_ == nullptr)
    throw Error("fabric " + name_ + " has " + std::to_string(subcluster_) +
                " nodes per torus and no 'inter' fabric to join more");
  const bool tca = family_ == "tca";
  gpu_read_.assign(nodes, -1);
  gpu_read_large_.assign(nodes, -1);
  gpu_far_.assign(nodes, -1);
  torus_links_.assign(nodes, std::vector<int>(2 * dims_.size(), -1));
  for (int n = 0; n < nodes; ++n) {
    const std::string node = "n" + std::to_string(n);
    port_out_[n] = add_link(node + ".port_out", p("port_bandwidth"), p("port_latency"));
    port_in_[n] = add_link(node + ".port_in", p("port_bandwidth"), p("port_latency"));
    gpu_read_[n] =
        add_link(node + ".gpu_read", tca ? p("gpu_read_bandwidth") : p("p2p_read_bandwidth"), 0);
    if (tca) {
      gpu_read_large_[n] = add_link(node + ".gpu_read_large", p("gpu_read_large_bandwidth"), 0);
      gpu_far_[n] = add_link(node + ".gpu_far", p("gpu_far_read_bandwidth"), 0);
    }
    for (size_t d = 0; d < dims_.size(); ++d) {
      if (dims_[d] < 2) continue;
      // PEACH names: the ring's E and W ports (the last dimension), S across the double ring.
      const bool ring = tca && d + 1 == dims_.size();
      const bool across = tca && dims_[d] == 2;
      const std::string plus = ring ? "E" : across ? "S" : "d" + std::to_string(d) + "+";
      const std::string minus = ring ? "W" : "d" + std::to_string(d) + "-";
      torus_links_[n][2 * d] = add_link(node + "." + plus, p("link_bandwidth"), p("hop_latency"));
      if (dims_[d] > 2)
        torus_links_[n][2 * d + 1] =
            add_link(node + "." + minus, p("link_bandwidth"), p("hop_latency"));
    }
  }
  if (inter_ != nullptr && nodes > subcluster_) {
    inter_offset_ = static_cast<int>(links_.size());
    inter_->build(nodes);
    for (const LinkSpec& link : inter_->links()) links_.push_back(link);
  }
}

void Fabric::build_fat_tree(int nodes) {
  const int leaves = (nodes + leaf_radix_ - 1) / leaf_radix_;
  const int spines = leaves > 1 ? leaf_radix_ : 0;
  for (int n = 0; n < nodes; ++n) {
    const std::string node = "n" + std::to_string(n);
    port_out_[n] = add_link(node + ".hca_out", p("link_bandwidth"), p("port_latency"));
    port_in_[n] =
        add_link(node + ".hca_in", p("link_bandwidth"), p("port_latency") + p("switch_latency"));
  }
  gpu_read_.assign(nodes, -1);
  staged_.assign(nodes, -1);
  for (int n = 0; n < nodes; ++n) {
    gpu_read_[n] = add_link("n" + std::to_string(n) + ".gdr_read", p("gdr_read_bandwidth"), 0);
    staged_[n] = add_link("n" + std::to_string(n) + ".staged", p("staged_bandwidth"), 0);
  }
  leaf_up_.assign(leaves, std::vector<int>(spines, -1));
  spine_down_.assign(spines, std::vector<int>(leaves, -1));
  for (int l = 0; l < leaves; ++l)
    for (int s = 0; s < spines; ++s) {
      const std::string tag = "leaf" + std::to_string(l) + ".spine" + std::to_string(s);
      leaf_up_[l][s] = add_link(tag + ".up", p("link_bandwidth"), p("switch_latency"));
      spine_down_[s][l] = add_link(tag + ".down", p("link_bandwidth"), p("switch_latency"));
    }
}

void Fabric::build_host(int nodes) {
  const int eps = static_cast<int>(p("endpoints_per_switch"));
  const int sps = static_cast<int>(p("switches_per_socket"));
  const int sockets = static_cast<int>(p("sockets"));
  if (eps < 1 || sps < 1 || sockets < 1 || sockets > 2)
    throw Error("fabric " + name_ +
                ": a host has 1 or 2 sockets and at least one switch and endpoint");
  if (nodes > eps * sps * sockets)
    throw Error("fabric " + name_ + " has " + std::to_string(eps * sps * sockets) + " endpoints");
  staged_.assign(nodes, -1);
  for (int n = 0; n < nodes; ++n) {
    const std::string node = "e" + std::to_string(n);
    port_out_[n] = add_link(node + ".up", p("endpoint_bandwidth"), p("endpoint_latency"));
    port_in_[n] = add_link(node + ".down", p("endpoint_bandwidth"), p("endpoint_latency"));
    staged_[n] = add_link(node + ".large", p("large_bandwidth"), 0);
  }
  group_up_.clear();
  group_down_.clear();
  for (int g = 0; g < sps * sockets; ++g) {
    group_up_.push_back(
        add_link("sw" + std::to_string(g) + ".up", p("switch_bandwidth"), p("switch_latency")));
    group_down_.push_back(
        add_link("sw" + std::to_string(g) + ".down", p("switch_bandwidth"), p("switch_latency")));
  }
  socket_up_.clear();
  for (int s = 0; s < sockets; ++s)
    socket_up_.push_back(add_link("socket" + std::to_string(s) + ".cross", p("socket_bandwidth"),
                                  p("socket_latency")));
}

std::vector<int> Fabric::torus_route(int a, int b) const {
  std::vector<int> route;
  std::vector<int> at = coordinates(a);
  const std::vector<int> to = coordinates(b);
  const int base = a - (subcluster_ > 0 ? a % subcluster_ : 0);
  auto node_of = [&](const std::vector<int>& c) {
    int n = 0;
    for (size_t i = 0; i < c.size(); ++i) n = n * dims_[i] + c[i];
    return base + n;
  };
  // Address routing: the last dimension (the ring of E/W ports) first, then the others.
  for (size_t d = dims_.size(); d-- > 0;) {
    const int n = dims_[d];
    if (n < 2) continue;
    const int ahead = positive_mod(to[d] - at[d], n);
    const bool forward = n == 2 || ahead <= n / 2;
    const int steps = forward ? ahead : n - ahead;
    for (int s = 0; s < steps; ++s) {
      route.push_back(torus_links_[node_of(at)][2 * d + (forward ? 0 : 1)]);
      at[d] = positive_mod(at[d] + (forward ? 1 : -1), n);
    }
  }
  return route;
}

std::vector<int> Fabric::fat_tree_route(int a, int b) const {
  const int la = a / leaf_radix_, lb = b / leaf_radix_;
  if (la == lb) return {port_out_[a], port_in_[b]};
  const int spine = b % leaf_radix_;  // D-mod-k: the destination picks the spine
  return {port_out_[a], leaf_up_[la][spine], spine_down_[spine][lb], port_in_[b]};
}

std::vector<int> Fabric::host_route(int a, int b) const {
  const int eps = static_cast<int>(p("endpoints_per_switch"));
  const int sps = static_cast<int>(p("switches_per_socket"));
  const int ga = a / eps, gb = b / eps;
  if (ga == gb) return {port_out_[a], port_in_[b]};
  std::vector<int> route{port_out_[a], group_up_[ga]};
  if (ga / sps != gb / sps) route.push_back(socket_up_[ga / sps]);
  route.push_back(group_down_[gb]);
  route.push_back(port_in_[b]);
  return route;
}

int Fabric::hops(int a, int b) const {
  if (a == b) return 0;
  if (topology_ == "torus") {
    if (a / subcluster_ != b / subcluster_) return inter_->hops(a, b);
    return static_cast<int>(torus_route(a, b).size());
  }
  if (topology_ == "fat-tree") return a / leaf_radix_ == b / leaf_radix_ ? 1 : 3;
  if (topology_ == "gpu") return 0;  // one device
  return static_cast<int>(host_route(a, b).size()) - 1;
}

Plan Fabric::plan(const Request& r) const {
  if (r.src < 0 || r.dst < 0 || r.src >= nodes_ || r.dst >= nodes_)
    throw Error("fabric " + name_ + ": node outside the " + std::to_string(nodes_) + " built");
  if (family_ == "tca") return plan_tca(r);
  if (family_ == "apenet") return plan_apenet(r);
  if (family_ == "ib") return plan_ib(r);
  if (family_ == "gpu") return plan_gpu(r);
  return plan_host(r);
}

Plan Fabric::plan_tca(const Request& r) const {
  if (r.src / subcluster_ != r.dst / subcluster_) {  // another sub-cluster: InfiniBand
    Plan plan = inter_->plan(r);
    for (int& link : plan.links) link += inter_offset_;
    for (int& link : plan.head) link += inter_offset_;
    plan.protocol = "ib." + plan.protocol;
    return plan;
  }
  Plan plan;
  std::vector<int> route = {port_out_[r.src]};
  for (int link : torus_route(r.src, r.dst)) route.push_back(link);
  route.push_back(port_in_[r.dst]);
  if (r.op == Op::kPio) {
    plan.block = p("pio_overhead") + r.bytes / p("pio_bandwidth");
    plan.protocol = "pio";
  } else if (r.op == Op::kNotify) {
    plan.block = p("notify_overhead");
    plan.protocol = "notify";
  } else {
    plan.block = p("kick");
    plan.pre = (r.register_mode ? p("register_setup") : p("descriptor_fetch")) +
               (r.src_kind == MemKind::kCpu ? p("read_latency_cpu") : p("read_latency_gpu"));
    if (r.src_kind == MemKind::kGpu)
      plan.head.push_back(r.bytes > p("gpu_read_large_threshold") ? gpu_read_large_[r.src]
                                                                  : gpu_read_[r.src]);
    if (r.src_kind == MemKind::kGpuFar) plan.head.push_back(gpu_far_[r.src]);
    plan.protocol = r.register_mode ? "dma.register" : "dma.chain";
  }
  for (int link : route) plan.links.push_back(link);
  return plan;
}

Plan Fabric::plan_apenet(const Request& r) const {
  std::vector<int> route = {port_out_[r.src]};
  for (int link : torus_route(r.src, r.dst)) route.push_back(link);
  route.push_back(port_in_[r.dst]);
  Plan plan;
  plan.links = route;
  if (r.op != Op::kDma) {
    plan.block = p("notify_overhead");
    plan.protocol = "notify";
    return plan;
  }
  const double copy = p("cuda_copy_latency") + r.bytes / p("cuda_copy_bandwidth");
  plan.block = p("kick");
  plan.pre = p("host_latency");
  plan.protocol = "host";
  if (r.dst_kind != MemKind::kCpu) plan.protocol = "gpu_rx";  // RX into GPU memory: as fast
  if (r.src_kind == MemKind::kCpu) return plan;
  // GPU TX: P2P read of GPU memory, or a CUDA copy to host memory first (and one back at a GPU
  // destination); the runtime picks the faster at this size.
  Plan p2p = plan;
  p2p.pre = p("p2p_latency");
  p2p.head.push_back(gpu_read_[r.src]);
  p2p.protocol = "p2p";
  Plan staged = plan;
  staged.block += copy;
  staged.post = r.dst_kind == MemKind::kCpu ? 0 : copy;
  staged.protocol = "staged";
  Fabric const* self = this;
  auto cost = [self, &r](const Plan& candidate) {
    double latency = candidate.block + candidate.pre + candidate.post, narrowest = 1e300;
    for (const auto* list : {&candidate.head, &candidate.links})
      for (int link : *list) {
        latency += self->links_[link].latency;
        narrowest = std::min(narrowest, self->links_[link].bandwidth);
      }
    return latency + r.bytes / narrowest;
  };
  if (r.force == "p2p") return p2p;
  if (r.force == "staged") return staged;
  return cost(p2p) <= cost(staged) ? p2p : staged;
}

Plan Fabric::plan_ib(const Request& r) const {
  Plan plan;
  plan.links = fat_tree_route(r.src, r.dst);
  plan.block = p("send_overhead");
  if (r.op == Op::kNotify || r.op == Op::kPio) {
    plan.block = p("notify_overhead");
    plan.pre = p("cpu_latency");
    plan.protocol = "notify";
    return plan;
  }
  const bool gpu = r.src_kind != MemKind::kCpu || r.dst_kind != MemKind::kCpu;
  if (!gpu) {
    plan.pre = p("cpu_latency");
    plan.protocol = "host";
  } else if (!r.gdr) {
    plan.pre = p("nogdr_latency");
    plan.head.push_back(staged_[r.src]);
    plan.protocol = "cuda_staged";
  } else if (r.bytes <= p("staged_threshold")) {
    plan.pre = p("gdr_latency");
    if (r.src_kind != MemKind::kCpu) plan.head.push_back(gpu_read_[r.src]);
    plan.protocol = "gdr";
  } else {
    plan.pre = p("staged_latency");
    plan.head.push_back(staged_[r.src]);
    plan.protocol = "staged";
  }
  return plan;
}

Plan Fabric::plan_host(const Request& r) const {
  Plan plan;
  plan.links = r.src == r.dst ? std::vector<int>{port_out_[r.src], port_in_[r.dst]}
                              : host_route(r.src, r.dst);
  if (r.op == Op::kDma && r.bytes > p("large_threshold"))
    plan.head.push_back(staged_[r.src]);  // beyond the caches
  plan.synchronous = p("synchronous") != 0;
  plan.block = r.op == Op::kDma ? p("overhead") : p("notify_overhead");
  plan.protocol = r.op == Op::kDma ? "copy" : "notify";
  if (r.op == Op::kDma && r.path == "cuda.device") plan_device_program(r, &plan);
  return plan;
}

// One GPU shared by every rank: the copy engine's links (device to device, host to device, device
// to host), the kernel copies' links and host memory, each one link that all ranks share.
void Fabric::build_gpu(int /*nodes*/) {
  ce_d2d_ = add_link("gpu.ce_d2d", p("ce_gpu_bandwidth"), 0);
  ce_h2d_ = add_link("gpu.ce_h2d", p("ce_host_bandwidth"), 0);
  ce_d2h_ = add_link("gpu.ce_d2h", p("ce_host_bandwidth"), 0);
  sm_d2d_ = add_link("gpu.sm_d2d", p("sm_gpu_bandwidth"), 0);
  sm_host_ = add_link("gpu.sm_host", p("sm_host_bandwidth"), 0);
  host_mem_ = add_link("host.mem", p("cpu_bandwidth"), 0);
}

// The caller pays the kick; the rest of the fixed cost (for the GPU's time slice between the
// processes, most of it) passes before the bytes move. Kernel copies (a path named cuda.sm) pay
// the slice whatever the kinds; copy-engine copies pay it into GPU memory, from host memory only
// up to ce_h2d_sliced_max. The steps of a collective a GPU program runs (cuda.device) cost no
// host call and pay device_latency, the GPU-initiated put's. Host to host goes through memory,
// copied by the caller (shm).
Plan Fabric::plan_gpu(const Request& r) const {
  Plan plan;
  plan.protocol = "notify";
  if (r.op != Op::kDma) {
    plan.block = p("notify_overhead");
    plan.head.push_back(host_mem_);
    return plan;
  }
  const bool src_gpu = r.src_kind != MemKind::kCpu, dst_gpu = r.dst_kind != MemKind::kCpu;
  plan.block = p("kick");
  if (!src_gpu && !dst_gpu) {
    plan.block = p("cpu_overhead");
    plan.synchronous = true;
    plan.head.push_back(host_mem_);
    plan.protocol = "shm";
  } else if (r.path == "cuda.device") {  // a GPU program's stores and flag: no host call
    plan.block = 0;
    plan.pre = p("device_latency");
    plan.head.push_back(src_gpu && dst_gpu ? sm_d2d_ : sm_host_);
    plan.protocol = "device";
    plan_device_program(r, &plan);
  } else if (r.path.rfind("cuda.sm", 0) == 0) {
    plan.pre = p("sm_latency");
    plan.head.push_back(src_gpu && dst_gpu ? sm_d2d_ : sm_host_);
    plan.protocol = "sm";
  } else if (src_gpu && dst_gpu) {
    plan.pre = p("ce_gpu_latency");
    plan.head.push_back(ce_d2d_);
    plan.protocol = "ce";
  } else if (dst_gpu) {
    const bool sliced = r.bytes <= p("ce_h2d_sliced_max");
    plan.pre = sliced ? p("ce_h2d_sliced_latency") : p("ce_h2d_latency");
    plan.head.push_back(ce_h2d_);
    plan.protocol = sliced ? "ce.sliced" : "ce";
  } else {
    plan.pre = p("ce_d2h_latency");
    plan.head.push_back(ce_d2h_);
    plan.protocol = "ce";
  }
  return plan;
}

double Fabric::cuda_copy(double bytes) const {
  return p("cuda_copy_latency") + bytes / p("cuda_copy_bandwidth");
}

double Fabric::zero_load(const Request& request) const {
  const Plan plan = this->plan(request);
  double latency = plan.block + plan.pre + plan.post, narrowest = 1e300;
  for (const auto* list : {&plan.head, &plan.links})
    for (int link : *list) {
      latency += links_[link].latency;
      narrowest = std::min(narrowest, links_[link].bandwidth);
    }
  if (plan.rate > 0) narrowest = std::min(narrowest, plan.rate);
  return latency + (request.op == Op::kDma ? request.bytes / narrowest : 0.0);
}

}  // namespace tca_sim
