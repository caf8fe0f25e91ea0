// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Every implementation of tca-coll, in the table's order, and how each is opened; the only
// file that knows which implementations this program was built with.
#include "coll.h"
#include "tca_harness/check.h"

namespace tca_coll_bench {

std::vector<Impl> all_impls(tcaMemKind memory) {
  const bool gpu = memory == TCA_MEM_GPU;
  std::vector<Impl> impls;
  auto add_tca = [&](tcaCollAlgorithm algorithm) {
    const std::string name = std::string("tca.") + tcaCollAlgorithmName(algorithm);
    impls.push_back({name, Source::kTca, Form::kHost, algorithm});
    if (!gpu) return;
    impls.push_back({name + "_stream", Source::kTca, Form::kStream, algorithm});
    impls.push_back({name + "_graph", Source::kTca, Form::kGraph, algorithm});
  };
  for (int a = TCA_COLL_RING; a < TCA_COLL_ALGORITHMS; ++a)
    add_tca(static_cast<tcaCollAlgorithm>(a));
  add_tca(TCA_COLL_AUTO);
  if (gpu) {
    impls.push_back(
        {"tca.auto_resident", Source::kTca, Form::kHost, TCA_COLL_AUTO, kBenchResidentIdleUs});
    impls.push_back({"ref.nccl", Source::kNccl, Form::kStream, TCA_COLL_AUTO});
    impls.push_back({"ref.nccl_graph", Source::kNccl, Form::kGraph, TCA_COLL_AUTO});
    impls.push_back({"ref.nccl_sync", Source::kNccl, Form::kSynced, TCA_COLL_AUTO});
  }
  impls.push_back({"ref.mpi", Source::kMpi, Form::kHost, TCA_COLL_AUTO});
  return impls;
}

std::string skip_reason(const Impl& impl, const Context& context) {
  if (impl.source == Source::kTca && impl.algorithm == TCA_COLL_NEIGHBOR_EXCHANGE &&
      g_ranks % 2 != 0)
    return "on an odd rank count it runs as tca.ring";
  if (impl.source == Source::kNccl) return context.nccl_missing;
  if (impl.source == Source::kMpi) return context.mpi_missing;
  return "";
}

std::unique_ptr<Implementation> open_impl(const Impl& impl, const Shape& shape,
                                          const Buffers& buffers, const Context& context) {
  if (impl.source == Source::kMpi) return open_mpi_collective(shape, buffers, context);
  if (impl.form == Form::kHost)
    return open_tca_host(shape, buffers, impl.algorithm, impl.resident_idle_us);
#ifdef TCA_HARNESS_NCCL
  if (impl.source == Source::kNccl) return open_nccl(shape, buffers, impl.form);
#endif
#ifdef TCA_HARNESS_CUDA
  if (impl.source == Source::kTca)
    return open_tca_stream(shape, buffers, impl.algorithm, impl.form);
#endif
  tca_harness::die(impl.name + " is not built in");  // unreachable: validate() and open_gpu()
}

#ifdef TCA_HARNESS_CUDA
bool gpu_built() { return true; }
#else
bool gpu_built() { return false; }
bool open_gpu(const tca_harness::Table& /*table*/, bool /*wants_nccl*/, Context* /*context*/) {
  tca_harness::die("--memory gpu needs a CUDA build");  // unreachable: validate() refuses it
}
void describe_program(tcaColl /*coll*/, Row* /*row*/) {}
#endif
#ifndef TCA_HARNESS_NCCL
void open_nccl_library(const tca_harness::Table& /*table*/, Context* context) {
  context->nccl_missing = "built without nccl.h";
}
void close_nccl_library() {}
#endif

}  // namespace tca_coll_bench
