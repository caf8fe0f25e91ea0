// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "solver.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "control.h"
#include "tca/tca_trace.h"
#include "tca_harness/timer.h"

namespace tca_cg {

CgStepper::CgStepper(Engine& engine, Comm& comm, const Layout& layout, PhaseClock& clock)
    : engine_(engine), comm_(comm), layout_(layout), clock_(&clock), fused_(engine.fuses_dots()) {}

void CgStepper::allreduce(Scalar local, int count) {
  clock_->mark(Phase::kAllreduce);
  tcaTracePhaseBegin("DOT");  // the PEACH3 paper's names (Table 3)
  comm_.allreduce(local, count);
  tcaTracePhaseEnd("DOT");
}

void CgStepper::multiply(bool dot) {
  // Where w is q (1d, or a single block) the SpMV's output is the own piece already.
  const bool w_is_q = layout_.partition == Partition::kOneD || layout_.grid == 1;
  const bool fuse = dot && fused_ && w_is_q;
  clock_->mark(Phase::kExchange);
  tcaTracePhaseBegin("EXCH");
  comm_.gather_p();
  tcaTracePhaseEnd("EXCH");
  clock_->mark(Phase::kSpmv);
  engine_.spmv(fuse);
  bool dot_formed = fuse;
  if (!w_is_q) {
    clock_->mark(Phase::kReduce);
    tcaTracePhaseBegin("SPMV");
    dot_formed = comm_.reduce_w(dot && fused_);  // the sum of w's pieces may form p.q
    tcaTracePhaseEnd("SPMV");
  }
  if (dot && !dot_formed) {
    clock_->mark(Phase::kDot);
    engine_.dot_pq();
  }
}

void CgStepper::begin(bool product_known) {
  const bool pipelined = engine_.variant() == CgVariant::kPipelined;
  if (!pipelined || !product_known) {
    clock_->mark(Phase::kAxpy);
    engine_.cg_begin(fused_);
    if (!fused_) {
      clock_->mark(Phase::kDot);
      engine_.dot_rr();
    }
    allreduce(kRhoLocal, 1);
  }
  if (!pipelined) return;
  // Pipelined: w = A x, formed from p = x where it is not known. The sum above orders that
  // exchange after every rank's last SpMV, as a step's sum orders the next step's exchange.
  if (!product_known) multiply(false);
  clock_->mark(Phase::kAxpy);
  engine_.pipelined_begin(!product_known, fused_);
  if (!fused_) {
    clock_->mark(Phase::kDot);
    engine_.dots_pipelined();
  }
  allreduce(kDotLocal, 2);
}

void CgStepper::keep_ones_product() {
  clock_->mark(Phase::kAxpy);
  engine_.fill_p(1.0);
  multiply(false);
  engine_.keep_ones_product();
}

bool CgStepper::overlap_pair() {
  overlap_ = engine_.set_overlap(true);
  return overlap_;
}

void CgStepper::end_steps() {
  if (!overlap_) return;
  clock_->mark(Phase::kAllreduce);
  engine_.settle_pipelined();
}

void CgStepper::step() {
  if (overlap_) {
    // q = A w as slab partials, which the update adds; the pair it uses was posted by the
    // update before, the one it forms is collected by the next.
    clock_->mark(Phase::kExchange);
    tcaTracePhaseBegin("EXCH");
    comm_.gather_p();  // the first step's w (pushed by the update after that)
    tcaTracePhaseEnd("EXCH");
    clock_->mark(Phase::kSpmv);
    engine_.spmv_partials();
    clock_->mark(Phase::kAxpy);
    engine_.update_pipelined_overlapped();
    return;
  }
  if (engine_.variant() == CgVariant::kPipelined) {
    multiply(false);  // q = A w
    clock_->mark(Phase::kAxpy);
    engine_.update_pipelined(fused_);
    if (!fused_) {
      clock_->mark(Phase::kDot);
      engine_.dots_pipelined();
    }
    allreduce(kDotLocal, 2);
    return;
  }
  if (engine_.variant() == CgVariant::kSingleReduction) {
    multiply(true);  // w = A r with the pair w.r, r.r
    allreduce(kDotLocal, 2);
    clock_->mark(Phase::kAxpy);
    engine_.update_single();
    return;
  }
  multiply(true);
  allreduce(kDotLocal, 1);
  clock_->mark(Phase::kAxpy);
  engine_.update_zr(fused_);
  if (!fused_) {
    clock_->mark(Phase::kDot);
    engine_.dot_rr();
  }
  allreduce(kRhoLocal, 1);
  clock_->mark(Phase::kAxpy);
  engine_.update_p();
}

void CgStepper::rho() {
  clock_->mark(Phase::kDot);
  engine_.dot_rr();
  allreduce(kRhoLocal, 1);
}

void CgStepper::residual() {
  clock_->mark(Phase::kAxpy);
  engine_.copy_z_to_p();
  multiply(false);
  clock_->mark(Phase::kDot);
  engine_.residual_sum();
  allreduce(kSumLocal, 1);
}

void CgStepper::normalize() {
  clock_->mark(Phase::kDot);
  engine_.norms();
  allreduce(kNormXZLocal, 2);
  clock_->mark(Phase::kAxpy);
  engine_.scale_x();
}

void CgStepper::error(double exact) {
  clock_->mark(Phase::kDot);
  engine_.error_sum(exact);
  allreduce(kSumLocal, 1);
}

namespace {

double slowest(double seconds) { return tca_apps::allreduce(seconds, tca_apps::Op::kMax); }

// The timed run's clock: the CPU's marks cost nothing next to its work; on the GPU the timed
// run carries no events (its breakdown is measured in a second run).
std::unique_ptr<PhaseClock> timed_clock(Engine& engine) {
  if (engine.device() == Device::kGpu) return std::make_unique<NullPhaseClock>();
  return engine.make_clock();
}

// Runs `body` (which marks phases on the stepper's clock) `units` times with a clock of its own
// and returns what it measured. With `graph`, as the timed run does: the body is captured once
// with its marks as event nodes and the graph replayed; else launched from the host each time.
template <class Body>
Breakdown measure_breakdown(Engine& engine, CgStepper& stepper, int units, bool graph,
                            Body&& body) {
  std::unique_ptr<PhaseClock> clock = engine.make_clock();
  stepper.set_clock(*clock);
  const int captured = graph ? engine.capture_graph([&] {
    body();
    clock->mark(Phase::kNone);
  })
                             : -1;
  engine.synchronize();
  tca_apps::barrier();
  const tca_harness::Timer timer;
  if (captured < 0) clock->mark(Phase::kNone);
  for (int unit = 0; unit < units; ++unit) {
    if (captured >= 0) {
      engine.launch_graph(captured);
    } else {
      body();
      clock->mark(Phase::kNone);
    }
    clock->collect();
  }
  engine.synchronize();
  Breakdown breakdown;
  breakdown.total = timer.seconds();
  breakdown.seconds = clock->seconds();
  breakdown.calls = clock->calls();
  breakdown.separate_run = true;
  breakdown.graph = captured >= 0;
  return breakdown;
}

}  // namespace

NpbResult run_npb(const NpbClass& cls, Engine& engine, Comm& comm, const Layout& layout,
                  const RunOptions& options) {
  std::unique_ptr<PhaseClock> clock = timed_clock(engine);
  CgStepper stepper(engine, comm, layout, *clock);
  // Pipelined CG starts each outer iteration from A x: A 1 kept once here (fill_x scales it),
  // and the residual's A z (scale_x) after that: no SpMV more than the other variants.
  const bool pipelined = engine.variant() == CgVariant::kPipelined;
  if (pipelined) {
    stepper.keep_ones_product();
    engine.fill_x(1.0);  // A x known before the outer iteration is captured
  }
  if (pipelined && stepper.overlap_pair()) {
    // The start posts its pair without waiting for the peers, so the first step's push of w
    // into each peer's p_full could overwrite the piece that peer's SpMV of A 1 above has yet
    // to read (seen where ranks share a GPU and one runs ahead): every rank's SpMV ends
    // before any rank goes on. Later outer iterations start after the normalization's
    // allreduce, which every rank joins only after its residual's SpMV.
    engine.synchronize();
    tca_apps::barrier();
  }
  auto outer = [&] {
    stepper.begin(pipelined);
    for (int step = 0; step < kNpbCgSteps; ++step) stepper.step();
    stepper.end_steps();
    stepper.residual();
    stepper.normalize();
  };
  NpbResult result;
  const bool gpu = engine.device() == Device::kGpu;
  const bool use_graph = options.graph && gpu && comm.stream_ordered();
  const int graph = use_graph ? engine.capture_graph(outer) : -1;
  result.graph = graph >= 0;
  auto run_outer = [&] {
    if (graph >= 0) {
      engine.launch_graph(graph);
    } else {
      outer();
    }
  };
  auto record = [&](int iteration) {
    const double rnorm = std::sqrt(engine.scalar(kSum));
    const double zeta = cls.shift + 1.0 / engine.scalar(kNormXZ);
    return NpbIteration{iteration, rnorm, zeta};
  };

  // One untimed iteration (NPB: it touches all code and data), then x = 1 again.
  engine.fill_x(1.0);
  run_outer();
  engine.synchronize();
  engine.fill_x(1.0);
  engine.synchronize();
  tca_apps::barrier();

  const int iterations =
      options.iterations > 0 ? std::min(options.iterations, cls.niter) : cls.niter;
  result.iterations_run = iterations;
  clock->mark(Phase::kNone);
  clock->reset();
  const tca_harness::Timer timer;
  for (int it = 1; it <= iterations; ++it) {
    run_outer();
    result.iterations.push_back(record(it));
    if (options.progress) options.progress(it, iterations);
  }
  clock->mark(Phase::kNone);
  engine.synchronize();
  const double mine = timer.seconds();
  result.seconds = slowest(mine);
  result.zeta = result.iterations.empty() ? 0.0 : result.iterations.back().zeta;

  if (gpu && options.breakdown) {
    engine.fill_x(1.0);
    result.breakdown = measure_breakdown(engine, stepper, iterations, use_graph, outer);
  } else {
    result.breakdown.seconds = clock->seconds();
    result.breakdown.calls = clock->calls();
    result.breakdown.total = mine;
  }
  if (use_graph && options.kernel_times) {
    NullPhaseClock none;
    stepper.set_clock(none);
    engine.fill_x(1.0);
    result.kernel_times = engine.kernel_times(outer, iterations);
  }
  return result;
}

SolveResult run_solve(Engine& engine, Comm& comm, const Layout& layout, const SolveOptions& solve,
                      const RunOptions& options) {
  std::unique_ptr<PhaseClock> clock = timed_clock(engine);
  NullPhaseClock setup_clock;
  CgStepper stepper(engine, comm, layout, setup_clock);
  SolveResult result;

  if (solve.rhs) {
    engine.set_x(*solve.rhs);
  } else {
    engine.fill_p(1.0);
    stepper.multiply(false);
    engine.copy_q_to_x();
  }
  stepper.begin();
  result.rhs_norm = std::sqrt(engine.scalar(kRho));

  const bool gpu = engine.device() == Device::kGpu;
  stepper.set_clock(*clock);
  const bool use_graph = options.graph && gpu && comm.stream_ordered();
  const int graph = use_graph ? engine.capture_graph([&] { stepper.step(); }) : -1;
  result.graph = graph >= 0;
  auto run_step = [&] {
    if (graph >= 0) {
      engine.launch_graph(graph);
    } else {
      stepper.step();
    }
  };
  auto reached = [&] {
    return solve.tolerance && std::sqrt(engine.scalar(kRho)) <= *solve.tolerance * result.rhs_norm;
  };

  engine.synchronize();
  tca_apps::barrier();
  clock->mark(Phase::kNone);
  clock->reset();
  const tca_harness::Timer timer;
  if (result.rhs_norm == 0.0) {
    result.converged = true;  // b = 0: x = 0 solves it
  } else {
    while (result.iterations < solve.max_iterations) {
      run_step();
      ++result.iterations;
      if (options.progress) options.progress(result.iterations, solve.max_iterations);
      if (reached()) {
        result.converged = true;
        break;
      }
    }
  }
  clock->mark(Phase::kNone);
  engine.synchronize();
  const double mine = timer.seconds();
  result.seconds = slowest(mine);
  result.breakdown.seconds = clock->seconds();
  result.breakdown.calls = clock->calls();
  result.breakdown.total = mine;

  stepper.set_clock(setup_clock);
  // Single-reduction CG's kRho is the r.r of the last step's start: form the last r's.
  if (engine.variant() == CgVariant::kSingleReduction) stepper.rho();
  result.recursive_residual_norm = std::sqrt(engine.scalar(kRho));
  if (!result.converged && reached()) result.converged = true;  // the last step's r
  stepper.residual();
  result.residual_norm = std::sqrt(engine.scalar(kSum));
  if (!solve.rhs) {
    stepper.error(1.0);
    result.error_norm = std::sqrt(engine.scalar(kSum));
  }

  if (gpu && options.breakdown && result.iterations > 0) {
    stepper.set_clock(setup_clock);
    stepper.begin();
    result.breakdown =
        measure_breakdown(engine, stepper, result.iterations, use_graph, [&] { stepper.step(); });
  }
  return result;
}

}  // namespace tca_cg
