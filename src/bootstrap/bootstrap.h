// How ranks find each other at start-up: a few collective byte exchanges. MPI is the first
// implementation; the interface is small so another launcher can replace it.
#pragma once

#include <cstddef>
#include <memory>

#include "tca/tca.h"

namespace tca {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // all[r*bytes .. (r+1)*bytes) receives rank r's `mine`.
  virtual tcaResult allgather(const void* mine, void* all, size_t bytes) = 0;
  virtual tcaResult broadcast(void* data, size_t bytes, int root) = 0;
  virtual tcaResult barrier() = 0;
};

// Initializes MPI if the program has not, and finalizes it on destruction in that case.
tcaResult make_mpi_bootstrap(std::unique_ptr<Bootstrap>* out);

}  // namespace tca
