// The kernel of GPU collectives: every block runs its channel of the program.
#include "tca/tca_coll_device.cuh"

namespace tca::coll {
namespace {

constexpr int kMaxThreads = 1024;

// The program travels as a kernel parameter: its fields are then read from the constant bank
// instead of one more dependent load from global memory at every launch.
//
// Launched with programmatic stream serialization: the next kernel of the stream may be
// scheduled as soon as every block of this one has started (launch_dependents), and this one
// may be scheduled before the previous kernel ends; griddepcontrol.wait holds it until the
// previous kernel has completed and its memory is visible. Back-to-back iterations (CUDA graph
// replays) then overlap a launch, the iteration's number and the loading of the (unchanging)
// program with the previous iteration instead of paying them after.
__global__ void __launch_bounds__(kMaxThreads)
    run_program(const tca_coll_program::Program program) {
  __shared__ tca_coll_device_detail::ProgramCache cache;
  tca_coll_device_detail::begin(program, cache);  // numbered before a successor can be
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  tca_coll_device_detail::prefetch(program, cache);
  asm volatile("griddepcontrol.wait;" ::: "memory");
  tca_coll_device_detail::run(program, cache);  // a failure is recorded in the program
}

}  // namespace

cudaError_t launch_program(const tca_coll_program::Program& program, int threads,
                           cudaStream_t stream) {
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(program.channels);
  config.blockDim = dim3(threads);
  config.stream = stream;
  config.attrs = &overlap;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, run_program, program);
}

}  // namespace tca::coll
