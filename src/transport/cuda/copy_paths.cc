// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "transport/cuda/copy_paths.h"

#include <cudaTypedefs.h>

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "base/cuda_util.h"
#include "base/error.h"
#include "transport/cuda/resident.h"

namespace tca {
namespace {

// The bytes a piece touches at one end, as one conservative interval.
struct Span {
  uintptr_t begin;
  uintptr_t end;
};

Span span_of(const void* base, uint64_t pitch, uint64_t width, uint64_t count) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(base);
  return {begin, begin + (count - 1) * pitch + width};
}

bool overlap(const Span& a, const Span& b) { return a.begin < b.end && b.begin < a.end; }

// Pieces run concurrently unless a later one writes what an earlier one reads or writes, or
// reads what it writes: then chain order is kept.
bool conflicts(const DevicePiece& earlier, const DevicePiece& later) {
  const Span earlier_dst = span_of(earlier.dst, earlier.dst_pitch, earlier.width, earlier.count);
  const Span earlier_src = span_of(earlier.src, earlier.src_pitch, earlier.width, earlier.count);
  const Span later_dst = span_of(later.dst, later.dst_pitch, later.width, later.count);
  const Span later_src = span_of(later.src, later.src_pitch, later.width, later.count);
  return overlap(earlier_dst, later_dst) || overlap(earlier_dst, later_src) ||
         overlap(earlier_src, later_dst);
}

// ------------------------------------------------------------------ copy engines

// Driver entry points the runtime lacks: graph nodes of stream memory operations.
struct MemOpApi {
  PFN_cuCtxGetCurrent_v4000 get_context = nullptr;
  PFN_cuGraphAddBatchMemOpNode_v11070 add_node = nullptr;
  PFN_cuGraphExecBatchMemOpNodeSetParams_v11070 set_params = nullptr;
  PFN_cuDeviceGetAttribute_v2000 get_attribute = nullptr;
};

const MemOpApi& mem_op_api() {
  static const MemOpApi api = [] {
    MemOpApi loaded;
    const auto load = [](const char* name, int version, auto* function) {
      cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
      if (cudaGetDriverEntryPointByVersion(name, reinterpret_cast<void**>(function), version,
                                           cudaEnableDefault, &found) != cudaSuccess ||
          found != cudaDriverEntryPointSuccess) {
        cudaGetLastError();
        *function = nullptr;
      }
    };
    load("cuCtxGetCurrent", 4000, &loaded.get_context);
    load("cuGraphAddBatchMemOpNode", 11070, &loaded.add_node);
    load("cuGraphExecBatchMemOpNodeSetParams", 11070, &loaded.set_params);
    load("cuDeviceGetAttribute", 2000, &loaded.get_attribute);
    return loaded;
  }();
  return api;
}

// How a graph raises a piece's notifications: a kernel that counts them on the GPU, or
// write-value operations of host-counted values (set before every launch).
enum class NotifyNodes { kCountingKernel, kWriteValues };

// One write-value node and its operations (their values change at every kick).
struct WriteValueNode {
  CUgraphNode node = nullptr;
  std::vector<CUstreamBatchMemOpParams> operations;
};

class CopyEngineChain final : public GpuChain {
 public:
  tcaResult build(const std::vector<DevicePiece>& pieces, const DeviceLimits& limits) {
    TCA_CHECK(build_graph(pieces, NotifyNodes::kCountingKernel, &stream_graph_, &stream_exec_));
    if (!limits.write_value_ops) return TCA_SUCCESS;
    if (mem_op_api().get_context(&context_) != CUDA_SUCCESS)
      TCA_FAIL(TCA_ERROR_TRANSPORT, "cuCtxGetCurrent failed");
    return build_graph(pieces, NotifyNodes::kWriteValues, &kick_graph_, &kick_exec_);
  }

  bool host_counted() const override { return static_cast<bool>(kick_exec_); }

  tcaResult kick(cudaStream_t stream, const uint64_t* values) override {
    const MemOpApi& api = mem_op_api();
    for (WriteValueNode& write : write_nodes_) {
      for (CUstreamBatchMemOpParams& operation : write.operations)
        operation.writeValue.value64 = *values++;
      CUDA_BATCH_MEM_OP_NODE_PARAMS params = {};
      params.ctx = context_;
      params.count = static_cast<unsigned>(write.operations.size());
      params.paramArray = write.operations.data();
      const CUresult result =
          api.set_params(reinterpret_cast<CUgraphExec>(kick_exec_.get()), write.node, &params);
      if (result != CUDA_SUCCESS)
        TCA_FAIL(TCA_ERROR_TRANSPORT, "cuGraphExecBatchMemOpNodeSetParams failed ({})",
                 static_cast<int>(result));
    }
    TCA_CUDA_CHECK(cudaGraphLaunch(kick_exec_.get(), stream));
    return TCA_SUCCESS;
  }

  tcaResult enqueue(cudaStream_t stream) override {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    TCA_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
    if (status == cudaStreamCaptureStatusNone) {
      TCA_CUDA_CHECK(cudaGraphLaunch(stream_exec_.get(), stream));
      return TCA_SUCCESS;
    }
    // A graph cannot be launched into a capture: the chain joins the captured graph as a child.
    cudaGraph_t captured = nullptr;
    const cudaGraphNode_t* dependencies = nullptr;
    size_t dependency_count = 0;
    TCA_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &status, nullptr, &captured, &dependencies,
                                            nullptr, &dependency_count));
    cudaGraphNode_t child = nullptr;
    TCA_CUDA_CHECK(cudaGraphAddChildGraphNode(&child, captured, dependencies, dependency_count,
                                              stream_graph_.get()));
    TCA_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(stream, &child, nullptr, 1,
                                                       cudaStreamSetCaptureDependencies));
    return TCA_SUCCESS;
  }

 private:
  // The copies run concurrently except where chain order matters (conflicts); each piece's
  // notifications follow every copy up to it and the previous notifications.
  tcaResult build_graph(const std::vector<DevicePiece>& pieces, NotifyNodes kind,
                        CudaGraph* graph_out, CudaGraphExec* exec_out) {
    cudaGraph_t created = nullptr;
    TCA_CUDA_CHECK(cudaGraphCreate(&created, 0));
    *graph_out = CudaGraph(created);
    const cudaGraph_t graph = graph_out->get();
    std::vector<cudaGraphNode_t> copies(pieces.size(), nullptr);
    cudaGraphNode_t last_notify = nullptr;
    size_t first_uncovered = 0;  // pieces from here on are not yet before any notify node
    for (size_t i = 0; i < pieces.size(); ++i) {
      const DevicePiece& piece = pieces[i];
      std::vector<cudaGraphNode_t> dependencies;
      for (size_t j = 0; j < i; ++j)
        if (copies[j] != nullptr && conflicts(pieces[j], piece)) dependencies.push_back(copies[j]);
      if (piece.width > 0) TCA_CHECK(add_copy(graph, piece, dependencies, &copies[i]));
      if (piece.notifies.empty()) continue;
      std::vector<cudaGraphNode_t> before;
      if (last_notify != nullptr) before.push_back(last_notify);
      for (size_t j = first_uncovered; j <= i; ++j)
        if (copies[j] != nullptr) before.push_back(copies[j]);
      if (kind == NotifyNodes::kCountingKernel) {
        TCA_CHECK(add_counting_node(graph, piece.notifies, before, &last_notify));
      } else {
        TCA_CHECK(add_write_value_node(graph, piece.notifies, before, &last_notify));
      }
      first_uncovered = i + 1;
    }
    cudaGraphExec_t exec = nullptr;
    TCA_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    *exec_out = CudaGraphExec(exec);
    return TCA_SUCCESS;
  }

  tcaResult add_counting_node(cudaGraph_t graph, const std::vector<NotifyTarget>& notifies,
                              const std::vector<cudaGraphNode_t>& before, cudaGraphNode_t* node) {
    DeviceMemory targets;
    TCA_CHECK(make_device_copy(notifies.data(), notifies.size() * sizeof(NotifyTarget), &targets));
    TCA_CUDA_CHECK(add_notify_node(graph, before.data(), before.size(),
                                   static_cast<const NotifyTarget*>(targets.get()),
                                   static_cast<uint32_t>(notifies.size()), node));
    notify_tables_.push_back(std::move(targets));
    return TCA_SUCCESS;
  }

  // Write-value operations keep their default system-wide fence before the write: the cell
  // changes only after every earlier copy of the graph is visible.
  tcaResult add_write_value_node(cudaGraph_t graph, const std::vector<NotifyTarget>& notifies,
                                 const std::vector<cudaGraphNode_t>& before,
                                 cudaGraphNode_t* node) {
    const MemOpApi& api = mem_op_api();
    WriteValueNode write;
    for (const NotifyTarget& target : notifies) {
      CUstreamBatchMemOpParams operation = {};
      operation.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
      operation.writeValue.address = reinterpret_cast<CUdeviceptr>(target.cell);
      operation.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
      write.operations.push_back(operation);
    }
    CUDA_BATCH_MEM_OP_NODE_PARAMS params = {};
    params.ctx = context_;
    params.count = static_cast<unsigned>(write.operations.size());
    params.paramArray = write.operations.data();
    const CUresult result =
        api.add_node(&write.node, reinterpret_cast<CUgraph>(graph),
                     reinterpret_cast<const CUgraphNode*>(before.data()), before.size(), &params);
    if (result != CUDA_SUCCESS)
      TCA_FAIL(TCA_ERROR_TRANSPORT, "cuGraphAddBatchMemOpNode failed ({})",
               static_cast<int>(result));
    *node = reinterpret_cast<cudaGraphNode_t>(write.node);
    write_nodes_.push_back(std::move(write));
    return TCA_SUCCESS;
  }

  tcaResult add_copy(cudaGraph_t graph, const DevicePiece& piece,
                     const std::vector<cudaGraphNode_t>& dependencies, cudaGraphNode_t* node) {
    if (piece.count == 1) {
      TCA_CUDA_CHECK(cudaGraphAddMemcpyNode1D(node, graph, dependencies.data(), dependencies.size(),
                                              piece.dst, piece.src, piece.width,
                                              cudaMemcpyDefault));
      return TCA_SUCCESS;
    }
    cudaMemcpy3DParms copy = {};
    copy.srcPtr = cudaPitchedPtr{const_cast<unsigned char*>(piece.src), piece.src_pitch,
                                 piece.width, piece.count};
    copy.dstPtr = cudaPitchedPtr{piece.dst, piece.dst_pitch, piece.width, piece.count};
    copy.extent = cudaExtent{piece.width, piece.count, 1};
    copy.kind = cudaMemcpyDefault;
    TCA_CUDA_CHECK(
        cudaGraphAddMemcpyNode(node, graph, dependencies.data(), dependencies.size(), &copy));
    return TCA_SUCCESS;
  }

  CudaGraph stream_graph_;  // counting kernel nodes: stream-ordered and captured runs
  CudaGraphExec stream_exec_;
  CudaGraph kick_graph_;  // write-value nodes: host kicks
  CudaGraphExec kick_exec_;
  CUcontext context_ = nullptr;              // the write-value nodes' context
  std::vector<DeviceMemory> notify_tables_;  // read by the counting nodes at every launch
  std::vector<WriteValueNode> write_nodes_;  // in chain order
};

// ------------------------------------------------------------------ SMs

// The widest unit (16, 8, 4, 2 or 1 bytes) dividing every value.
uint32_t widest_unit(std::initializer_list<uint64_t> values) {
  uint64_t mix = 0;
  for (uint64_t value : values) mix |= value;
  uint32_t unit = 16;
  while (unit > 1 && (mix & (unit - 1)) != 0) unit >>= 1;
  return unit;
}

// Appends the SM pieces of one transfer. A contiguous transfer is cut into a byte-wise head up
// to the common alignment of its ends, a body of wide units and a byte-wise tail, so that odd
// sizes and offsets still move 16 bytes per store. Narrow rows (1, 2, 4 or 8 bytes) with one
// end packed are cut likewise: rows up to where the packed end is 16-byte aligned, then units
// of 16 / width rows (16 bytes at the packed end per access), then the rows left.
void append_sm_pieces(const DevicePiece& piece, std::vector<SmPiece>* out, uint64_t* next_unit) {
  const auto append = [&](unsigned char* dst, const unsigned char* src, uint64_t width,
                          uint64_t count, uint32_t unit) {
    if (width == 0 || count == 0) return;
    SmPiece sm = {};
    sm.dst = dst;
    sm.src = src;
    sm.dst_pitch = piece.dst_pitch;
    sm.src_pitch = piece.src_pitch;
    sm.unit_bytes = unit;
    sm.units_per_row = width / unit;
    sm.units = sm.units_per_row * count;
    sm.first_unit = *next_unit;
    *next_unit += sm.units;
    out->push_back(sm);
  };
  const uintptr_t dst = reinterpret_cast<uintptr_t>(piece.dst);
  const uintptr_t src = reinterpret_cast<uintptr_t>(piece.src);
  if (piece.count > 1) {
    const uint64_t width = piece.width;
    const bool packed_dst = piece.dst_pitch == width;
    const uintptr_t packed = packed_dst ? dst : src;
    const uint64_t pitched_pitch = packed_dst ? piece.src_pitch : piece.dst_pitch;
    const uint64_t pitched = (packed_dst ? src : dst) | pitched_pitch;
    const bool narrow = width < 16 && (width & (width - 1)) == 0 &&
                        (packed_dst || piece.src_pitch == width) &&
                        ((packed | pitched) & (width - 1)) == 0;
    const uint64_t rows_per_unit = 16 / width;
    const uint64_t head =
        narrow ? std::min<uint64_t>(((16 - (packed & 15)) & 15) / width, piece.count) : 0;
    const uint64_t body = narrow ? (piece.count - head) / rows_per_unit * rows_per_unit : 0;
    if (body == 0) {
      append(piece.dst, piece.src, width, piece.count,
             widest_unit({dst, src, width, piece.dst_pitch, piece.src_pitch}));
      return;
    }
    const auto rows_at = [&](uint64_t first, uint64_t count) {
      append(piece.dst + first * piece.dst_pitch, piece.src + first * piece.src_pitch, width, count,
             widest_unit({dst, src, width, piece.dst_pitch, piece.src_pitch}));
    };
    rows_at(0, head);
    SmPiece sm = {};
    sm.dst = piece.dst + head * piece.dst_pitch;
    sm.src = piece.src + head * piece.src_pitch;
    sm.dst_pitch = piece.dst_pitch;
    sm.src_pitch = piece.src_pitch;
    sm.unit_bytes = static_cast<uint32_t>(width);
    sm.narrow_rows = static_cast<uint32_t>(rows_per_unit);
    sm.packed_dst = packed_dst ? 1 : 0;
    sm.units_per_row = 1;
    sm.units = body / rows_per_unit;
    sm.first_unit = *next_unit;
    *next_unit += sm.units;
    out->push_back(sm);
    rows_at(head + body, piece.count - head - body);
    return;
  }
  const uint32_t unit = widest_unit({dst ^ src});
  const uint64_t head = std::min<uint64_t>((unit - (dst & (unit - 1))) & (unit - 1), piece.width);
  const uint64_t body = (piece.width - head) / unit * unit;
  append(piece.dst, piece.src, head, 1, 1);
  append(piece.dst + head, piece.src + head, body, 1, unit);
  append(piece.dst + head + body, piece.src + head + body, piece.width - head - body, 1, 1);
}

// Pieces one kernel launch moves in parallel; launches follow each other in the stream.
struct SmPhase {
  DeviceMemory pieces;
  DeviceMemory notifies;
  DeviceMemory blocks_done;
  SmCopyParams params = {};
  unsigned blocks = 1;
  unsigned threads = 32;
};

class SmChain final : public GpuChain {
 public:
  tcaResult build(const std::vector<DevicePiece>& pieces, const DeviceLimits& limits,
                  bool resident) {
    // A piece that conflicts with one of the current phase starts the next phase.
    size_t phase_begin = 0;
    for (size_t i = 0; i <= pieces.size(); ++i) {
      bool cut = i == pieces.size();
      for (size_t j = phase_begin; !cut && j < i; ++j) cut = conflicts(pieces[j], pieces[i]);
      if (!cut) continue;
      TCA_CHECK(add_phase(pieces, phase_begin, i, limits));
      phase_begin = i;
    }
    if (host_counted()) TCA_CHECK(build_kick_graph());
    return resident ? build_resident_phases(pieces) : TCA_SUCCESS;
  }

  bool host_counted() const override {
    return std::all_of(phases_.begin(), phases_.end(), [](const SmPhase& phase) {
      return phase.params.notify_count <= kInlineNotifyValues;
    });
  }

  // Only the launches that raise notifications change between kicks: their host-counted
  // values are set into their nodes.
  tcaResult kick(cudaStream_t stream, const uint64_t* values) override {
    if (!kick_exec_) return TCA_SUCCESS;  // a chain of nothing
    for (size_t i = 0; i < phases_.size(); ++i) {
      const SmPhase& phase = phases_[i];
      if (phase.params.notify_count == 0) continue;
      SmCopyParams params = host_counted_params(phase);
      std::copy(values, values + params.notify_count, params.values);
      values += params.notify_count;
      TCA_CUDA_CHECK(
          set_sm_copy_node(kick_exec_.get(), kick_nodes_[i], params, phase.blocks, phase.threads));
    }
    TCA_CUDA_CHECK(cudaGraphLaunch(kick_exec_.get(), stream));
    return TCA_SUCCESS;
  }

  tcaResult enqueue(cudaStream_t stream) override {
    for (const SmPhase& phase : phases_)
      TCA_CUDA_CHECK(launch_sm_copy(phase.params, phase.blocks, phase.threads, stream));
    return TCA_SUCCESS;
  }

  const SmCopyParams* resident_phases() const override {
    return static_cast<const SmCopyParams*>(resident_phases_.get());
  }

 private:
  static SmCopyParams host_counted_params(const SmPhase& phase) {
    SmCopyParams params = phase.params;
    params.count_on_gpu = 0;
    return params;
  }

  // Host kicks launch the phases as one CUDA graph, in chain order: a graph's kernel starts
  // sooner than a stream launch (a 2 MiB x halo plane kicked one at a time: 14.0 us against
  // 17.0 on an H200 pair, docs/PERFORMANCE.md).
  tcaResult build_kick_graph() {
    if (phases_.empty()) return TCA_SUCCESS;
    cudaGraph_t created = nullptr;
    TCA_CUDA_CHECK(cudaGraphCreate(&created, 0));
    kick_graph_ = CudaGraph(created);
    for (const SmPhase& phase : phases_) {
      cudaGraphNode_t node = nullptr;
      const size_t dependencies = kick_nodes_.empty() ? 0 : 1;
      TCA_CUDA_CHECK(add_sm_copy_node(created, dependencies ? &kick_nodes_.back() : nullptr,
                                      dependencies, host_counted_params(phase), phase.blocks,
                                      phase.threads, &node));
      kick_nodes_.push_back(node);
    }
    cudaGraphExec_t exec = nullptr;
    TCA_CUDA_CHECK(cudaGraphInstantiate(&exec, created, 0));
    kick_exec_ = CudaGraphExec(exec);
    return TCA_SUCCESS;
  }

  // The phases' parameters in device memory, ended by one of no pieces, for chains small
  // enough for the resident kernel (and whose address fits a ring slot's tag).
  tcaResult build_resident_phases(const std::vector<DevicePiece>& pieces) {
    uint64_t bytes = 0;
    for (const DevicePiece& piece : pieces) bytes += piece.width * piece.count;
    uint64_t notifies = 0;
    for (const SmPhase& phase : phases_) notifies += phase.params.notify_count;
    if (bytes > kResidentMaxBytes || notifies > kInlineNotifyValues) return TCA_SUCCESS;
    std::vector<SmCopyParams> table;
    for (const SmPhase& phase : phases_) table.push_back(phase.params);
    table.push_back(SmCopyParams{});
    DeviceMemory copy;
    TCA_CHECK(make_device_copy(table.data(), table.size() * sizeof(SmCopyParams), &copy));
    if (ResidentServer::carries_address(reinterpret_cast<uintptr_t>(copy.get())))
      resident_phases_ = std::move(copy);
    return TCA_SUCCESS;
  }

  tcaResult add_phase(const std::vector<DevicePiece>& pieces, size_t begin, size_t end,
                      const DeviceLimits& limits) {
    std::vector<SmPiece> sm_pieces;
    std::vector<NotifyTarget> notifies;
    uint64_t units = 0;
    for (size_t i = begin; i < end; ++i) {
      append_sm_pieces(pieces[i], &sm_pieces, &units);
      notifies.insert(notifies.end(), pieces[i].notifies.begin(), pieces[i].notifies.end());
    }
    if (sm_pieces.empty() && notifies.empty()) return TCA_SUCCESS;
    if (sm_pieces.empty()) sm_pieces.push_back(SmPiece{});  // a notify-only launch moves nothing

    SmPhase phase;
    TCA_CHECK(
        make_device_copy(sm_pieces.data(), sm_pieces.size() * sizeof(SmPiece), &phase.pieces));
    if (!notifies.empty()) {
      TCA_CHECK(make_device_copy(notifies.data(), notifies.size() * sizeof(NotifyTarget),
                                 &phase.notifies));
      TCA_CHECK(make_device_memory(sizeof(unsigned int), &phase.blocks_done));
      // Zero before any stream's launch.
      TCA_CHECK(zero_and_wait(phase.blocks_done.get(), sizeof(unsigned int)));
    }
    phase.params.pieces = static_cast<const SmPiece*>(phase.pieces.get());
    phase.params.first_piece = sm_pieces.front();
    phase.params.piece_count = static_cast<uint32_t>(sm_pieces.size());
    phase.params.total_units = units;
    phase.params.notifies = static_cast<const NotifyTarget*>(phase.notifies.get());
    phase.params.notify_count = static_cast<uint32_t>(notifies.size());
    phase.params.count_on_gpu = 1;
    phase.params.blocks_done = static_cast<unsigned int*>(phase.blocks_done.get());
    // Small launches get one small block (less to schedule); larger ones a unit per thread
    // over as many SMs as that fills (a few MiB are bound by the stores each SM has in
    // flight), up to every SM four times, where threads take several units each.
    const uint64_t warps = std::max<uint64_t>(1, (units + 31) / 32);
    phase.threads = static_cast<unsigned>(std::min<uint64_t>(kSmCopyThreads, warps * 32));
    const uint64_t max_blocks = static_cast<uint64_t>(limits.multiprocessors) * 4;
    phase.blocks = static_cast<unsigned>(
        std::clamp<uint64_t>((units + phase.threads - 1) / phase.threads, 1, max_blocks));
    phases_.push_back(std::move(phase));
    return TCA_SUCCESS;
  }

  std::vector<SmPhase> phases_;
  // Host kicks: one kernel node per phase. The graph is kept because its nodes, in phase
  // order, name the instantiated graph's nodes when a kick sets their values.
  CudaGraph kick_graph_;
  CudaGraphExec kick_exec_;
  std::vector<cudaGraphNode_t> kick_nodes_;
  DeviceMemory resident_phases_;  // null: host kicks launch
};

}  // namespace

bool device_has_write_value_ops(int device) {
  const MemOpApi& api = mem_op_api();
  if (api.get_context == nullptr || api.add_node == nullptr || api.set_params == nullptr ||
      api.get_attribute == nullptr)
    return false;
  int supported = 0;
  return api.get_attribute(&supported, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
                           static_cast<CUdevice>(device)) == CUDA_SUCCESS &&
         supported != 0;
}

const char* engine_name(Engine engine) {
  switch (engine) {
    case Engine::kCopyEngine:
      return "copy engine";
    case Engine::kSm:
      return "SM";
    case Engine::kResident:
      return "SM (resident kernel)";
  }
  return "?";
}

bool copy_engine_can_carry(const DevicePiece& piece, const DeviceLimits& limits) {
  return piece.count == 1 ||
         (piece.dst_pitch <= limits.max_pitch && piece.src_pitch <= limits.max_pitch);
}

tcaResult make_gpu_chain(Engine engine, const std::vector<DevicePiece>& pieces,
                         const DeviceLimits& limits, std::unique_ptr<GpuChain>* out) {
  if (engine == Engine::kCopyEngine) {
    for (size_t i = 0; i < pieces.size(); ++i)
      if (!copy_engine_can_carry(pieces[i], limits))
        TCA_FAIL(TCA_ERROR_UNSUPPORTED,
                 "transfer {} has a pitch over the copy engines' limit of "
                 "{} bytes; use the SM path",
                 i, limits.max_pitch);
    auto chain = std::make_unique<CopyEngineChain>();
    TCA_CHECK(chain->build(pieces, limits));
    *out = std::move(chain);
    return TCA_SUCCESS;
  }
  auto chain = std::make_unique<SmChain>();
  TCA_CHECK(chain->build(pieces, limits, engine == Engine::kResident));
  *out = std::move(chain);
  return TCA_SUCCESS;
}

}  // namespace tca
