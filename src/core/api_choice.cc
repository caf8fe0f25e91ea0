// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The public C API of the choices by size: the transport (tcaAutoTransport) and the fixed rules
// (tcaGetChoiceRule, from tuning/rules.h).
#include <string>

#include "base/error.h"
#include "core/context.h"
#include "tuning/rules.h"

extern "C" {

tcaResult tcaAutoTransport(int peer, tcaMemKind local, tcaMemKind remote, size_t bytes,
                           const char** name, const char** table) {
  tca::Context* context = tca::current_context();
  if (context == nullptr) TCA_FAIL(TCA_ERROR_NOT_INITIALIZED, "call tcaInit first");
  if (peer < 0 || peer >= context->size())
    TCA_FAIL(TCA_ERROR_INVALID_RANK, "rank {} outside [0, {})", peer, context->size());
  if (name == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "name is NULL");
  // As integers: a caller may pass any value, and only the two kinds are loaded as the enum.
  for (const int kind : {static_cast<int>(local), static_cast<int>(remote)})
    if (kind != TCA_MEM_CPU && kind != TCA_MEM_GPU)
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown memory kind {}", kind);
  const tca::Transport* transport = context->auto_transport(peer, local, remote, bytes);
  if (transport == nullptr)
    TCA_FAIL(TCA_ERROR_UNREACHABLE,
             "no transport of this build reaches rank {}'s {} memory from "
             "rank {}'s {} memory",
             peer, remote == TCA_MEM_GPU ? "GPU" : "host", context->rank(),
             local == TCA_MEM_GPU ? "GPU" : "host");
  *name = transport->name();
  if (table != nullptr) {
    static thread_local std::string text;  // valid until this thread's next call
    text = context->choice_table(peer, local, remote);
    *table = text.c_str();
  }
  return TCA_SUCCESS;
}

tcaResult tcaGetChoiceRuleCount(int* count) {
  if (count == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "count is NULL");
  *count = static_cast<int>(tca::tuning::listed_rules().size());
  return TCA_SUCCESS;
}

tcaResult tcaGetChoiceRule(int index, tcaChoiceRule* rule) {
  const auto& rules = tca::tuning::listed_rules();
  if (rule == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "rule is NULL");
  if (index < 0 || static_cast<size_t>(index) >= rules.size())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "choice rule {} outside [0, {})", index, rules.size());
  const tca::tuning::ListedRule& listed = rules[index];
  *rule = {listed.choice.c_str(), listed.when.c_str(), static_cast<size_t>(listed.max_bytes),
           listed.pick.c_str()};
  return TCA_SUCCESS;
}

}  // extern "C"
