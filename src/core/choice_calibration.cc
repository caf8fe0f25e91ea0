// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The context's choice between transports by size (tuning/transport_choice.h): the start-up
// ping-pong between rank 0 and one peer of each class, the cache, and the lookup AUTO makes.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "base/error.h"
#include "base/log.h"
#include "base/settings.h"
#include "core/context.h"

namespace tca {
namespace {

// The notification slot of the ping-pongs (one of tca's own; every message is consumed before
// tcaInit returns, so the slot's sequences start every later use in step).
constexpr int kChoiceSlot = TCA_NOTIFY_SLOTS - 1;
constexpr int kMaxSteps = 8;

const char* kind_text(tcaMemKind kind) { return kind == TCA_MEM_GPU ? "gpu" : "cpu"; }

// Every class's table as rank 0 broadcasts it.
struct WireTables {
  uint64_t from[8][kMaxSteps];
  int32_t id[8][kMaxSteps];
  int32_t steps[8];
};

}  // namespace

// One class: rank 0 and `partner`, memory `kind` at both ends, the candidates' ids in order of
// preference, and whether it is to be measured now (else the cache has it).
struct Context::ChoicePlan {
  int32_t klass = 0;
  int32_t partner = -1;
  int32_t kind = TCA_MEM_CPU;
  int32_t measure = 0;
  int32_t count = 0;
  int32_t ids[kMaxTransports] = {};
};

Transport* Context::first_of_id(int id) const {
  for (Transport* transport : order_)
    if (transport->id() == id) return transport;
  return nullptr;
}

Transport* Context::auto_transport(int peer, tcaMemKind local, tcaMemKind remote,
                                   uint64_t bytes) const {
  Transport* chosen = default_transport(peer, local, remote);
  const ChoiceTable& table = choices_[choice_class(peer, local, remote)];
  if (forced_ || table.steps.empty() || peer == rank_) return chosen;
  Transport* sized = first_of_id(table.pick(bytes));
  return sized != nullptr && sized->can_reach(peer, local, remote) ? sized : chosen;
}

std::string Context::choice_table(int peer, tcaMemKind local, tcaMemKind remote) const {
  const ChoiceTable& table = choices_[choice_class(peer, local, remote)];
  if (forced_ || peer == rank_) return "";
  std::string text;
  for (const ChoiceStep& step : table.steps) {
    const Transport* transport = first_of_id(step.value);
    text += fmt::format("{}{}:{}", text.empty() ? "" : ",", step.from_bytes,
                        transport != nullptr ? transport->name() : "?");
  }
  return text;
}

// Rank 0's view: for a peer on its host and one on another host (as tca sees hosts), host
// memory and (where both have a GPU) GPU memory, the transports that reach it, when more than
// one does. `keys` name each class in the cache.
tcaResult Context::plan_choices(std::vector<ChoicePlan>* plan, std::vector<std::string>* keys,
                                ChoiceCache* cache) {
  std::string mode;
  TCA_CHECK(setting_choice("TCA_CHOICE", &mode));
  const std::string path = choice_cache_path();
  if (!path.empty() && cache->load(path, kMaxTransports) != TCA_SUCCESS) {
    // A damaged cache is measured anew (and rewritten), not a reason to fail tcaInit.
    TCA_WARN("{}; measuring the choice between transports again", last_error_message());
    clear_last_error();
    *cache = ChoiceCache();
    mode = "measure";
  }
  for (const bool same : {true, false}) {
    int partner = -1;
    for (int rank = 1; rank < size_ && partner < 0; ++rank)
      if (same_host(rank) == same) partner = rank;
    if (partner < 0) continue;
    for (const tcaMemKind kind : {TCA_MEM_CPU, TCA_MEM_GPU}) {
      if (kind == TCA_MEM_GPU && !gpu_ranks_[0]) continue;
      if (kind == TCA_MEM_GPU && !gpu_ranks_[partner]) continue;
      ChoicePlan item;
      item.klass = choice_class(partner, kind, kind);
      item.partner = partner;
      item.kind = kind;
      std::string names;
      for (Transport* transport : order_) {
        if (!transport->can_reach(partner, kind, kind)) continue;
        item.ids[item.count++] = transport->id();
        names += fmt::format("{}{}", names.empty() ? "" : "+", transport->name());
      }
      if (item.count < 2) continue;
      const char* where = same ? "host" : same_machine(partner) ? "fakehosts" : "network";
      const std::string key = fmt::format("{}/{}/{}", where, kind_text(kind), names);
      item.measure = mode == "measure" || cache->find(key) == nullptr ? 1 : 0;
      plan->push_back(item);
      keys->push_back(key);
    }
  }
  return TCA_SUCCESS;
}

tcaResult Context::calibrate_choices() {
  std::string mode;
  TCA_CHECK(setting_choice("TCA_CHOICE", &mode));
  if (mode == "off" || forced_ || size_ == 1) return TCA_SUCCESS;
  std::vector<ChoicePlan> plan;
  std::vector<std::string> keys;
  ChoiceCache cache;
  if (rank_ == 0) TCA_CHECK(plan_choices(&plan, &keys, &cache));
  int32_t count = static_cast<int32_t>(plan.size());
  TCA_CHECK(bootstrap_->broadcast(&count, sizeof(count), 0));
  plan.resize(count);
  if (count > 0) TCA_CHECK(bootstrap_->broadcast(plan.data(), sizeof(ChoicePlan) * count, 0));
  bool measured = false;
  for (int32_t i = 0; i < count; ++i) {
    if (!plan[i].measure) continue;
    std::vector<std::vector<double>> micros;
    TCA_CHECK(measure_choice(plan[i], &micros));
    measured = true;
    if (rank_ != 0) continue;
    const std::vector<int> ids(plan[i].ids, plan[i].ids + plan[i].count);
    cache.set(keys[i], choose_by_size(choice_sizes(), ids, micros));
  }
  WireTables wire = {};
  if (rank_ == 0) {
    for (int32_t i = 0; i < count; ++i) {
      const ChoiceTable* table = cache.find(keys[i]);
      const int klass = plan[i].klass;
      for (const ChoiceStep& step : table->steps) {
        if (wire.steps[klass] == kMaxSteps) break;
        wire.from[klass][wire.steps[klass]] = step.from_bytes;
        wire.id[klass][wire.steps[klass]++] = step.value;
      }
      TCA_INFO("transport choice for {}: {}", keys[i], encode_table(*table));
    }
    if (measured && cache.save(choice_cache_path()) != TCA_SUCCESS) {
      TCA_WARN("the transport choice is not cached: {}", last_error_message());
      clear_last_error();
    }
  }
  TCA_CHECK(bootstrap_->broadcast(&wire, sizeof(wire), 0));
  for (int klass = 0; klass < 8; ++klass) {
    choices_[klass].steps.clear();
    for (int32_t step = 0; step < wire.steps[klass]; ++step)
      choices_[klass].steps.push_back({wire.from[klass][step], wire.id[klass][step]});
  }
  return TCA_SUCCESS;
}

// Collective over all ranks; rank 0 and the partner time each candidate while the others wait.
tcaResult Context::measure_choice(const ChoicePlan& item,
                                  std::vector<std::vector<double>>* micros) {
  const bool in_pair = rank_ == 0 || rank_ == item.partner;
  const tcaMemKind kind = static_cast<tcaMemKind>(item.kind);
  const uint64_t bytes = choice_sizes().back();
  void* buffer = nullptr;
  tcaHandle mine = {};
  if (in_pair) {
    TCA_CHECK(malloc_memory(&buffer, bytes, kind));
    if (create_handle(buffer, bytes, kind, &mine) != TCA_SUCCESS) {
      const ErrorKeeper keep;
      free_memory(buffer);
      return append_frame(TCA_ERROR_TRANSPORT, __FILE__, __LINE__);
    }
  }
  std::vector<tcaHandle> all(size_);
  tcaResult result = bootstrap_->allgather(&mine, all.data(), sizeof(tcaHandle));
  const int other = rank_ == 0 ? item.partner : 0;
  PeerRegion* theirs = nullptr;
  PeerRegion* own = nullptr;
  if (result == TCA_SUCCESS && in_pair) result = resolve(&all[other], &theirs);
  if (result == TCA_SUCCESS && in_pair) result = resolve(&mine, &own);
  micros->assign(item.count, std::vector<double>(choice_sizes().size(), 0.0));
  for (int32_t c = 0; c < item.count && result == TCA_SUCCESS && in_pair; ++c) {
    Transport* transport = first_of_id(item.ids[c]);
    if (transport == nullptr) {
      result = TCA_ERROR_INTERNAL;
      break;
    }
    result = pingpong(other, rank_ == 0, transport, own, theirs, &(*micros)[c]);
  }
  // Nobody frees its buffer while the other may still write it.
  const tcaResult met = bootstrap_->barrier();
  if (in_pair) {
    const ErrorKeeper keep;
    destroy_handle(&mine);
    free_memory(buffer);
  }
  TCA_CHECK(result);
  return met;
}

tcaResult Context::pingpong(int partner, bool initiator, Transport* transport, PeerRegion* mine,
                            PeerRegion* theirs, std::vector<double>* micros) {
  using Clock = std::chrono::steady_clock;
  const std::vector<uint64_t>& sizes = choice_sizes();
  for (size_t s = 0; s < sizes.size(); ++s) {
    Transfer transfer;
    transfer.dst = theirs;
    transfer.src = mine;
    transfer.width = sizes[s];
    transfer.dst_pitch = transfer.src_pitch = sizes[s];
    transfer.flags = TCA_FLAG_NOTIFY;
    transfer.slot = kChoiceSlot;
    transfer.peer = partner;
    std::unique_ptr<PreparedRun> run;
    TCA_CHECK(transport->prepare({transfer}, &run));
    // The best of three batches: a batch that a busy machine slowed says nothing of the path.
    const int warmup = 2;
    const int rounds = sizes[s] <= (64u << 10) ? 10 : 3;
    constexpr int kBatches = 3;
    double best = 0;
    for (int batch = 0; batch < kBatches; ++batch) {
      Clock::time_point begin;
      for (int i = 0; i < (batch == 0 ? warmup : 0) + rounds; ++i) {
        if (i == (batch == 0 ? warmup : 0)) begin = Clock::now();
        if (!initiator) TCA_CHECK(wait_notification(partner, kChoiceSlot, nullptr));
        TCA_CHECK(run->start());
        TCA_CHECK(run->wait());
        if (initiator) TCA_CHECK(wait_notification(partner, kChoiceSlot, nullptr));
      }
      const double micros_one_way =
          std::chrono::duration<double>(Clock::now() - begin).count() * 1e6 / rounds / 2;
      best = batch == 0 ? micros_one_way : std::min(best, micros_one_way);
    }
    (*micros)[s] = best;
  }
  return TCA_SUCCESS;
}

}  // namespace tca
