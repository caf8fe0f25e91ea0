// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Threads inside a rank (OpenMP): [0, n) cut into `threads` contiguous parts of equal size,
// part t always run by thread t, so sums combined in part order are the same on every run.
#pragma once

#include <cstdint>
#include <exception>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace tca_cg {

inline int64_t part_begin(int64_t n, int parts, int part) { return n * part / parts; }

// Calls fn(begin, end, part) for every part; parts run in parallel where OpenMP is built in.
// An exception thrown by a part is thrown again once every part has ended (the first part's
// that threw).
template <class Fn>
void parallel_ranges(int64_t n, int threads, Fn&& fn) {
  const int parts = threads < 1 ? 1 : threads;
  if (parts == 1) {
    fn(int64_t{0}, n, 0);
    return;
  }
  std::vector<std::exception_ptr> errors(parts);
#ifdef _OPENMP
#pragma omp parallel for num_threads(parts) schedule(static, 1)
#endif
  for (int part = 0; part < parts; ++part) {
    try {
      fn(part_begin(n, parts, part), part_begin(n, parts, part + 1), part);
    } catch (...) {
      errors[part] = std::current_exception();
    }
  }
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

// The sum over [0, n) of term(i), each part summed in index order and the parts in part order.
template <class Term>
double parallel_sum(int64_t n, int threads, Term&& term) {
  const int parts = threads < 1 ? 1 : threads;
  std::vector<double> partial(parts, 0.0);
  parallel_ranges(n, parts, [&](int64_t begin, int64_t end, int part) {
    double sum = 0.0;
    for (int64_t i = begin; i < end; ++i) sum += term(i);
    partial[part] = sum;
  });
  double sum = 0.0;
  for (double value : partial) sum += value;
  return sum;
}

// The number of threads OpenMP would use by default (1 without OpenMP).
inline int default_thread_count() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace tca_cg
