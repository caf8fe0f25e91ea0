// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The CG iteration over an engine (numerics) and a comm (exchanges): NPB CG's power iteration
// with 25 CG steps per outer iteration, and a plain CG solve of A x = b.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "comm.h"
#include "engine.h"
#include "layout.h"
#include "npb_class.h"
#include "phases.h"

namespace tca_cg {

// One CG step and its pieces, each marked on `clock` with its phase.
class CgStepper {
 public:
  CgStepper(Engine& engine, Comm& comm, const Layout& layout, PhaseClock& clock);

  void set_clock(PhaseClock& clock) { clock_ = &clock; }
  // q = A p: exchange of p, SpMV, and the 2d reduction; `dot` also forms kDotLocal = p.q.
  void multiply(bool dot);
  // z = 0, r = x, p = r, rho = r.r (reduced). Pipelined CG (the engine's variant): p = w = A x
  // (with `product_known` the engine's kept A x, engine.h, else an SpMV of x) and the pair w.r,
  // r.r reduced.
  void begin(bool product_known = false);
  // One step: q = A p, alpha, z and r, rho, beta, p. Single-reduction CG (the engine's
  // variant): w = A r, the pair w.r and r.r summed at once, then d, s, z and r; kRho is then
  // r.r of the step's start (the residual one step behind). Pipelined CG: q = A w, the update
  // of every vector with the summed pair, then the new pair summed (kRho is the new r's r.r).
  void step();
  // Pipelined CG: the pair of each update posted and collected by the next one, so that its sum
  // travels during the SpMV (engine.h, set_overlap), where the engine and comm allow it; steps
  // must then be followed by end_steps before anything else. Returns whether it is on.
  bool overlap_pair();
  // After the last of a run of steps: with the pair posted, collects the last one (kDot, kRho).
  void end_steps();
  // Pipelined CG: A times ones, kept by the engine (engine.h, keep_ones_product).
  void keep_ones_product();
  // r.r reduced into kRho.
  void rho();
  // ||x - A z||^2 reduced into kSum (destroys p).
  void residual();
  // x.z and z.z reduced (kNormXZ, kNormZZ), then x = z / ||z||.
  void normalize();
  // sum over real elements of (z - exact)^2 reduced into kSum.
  void error(double exact);

 private:
  void allreduce(Scalar local, int count);

  Engine& engine_;
  Comm& comm_;
  Layout layout_;
  PhaseClock* clock_;
  bool fused_;
  bool overlap_ = false;  // overlap_pair
};

struct RunOptions {
  bool graph = true;  // capture in CUDA graphs where the engine and comm allow it
  // GPU: a second run measured with events between the phases (replaying a graph of the
  // same work with the events inside it where `graph` holds, else launched from the host)
  bool breakdown = true;
  int iterations = 0;  // NPB: outer iterations to run (0: the class's count)
  // NPB on the GPU with graphs: a third run whose kernels record their own times
  bool kernel_times = false;
  std::function<void(int done, int total)> progress;  // after each outer iteration / step
};

struct Breakdown {
  PhaseSeconds seconds{};  // this rank's time per phase
  PhaseCalls calls{};
  double total = 0;           // the run's time on this rank
  bool separate_run = false;  // measured in a run of its own (GPU), not the timed one
  bool graph = false;         // that run replayed a CUDA graph with the events inside it
};

struct NpbIteration {
  int iteration;
  double rnorm;
  double zeta;
};

struct NpbResult {
  double seconds = 0;  // slowest rank
  double zeta = 0;
  std::vector<NpbIteration> iterations;
  int iterations_run = 0;  // outer iterations timed (fewer than the class's: not verifiable)
  bool graph = false;      // the timed run replayed CUDA graphs
  Breakdown breakdown;
  std::vector<KernelTime> kernel_times;  // the last outer iteration of that run (this rank)
};

// The NPB CG benchmark on a loaded engine: one untimed outer iteration, then cls.niter timed
// (options.iterations where that is fewer).
NpbResult run_npb(const NpbClass& cls, Engine& engine, Comm& comm, const Layout& layout,
                  const RunOptions& options);

// Whether the run timed all of the class's iterations (only such a run can be verified).
inline bool npb_complete(const NpbClass& cls, const NpbResult& result) {
  return result.iterations_run >= cls.niter;
}

struct SolveOptions {
  int max_iterations = 1000;
  std::optional<double> tolerance;         // stop once ||r|| / ||b|| <= tolerance
  std::optional<std::vector<double>> rhs;  // this rank's piece of b; else b = A * ones
};

struct SolveResult {
  int iterations = 0;
  double seconds = 0;                  // slowest rank, the CG steps only
  double rhs_norm = 0;                 // ||b||
  double residual_norm = 0;            // ||b - A x||, recomputed at the end
  double recursive_residual_norm = 0;  // sqrt(rho) of the last step
  std::optional<double> error_norm;    // ||x - ones|| where b = A * ones
  bool converged = false;              // tolerance reached (false without a tolerance)
  bool graph = false;
  Breakdown breakdown;
};

SolveResult run_solve(Engine& engine, Comm& comm, const Layout& layout, const SolveOptions& solve,
                      const RunOptions& options);

}  // namespace tca_cg
