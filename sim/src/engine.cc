// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The SimGrid side: hosts, links and routes from a built Fabric, one actor per rank replaying its
// program, detached actors for the chains in flight, notification counters per rank.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <simgrid/s4u.hpp>
#include <sstream>
#include <tuple>

#include "job.h"

namespace sg4 = simgrid::s4u;

namespace tca_sim {
namespace {

// A message ready to go: its plan and the SimGrid hosts its route joins.
struct Ready {
  Plan plan;
  sg4::Host* from = nullptr;
  sg4::Host* to = nullptr;
  double bytes = 0;
  int dst_rank = 0;
  int notify_slot = -1;
  bool charge_block = true;
};

struct RankState {
  sg4::MutexPtr mutex;
  sg4::ConditionVariablePtr changed;
  std::map<std::pair<int, int>, long> arrived;   // (source rank, slot) -> notifications
  std::map<std::pair<int, int>, long> consumed;  // waits that returned
  // The rank's DMA engine: chains (and notifications, ordered after them) run one after
  // another by one actor, as a DMA controller walks its descriptors.
  std::deque<std::vector<Ready>> queue;
  bool busy = false;
  sg4::ConditionVariablePtr engine_changed;
  std::map<std::string, double> open_phases;
  std::map<std::string, double> phase_totals;
};

class World {
 public:
  World(const Fabric& fabric, const Job& job) : fabric_(fabric), job_(job) {}

  void build() {
    auto* zone = sg4::create_full_zone("fabric");
    for (const LinkSpec& spec : fabric_.links())
      links_.push_back(
          zone->create_link(spec.name, std::max(spec.bandwidth, 1.0))->set_latency(spec.latency));
    const int ranks = static_cast<int>(job_.ranks.size());
    for (int n = 0; n < fabric_.nodes(); ++n)
      receivers_.push_back(zone->create_host("n" + std::to_string(n), 1e9));
    // Every message's route, before the zone is sealed.
    ready_.resize(ranks);
    for (int r = 0; r < ranks; ++r)
      for (const Step& step : job_.ranks[r])
        for (size_t i = 0; i < step.messages.size(); ++i)
          ready_[r].push_back(prepare(zone, r, step.messages[i], i == 0 || !chained_kick()));
    notify_plans_.resize(ranks);
    for (int r = 0; r < ranks; ++r)
      for (const Step& step : job_.ranks[r])
        if (step.kind == Step::kNotify) {
          Message m;
          m.dst_rank = step.peer;
          m.bytes = 8;
          m.op = Op::kNotify;
          notify_plans_[r].push_back(prepare(zone, r, m, true));
        }
    zone->seal();
    states_.resize(ranks);
    for (RankState& state : states_) {
      state.mutex = sg4::Mutex::create();
      state.changed = sg4::ConditionVariable::create();
      state.engine_changed = sg4::ConditionVariable::create();
    }
    barrier_ = sg4::Barrier::create(ranks);
    barrier_cost_ = 0;
    if (ranks > 1) {
      Request probe;
      probe.src = node(0);
      probe.dst = node(1);
      probe.bytes = 8;
      probe.op = Op::kNotify;
      barrier_cost_ = 2 * std::ceil(std::log2(ranks)) * fabric_.zero_load(probe);
    }
    result_.rank_end.assign(ranks, 0);
    for (int r = 0; r < ranks; ++r) {
      sg4::Actor::create("rank" + std::to_string(r), receivers_[node(r)],
                         [this, r] { run_rank(r); });
      // Daemons: they end with the last rank.
      sg4::Actor::create("dma" + std::to_string(r), receivers_[node(r)], [this, r] {
        run_engine(r);
      })->daemonize();
    }
  }

  Result result() const { return result_; }

 private:
  bool chained_kick() const { return fabric_.family() == "tca"; }
  int node(int rank) const { return job_.node_of_rank.empty() ? rank : job_.node_of_rank[rank]; }

  Ready prepare(sg4::NetZone* zone, int rank, const Message& m, bool charge_block) {
    Request request;
    request.src = node(m.src_rank >= 0 ? m.src_rank : rank);
    request.dst = node(m.dst_rank);
    request.bytes = m.bytes;
    request.src_kind = m.src_kind;
    request.dst_kind = m.dst_kind;
    request.op = m.op;
    request.path = m.path;
    request.channels = m.channels;
    request.inline_protocol = m.inline_protocol;
    request.register_mode = job_.register_mode;
    Ready ready;
    ready.plan = fabric_.plan(request);
    // The inline protocol's 8-byte stores carry 4 bytes of data: its steps put twice their data
    // on the links and through the blocks.
    ready.bytes = m.op != Op::kDma ? 0 : m.inline_protocol ? 2 * m.bytes : m.bytes;
    ready.dst_rank = m.dst_rank;
    ready.notify_slot = m.notify_slot;
    ready.charge_block = charge_block;
    ready.to = receivers_[request.dst];
    // A receiver host per node, and a sender host per node and head (the source's own limits:
    // GPU read, staging; few per node), so every (sender, receiver) pair has one route: the
    // head's links, then the network's between the two nodes.
    // A rate of the sender's own (a GPU program's blocks): one more head link of the node.
    std::vector<int> head = ready.plan.head;
    if (ready.plan.rate > 0) head.push_back(rate_link(zone, request.src, ready.plan.rate));
    const auto sender_key = std::make_pair(request.src, head);
    auto sender = senders_.find(sender_key);
    if (sender == senders_.end()) {
      const std::string name =
          "n" + std::to_string(request.src) + ".out" + std::to_string(senders_.size());
      sender = senders_.emplace(sender_key, zone->create_host(name, 1e9)).first;
    }
    if (routed_.insert({sender->second, request.dst}).second) {
      std::vector<sg4::LinkInRoute> route;
      for (int link : head) route.emplace_back(links_[link]);
      for (int link : ready.plan.links) route.emplace_back(links_[link]);
      zone->add_route(sender->second->get_netpoint(), ready.to->get_netpoint(), nullptr, nullptr,
                      route, false);
    }
    ready.from = sender->second;
    return ready;
  }

  // The link (after the fabric's in links_) that bounds the messages of node `node` to `rate`,
  // shared by every such message of the node (the same blocks store them).
  int rate_link(sg4::NetZone* zone, int node, double rate) {
    const auto key = std::make_pair(node, rate);
    const auto found = rate_links_.find(key);
    if (found != rate_links_.end()) return found->second;
    const std::string name =
        "n" + std::to_string(node) + ".program" + std::to_string(rate_links_.size());
    links_.push_back(zone->create_link(name, rate)->set_latency(0));
    const int index = static_cast<int>(links_.size()) - 1;
    rate_links_.emplace(key, index);
    return index;
  }

  // Moves one message and raises its notification at the destination.
  void deliver(int rank, const Ready& m) {
    if (m.plan.pre > 0) sg4::this_actor::sleep_for(m.plan.pre);
    sg4::Comm::sendto(m.from, m.to, static_cast<uint64_t>(std::max(m.bytes, 1.0)));
    if (m.plan.post > 0) sg4::this_actor::sleep_for(m.plan.post);
    const int slot = m.notify_slot;
    if (slot >= 0) raise(m.dst_rank, rank, slot);
  }

  void raise(int dst, int src, int slot) {
    RankState& state = states_[dst];
    std::unique_lock<sg4::Mutex> lock(*state.mutex);
    ++state.arrived[{src, slot}];
    state.changed->notify_all();
  }

  void drain(int rank) {
    RankState& state = states_[rank];
    std::unique_lock<sg4::Mutex> lock(*state.mutex);
    while (!state.queue.empty() || state.busy) state.engine_changed->wait(lock);
  }

  void enqueue(int rank, std::vector<Ready> chain) {
    RankState& state = states_[rank];
    std::unique_lock<sg4::Mutex> lock(*state.mutex);
    state.queue.push_back(std::move(chain));
    state.engine_changed->notify_all();
  }

  void run_engine(int rank) {
    RankState& state = states_[rank];
    for (;;) {
      std::vector<Ready> chain;
      {
        std::unique_lock<sg4::Mutex> lock(*state.mutex);
        while (state.queue.empty()) state.engine_changed->wait(lock);
        chain = std::move(state.queue.front());
        state.queue.pop_front();
        state.busy = true;
      }
      for (const Ready& m : chain) deliver(rank, m);
      std::unique_lock<sg4::Mutex> lock(*state.mutex);
      state.busy = false;
      state.engine_changed->notify_all();
    }
  }

  void run_rank(int rank) {
    RankState& state = states_[rank];
    size_t next_message = 0, next_notify = 0;
    for (const Step& step : job_.ranks[rank]) {
      switch (step.kind) {
        case Step::kCompute:
          if (step.seconds > 0) sg4::this_actor::sleep_for(step.seconds);
          break;
        case Step::kKick: {
          std::vector<Ready> chain(ready_[rank].begin() + next_message,
                                   ready_[rank].begin() + next_message + step.messages.size());
          next_message += step.messages.size();
          double block = 0;
          for (const Ready& m : chain)
            if (m.charge_block) block += m.plan.block;
          if (block > 0) sg4::this_actor::sleep_for(block);
          if (!chain.empty() && chain.front().plan.synchronous) {
            for (const Ready& m : chain) deliver(rank, m);
          } else {
            enqueue(rank, std::move(chain));
          }
          break;
        }
        case Step::kPut: {
          const Ready& m = ready_[rank][next_message++];
          if (m.plan.block > 0) sg4::this_actor::sleep_for(m.plan.block);
          deliver(rank, m);
          break;
        }
        case Step::kNotify: {
          Ready m = notify_plans_[rank][next_notify++];
          m.notify_slot = step.slot;
          if (m.plan.block > 0) sg4::this_actor::sleep_for(m.plan.block);
          // After everything this rank started before it (tca's ordering).
          if (m.plan.synchronous)
            deliver(rank, m);
          else
            enqueue(rank, {m});
          break;
        }
        case Step::kWait: {
          std::unique_lock<sg4::Mutex> lock(*state.mutex);
          const std::pair<int, int> key{step.peer, step.slot};
          while (state.arrived[key] <= state.consumed[key]) state.changed->wait(lock);
          ++state.consumed[key];
          break;
        }
        case Step::kDrain:
          drain(rank);
          break;
        case Step::kBarrier:
          drain(rank);
          barrier_->wait();
          if (barrier_cost_ > 0) sg4::this_actor::sleep_for(barrier_cost_);
          break;
        case Step::kDeviceCall:
          if (fabric_.device_call(step.name) > 0)
            sg4::this_actor::sleep_for(fabric_.device_call(step.name));
          break;
        case Step::kDeviceStep:
          if (fabric_.device_step() > 0) sg4::this_actor::sleep_for(fabric_.device_step());
          break;
        case Step::kDeviceWork:
          if (fabric_.device_work(step.name) > 0)
            sg4::this_actor::sleep_for(fabric_.device_work(step.name));
          break;
        case Step::kPhaseBegin:
          state.open_phases[step.name] = sg4::Engine::get_clock();
          break;
        case Step::kPhaseEnd: {
          const auto open = state.open_phases.find(step.name);
          if (open != state.open_phases.end()) {
            PhaseTotal& total = result_.phases[step.name];
            total.seconds += sg4::Engine::get_clock() - open->second;
            state.phase_totals[step.name] += sg4::Engine::get_clock() - open->second;
            ++total.count;
            state.open_phases.erase(open);
          }
          break;
        }
      }
    }
    drain(rank);
    for (const auto& [name, seconds] : state.phase_totals) {
      PhaseTotal& total = result_.phases[name];
      total.max_seconds = std::max(total.max_seconds, seconds);
    }
    result_.rank_end[rank] = sg4::Engine::get_clock();
    result_.makespan = std::max(result_.makespan, result_.rank_end[rank]);
  }

  const Fabric& fabric_;
  const Job& job_;
  std::vector<sg4::Link*> links_;
  std::vector<sg4::Host*> receivers_;
  std::map<std::pair<int, std::vector<int>>, sg4::Host*> senders_;
  std::map<std::pair<int, double>, int> rate_links_;  // (node, bytes/s) -> index in links_
  std::set<std::pair<sg4::Host*, int>> routed_;
  std::vector<std::vector<Ready>> ready_;
  std::vector<std::vector<Ready>> notify_plans_;
  std::vector<RankState> states_;
  sg4::BarrierPtr barrier_;
  double barrier_cost_ = 0;
  Result result_;
};

std::string serialize(const Result& r) {
  std::ostringstream out;
  out.precision(17);
  out << "makespan " << r.makespan << "\n";
  for (double end : r.rank_end) out << "rank " << end << "\n";
  for (const auto& [name, total] : r.phases)
    out << "phase " << name << " " << total.seconds << " " << total.count << " "
        << total.max_seconds << "\n";
  return out.str();
}

Result deserialize(const std::string& text) {
  Result r;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    if (word == "makespan") {
      in >> r.makespan;
    } else if (word == "rank") {
      double end = 0;
      in >> end;
      r.rank_end.push_back(end);
    } else if (word == "phase") {
      std::string name;
      PhaseTotal total;
      in >> name >> total.seconds >> total.count >> total.max_seconds;
      r.phases[name] = total;
    } else if (word == "error") {
      std::string rest;
      std::getline(in, rest);
      throw Error(rest.empty() ? "simulation failed" : rest.substr(1));
    }
  }
  return r;
}

void run_child(const Fabric& fabric, const Job& job, int fd) {
  std::string text;
  try {
    int argc = 2;
    char program[] = "tca-sim";
    char quiet[] = "--log=root.thres:critical";
    char* argv[] = {program, quiet, nullptr};
    sg4::Engine engine(&argc, argv);
    // Flow-level sharing without the TCP-derived corrections: a message takes the sum of its
    // links' latencies plus its bytes over its share of the narrowest link.
    sg4::Engine::set_config("network/model:CM02");
    sg4::Engine::set_config("network/crosstraffic:0");
    sg4::Engine::set_config("network/TCP-gamma:0");
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer follows threads, not SimGrid's own stack switching.
    sg4::Engine::set_config("contexts/factory:thread");
#endif
    World world(fabric, job);
    world.build();
    engine.run();
    text = serialize(world.result());
  } catch (const std::exception& error) {
    text = std::string("error ") + error.what() + "\n";
  }
  const char* data = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t wrote = write(fd, data, left);
    if (wrote <= 0) break;
    data += wrote;
    left -= static_cast<size_t>(wrote);
  }
}

}  // namespace

Result simulate(const Fabric& fabric, const Job& job) {
  if (job.ranks.empty()) throw Error("a simulation needs at least one rank");
  for (size_t r = 0; r < job.ranks.size(); ++r) {
    const int n = job.node_of_rank.empty() ? static_cast<int>(r) : job.node_of_rank[r];
    if (n < 0 || n >= fabric.nodes())
      throw Error("rank " + std::to_string(r) + " is on node " + std::to_string(n) +
                  ", outside the " + std::to_string(fabric.nodes()) + " nodes of " + fabric.name());
  }
  const auto begin = std::chrono::steady_clock::now();
  int fds[2];
  if (pipe(fds) != 0) throw Error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) throw Error(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    close(fds[0]);
    run_child(fabric, job, fds[1]);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buffer[65536];
  for (ssize_t got; (got = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    text.append(buffer, static_cast<size_t>(got));
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("the simulation process ended abnormally" + (text.empty() ? "" : ": " + text));
  if (text.empty()) throw Error("the simulation process returned nothing");
  Result result = deserialize(text);
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return result;
}

}  // namespace tca_sim
