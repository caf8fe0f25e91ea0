// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "bootstrap/launch_env.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "base/settings.h"

namespace tca {
namespace {

const char* variable(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// A whole number in [min, max] from a variable outside the settings table (torchrun's).
tcaResult launcher_number(const char* name, int64_t min, int64_t max, int64_t* out) {
  const std::string text = variable(name);
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) || *end != '\0' ||
      value < min || value > max)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{}='{}' is not a whole number in [{}, {}]", name, text,
             min, max);
  *out = value;
  return TCA_SUCCESS;
}

// tca's own variables: all three or none.
tcaResult read_tca_variables(TcpEnvironment* out) {
  bool rank_set = false, size_set = false, root_set = false;
  int64_t rank = 0, size = 1;
  std::string root;
  TCA_CHECK(setting_count("TCA_RANK", &rank, &rank_set));
  TCA_CHECK(setting_count("TCA_SIZE", &size, &size_set));
  TCA_CHECK(setting_text("TCA_ROOT", &root, &root_set));
  if (!rank_set || !size_set)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "the tcp bootstrap needs TCA_RANK and TCA_SIZE with TCA_ROOT (missing: {}{})",
             rank_set ? "" : "TCA_RANK ", size_set ? "" : "TCA_SIZE");
  if (!root_set && size > 1)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "TCA_RANK and TCA_SIZE are set but TCA_ROOT (host:port of rank 0) is not");
  out->rank = static_cast<int>(rank);
  out->size = static_cast<int>(size);
  out->source = "TCA_RANK, TCA_SIZE, TCA_ROOT";
  if (root_set) TCA_CHECK(parse_endpoint(root, "TCA_ROOT", &out->root));
  return TCA_SUCCESS;
}

// torchrun's: its store listens on MASTER_PORT, so tca takes the port after it (or TCA_ROOT).
tcaResult read_torchrun_variables(TcpEnvironment* out) {
  const char* names[] = {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"};
  std::string missing;
  for (const char* name : names)
    if (variable(name) == nullptr) missing += std::string(" ") + name;
  if (!missing.empty())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "torchrun's variables are set only in part (missing:{}); set TCA_RANK, TCA_SIZE "
             "and TCA_ROOT instead",
             missing);
  int64_t rank = 0, size = 1, port = 0;
  TCA_CHECK(launcher_number("WORLD_SIZE", 1, INT32_MAX, &size));
  TCA_CHECK(launcher_number("RANK", 0, INT32_MAX, &rank));
  TCA_CHECK(launcher_number("MASTER_PORT", 1, 65534, &port));
  out->rank = static_cast<int>(rank);
  out->size = static_cast<int>(size);
  out->root.host = variable("MASTER_ADDR");
  out->root.port = static_cast<uint16_t>(port + 1);
  out->source = "torchrun's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (tca's port: MASTER_PORT+1)";
  std::string root;
  bool root_set = false;
  TCA_CHECK(setting_text("TCA_ROOT", &root, &root_set));
  if (root_set) TCA_CHECK(parse_endpoint(root, "TCA_ROOT", &out->root));
  return TCA_SUCCESS;
}

// TCA_JOB_KEY, else what only this job's processes were given by their launcher.
void choose_key(TcpEnvironment* out) {
  std::string key;
  bool set = false;
  if (setting_text("TCA_JOB_KEY", &key, &set) == TCA_SUCCESS && set) {
    out->key = key;
    out->key_source = "TCA_JOB_KEY";
    return;
  }
  std::string job;
  for (const char* name : {"TORCHELASTIC_RUN_ID", "SLURM_JOB_ID", "SLURM_STEP_ID", "PBS_JOBID"})
    if (const char* value = variable(name)) job += fmt::format("{}={};", name, value);
  out->key = fmt::format("{}root={};size={}", job, out->root.text(), out->size);
  out->key_source = job.empty() ? "the root's address and the size (no TCA_JOB_KEY)"
                                : "the launcher's job id, the root's address and the size";
}

}  // namespace

std::string mpi_launcher() {
  if (variable("OMPI_COMM_WORLD_SIZE") != nullptr) return "Open MPI's launcher";
  if (variable("MV2_COMM_WORLD_SIZE") != nullptr) return "MVAPICH's launcher";
  if (variable("PMI_SIZE") != nullptr && variable("PMI_RANK") != nullptr)
    return "an MPICH-style launcher (PMI_RANK, PMI_SIZE)";
  if (variable("MPI_LOCALNRANKS") != nullptr) return "an MPI launcher (MPI_LOCALNRANKS)";
  return "";
}

bool pmix_server_present() {
  return variable("PMIX_NAMESPACE") != nullptr && variable("PMIX_RANK") != nullptr;
}

bool tcp_environment_present() {
  for (const char* name : {"TCA_RANK", "TCA_SIZE", "TCA_ROOT", "MASTER_ADDR", "MASTER_PORT"})
    if (variable(name) != nullptr) return true;
  return variable("RANK") != nullptr && variable("WORLD_SIZE") != nullptr;  // torchrun's, in part
}

tcaResult read_tcp_environment(TcpEnvironment* out) {
  TcpEnvironment environment;
  if (variable("TCA_RANK") != nullptr || variable("TCA_SIZE") != nullptr)
    TCA_CHECK(read_tca_variables(&environment));
  else if (variable("RANK") != nullptr || variable("MASTER_ADDR") != nullptr ||
           variable("MASTER_PORT") != nullptr)
    TCA_CHECK(read_torchrun_variables(&environment));
  else
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "the tcp bootstrap needs TCA_RANK, TCA_SIZE and TCA_ROOT (or torchrun's RANK, "
             "WORLD_SIZE, MASTER_ADDR and MASTER_PORT); none is set");
  if (environment.rank >= environment.size)
    TCA_FAIL(TCA_ERROR_INVALID_RANK, "rank {} is outside a job of {} rank(s) ({})",
             environment.rank, environment.size, environment.source);
  std::string ifname;
  bool ifname_set = false;
  TCA_CHECK(setting_text("TCA_SOCKET_IFNAME", &ifname, &ifname_set));
  if (ifname_set) TCA_CHECK(interface_address(ifname, &environment.local_host));
  choose_key(&environment);
  *out = std::move(environment);
  return TCA_SUCCESS;
}

}  // namespace tca
