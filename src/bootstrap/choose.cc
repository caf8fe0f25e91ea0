// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// TCA_BOOTSTRAP: which bootstrap starts the job. auto takes MPI where the program initialized
// MPI or an MPI launcher started it, else PMIx under a PMIx server, else tcp where its variables
// are set, else a job of one rank; the reason goes with the bootstrap.
#include <string>

#include "base/error.h"
#include "base/log.h"
#include "base/settings.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/launch_env.h"
#include "bootstrap/tcp_bootstrap.h"

namespace tca {
namespace {

tcaResult make_tcp(int timeout_ms, std::unique_ptr<Bootstrap>* out, std::string* why) {
  TcpEnvironment environment;
  TCA_CHECK(read_tcp_environment(&environment));
  TCA_CHECK(TcpBootstrap::create(environment, timeout_ms, out));
  *why += fmt::format(" ({}; root {}; key from {})", environment.source, environment.root.text(),
                      environment.key_source);
  return TCA_SUCCESS;
}

tcaResult make_named(const std::string& name, int timeout_ms, std::unique_ptr<Bootstrap>* out,
                     std::string* why) {
  if (name == "single") return make_single_bootstrap(out);
  if (name == "tcp") return make_tcp(timeout_ms, out, why);
#ifdef TCA_HAVE_MPI
  if (name == "mpi") return make_mpi_bootstrap(out);
#endif
#ifdef TCA_HAVE_PMIX
  if (name == "pmix") return make_pmix_bootstrap(timeout_ms, out);
#endif
  TCA_FAIL(TCA_ERROR_UNSUPPORTED, "TCA_BOOTSTRAP={}: this libtca was built without {}", name,
           name == "mpi" ? "MPI (TCA_MPI=OFF or MPI not found)"
                         : "PMIx (libpmix-dev not found at build time)");
}

// What auto takes, and why.
std::string automatic_choice(std::string* why) {
#ifdef TCA_HAVE_MPI
  if (mpi_in_use()) {
    *why = "auto: the program initialized MPI";
    return "mpi";
  }
  const std::string launcher = mpi_launcher();
  if (!launcher.empty()) {
    *why = "auto: started by " + launcher;
    return "mpi";
  }
#endif
#ifdef TCA_HAVE_PMIX
  if (pmix_server_present()) {
    *why = "auto: a PMIx server started this process (PMIX_NAMESPACE, PMIX_RANK)";
    return "pmix";
  }
#endif
  if (tcp_environment_present()) {
    *why = "auto: the tcp bootstrap's variables are set";
    return "tcp";
  }
  *why = "auto: no launcher's variables are set, so this is a job of one rank";
  return "single";
}

}  // namespace

tcaResult make_bootstrap(int timeout_ms, std::unique_ptr<Bootstrap>* out) {
  std::string name;
  bool set = false;
  TCA_CHECK(setting_choice("TCA_BOOTSTRAP", &name, &set));
  std::string why = "TCA_BOOTSTRAP=" + name;
  if (name == "auto") name = automatic_choice(&why);
  std::unique_ptr<Bootstrap> made;
  TCA_CHECK(make_named(name, timeout_ms, &made, &why));
  made->set_reason(why);
  TCA_INFO("bootstrap {}: {}", made->name(), why);
  *out = std::move(made);
  return TCA_SUCCESS;
}

}  // namespace tca
