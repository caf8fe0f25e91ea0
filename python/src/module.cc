// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The extension module tca._tca: the public C API (tca.h, tca_coll.h and, in CUDA builds,
// tca_cuda.h and tca_coll_cuda.h) as plain functions of integers, bytes and strings. The
// Python package (python/tca) builds the objects (Region, Handle, Chain, Collective) on them.
// Every call checks its tcaResult and raises the package's exception class for that code with
// tcaGetLastErrorMessage's text. Blocking calls run without the GIL; waits that can poll do so
// and look for signals between polls (KeyboardInterrupt).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "tca/tca.h"
#include "tca/tca_coll.h"
#if TCA_PY_CUDA
#include "tca/tca_coll_cuda.h"
#include "tca/tca_cuda.h"
#endif

namespace nb = nanobind;

namespace {

// The exception classes of the package, indexed by tcaResult (set by the package at import;
// a plain reference that is never released: no destructor runs after the interpreter ends).
PyObject* g_error_classes = nullptr;
// tca calls are not thread-safe: this lock serializes them across Python threads, also while a
// wait runs without the GIL.
std::mutex g_lock;
constexpr auto kPollSlice = std::chrono::milliseconds(20);  // between looks for signals

[[noreturn]] void raise(tcaResult code, const std::string& message) {
  PyObject* cls = PyExc_RuntimeError;
  if (g_error_classes != nullptr && static_cast<Py_ssize_t>(code) < PyList_Size(g_error_classes))
    cls = PyList_GetItem(g_error_classes, static_cast<Py_ssize_t>(code));
  PyErr_SetString(cls, message.c_str());
  throw nb::python_error();
}

void check(tcaResult r) {
  if (r == TCA_SUCCESS) return;
  std::string message = tcaGetLastErrorMessage();
  if (message.empty()) message = tcaGetErrorString(r);
  raise(r, message);
}

// Holds the tca lock; where another thread has it, waits for it without the GIL.
struct Locked {
  std::unique_lock<std::mutex> lock{g_lock, std::defer_lock};
  Locked() {
    if (!lock.try_lock()) {
      nb::gil_scoped_release release;
      lock.lock();
    }
  }
};

// Runs `call` without the GIL under the tca lock and checks its result.
template <class F>
void blocking(F&& call) {
  Locked locked;
  tcaResult r;
  {
    nb::gil_scoped_release release;
    r = call();
  }
  check(r);
}

// Polls `test` (returns a tcaResult and sets done) until done, the timeout, or a signal.
template <class F>
void poll_until(F&& test, const char* what) {
  Locked locked;
  bool done = false;
  check(test(done));  // the fast path: no GIL release when it is already there
  if (done) return;
  int timeout_ms = 0;
  check(tcaGetTimeout(&timeout_ms));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    tcaResult r = TCA_SUCCESS;
    bool expired = false;
    {
      nb::gil_scoped_release release;
      auto slice_end = std::chrono::steady_clock::now() + kPollSlice;
      for (;;) {
        r = test(done);
        if (r != TCA_SUCCESS || done) break;
        auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
          expired = true;
          break;
        }
        if (now >= slice_end) break;
      }
    }
    check(r);
    if (done) return;
    if (expired)
      raise(TCA_ERROR_TIMEOUT, std::string(what) + ": nothing arrived within the timeout of " +
                                   std::to_string(timeout_ms) + " ms (tca.set_timeout)");
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
  }
}

tcaHandle to_handle(const nb::bytes& b) {
  if (b.size() != TCA_HANDLE_BYTES)
    raise(TCA_ERROR_INVALID_HANDLE, "a handle is " + std::to_string(TCA_HANDLE_BYTES) +
                                        " bytes, not " + std::to_string(b.size()));
  tcaHandle h;
  std::memcpy(h.bytes, b.c_str(), TCA_HANDLE_BYTES);
  return h;
}

nb::bytes from_handle(const tcaHandle& h) {
  return nb::bytes(reinterpret_cast<const char*>(h.bytes), TCA_HANDLE_BYTES);
}

void* ptr(uintptr_t p) { return reinterpret_cast<void*>(p); }
tcaDesc desc(uintptr_t d) { return reinterpret_cast<tcaDesc>(d); }
tcaColl coll(uintptr_t c) { return reinterpret_cast<tcaColl>(c); }

// The memory of an object that speaks DLPack (or the buffer protocol) as nanobind reads it:
// (address, bytes, device type (1 CPU, 2 CUDA, ...), C-contiguous, dtype as "f4"/"i8"/...).
nb::tuple dlpack_info(nb::handle obj) {
  nb::ndarray<nb::ro> a;
  if (!nb::try_cast(obj, a))
    raise(TCA_ERROR_INVALID_ARGUMENT,
          "the object exposes no memory tca can register (DLPack, __cuda_array_interface__ or "
          "the buffer protocol)");
  bool contiguous = true;
  int64_t expect = 1;
  for (size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expect) contiguous = false;
    expect *= a.shape(i);
  }
  char kind = 'V';
  switch (a.dtype().code) {
    case static_cast<uint8_t>(nb::dlpack::dtype_code::Int):
      kind = 'i';
      break;
    case static_cast<uint8_t>(nb::dlpack::dtype_code::UInt):
      kind = 'u';
      break;
    case static_cast<uint8_t>(nb::dlpack::dtype_code::Float):
      kind = 'f';
      break;
    case static_cast<uint8_t>(nb::dlpack::dtype_code::Bool):
      kind = 'b';
      break;
    default:
      break;
  }
  std::string dtype = std::string(1, kind) + std::to_string(a.dtype().bits / 8);
  std::vector<size_t> shape;
  for (size_t i = 0; i < a.ndim(); ++i) shape.push_back(a.shape(i));
  return nb::make_tuple(reinterpret_cast<uintptr_t>(a.data()), a.nbytes(), a.device_type(),
                        contiguous, dtype, shape);
}

void bind_lifecycle(nb::module_& m) {
  m.def("_set_error_classes", [](nb::list classes) {
    Py_XDECREF(g_error_classes);
    g_error_classes = classes.inc_ref().ptr();
  });
  m.def("version", [] {
    int a = 0, b = 0, c = 0;
    check(tcaGetVersion(&a, &b, &c));
    return std::make_tuple(a, b, c);
  });
  m.def(
      "init",
      [](nb::object transport, int timeout_ms) {
        std::string name = transport.is_none() ? std::string() : nb::cast<std::string>(transport);
        tcaConfig config{};
        config.transport = transport.is_none() ? nullptr : name.c_str();
        config.timeout_ms = timeout_ms;
        blocking([&] { return tcaInitWithConfig(&config); });
      },
      nb::arg("transport").none(), nb::arg("timeout_ms"));
  m.def("finalize", [] { blocking([] { return tcaFinalize(); }); });
  m.def("rank", [] {
    int r = 0;
    check(tcaRank(&r));
    return r;
  });
  m.def("size", [] {
    int s = 0;
    check(tcaSize(&s));
    return s;
  });
  m.def("barrier", [] { blocking([] { return tcaBarrier(); }); });
  m.def("bootstrap_info", [] {
    const char* name = nullptr;
    const char* reason = nullptr;
    check(tcaBootstrapInfo(&name, &reason));
    return std::make_pair(std::string(name), std::string(reason));
  });
  m.def("bootstrap_allgather", [](nb::bytes mine, int size) {
    std::string all(mine.size() * static_cast<size_t>(size), '\0');
    blocking([&] { return tcaBootstrapAllgather(mine.c_str(), all.data(), mine.size()); });
    return nb::bytes(all.data(), all.size());
  });
  m.def("set_timeout", [](int ms) { check(tcaSetTimeout(ms)); });
  m.def("get_timeout", [] {
    int ms = 0;
    check(tcaGetTimeout(&ms));
    return ms;
  });
  m.def("error_string", [](int code) { return std::string(tcaGetErrorString(tcaResult(code))); });
  m.def("settings", [] {
    int n = 0;
    check(tcaGetSettingCount(&n));
    nb::list out;
    for (int i = 0; i < n; ++i) {
      tcaSettingInfo s{};
      check(tcaGetSetting(i, &s));
      nb::dict d;
      d["name"] = s.name;
      d["value"] = s.value;
      d["default"] = s.default_value;
      d["accepted"] = s.accepted;
      d["meaning"] = s.meaning;
      d["from_environment"] = s.from_environment != 0;
      d["valid"] = s.valid != 0;
      out.append(d);
    }
    return out;
  });
}

void bind_paths(nb::module_& m) {
  m.def("peer_transport", [](int peer) {
    const char* name = nullptr;
    check(tcaPeerTransport(peer, &name));
    return std::string(name);
  });
  m.def("auto_transport", [](int peer, int local, int remote, size_t bytes) {
    const char* name = nullptr;
    const char* table = nullptr;
    check(tcaAutoTransport(peer, tcaMemKind(local), tcaMemKind(remote), bytes, &name, &table));
    return std::make_pair(std::string(name), std::string(table ? table : ""));
  });
  m.def("path_available", [](int path, int peer) {
    int ok = 0;
    check(tcaPathAvailable(tcaPath(path), peer, &ok));
    return ok != 0;
  });
}

void bind_memory(nb::module_& m) {
  m.def("dlpack_info", &dlpack_info);
  m.def("malloc", [](size_t bytes, int kind) {
    void* p = nullptr;
    check(tcaMalloc(&p, bytes, tcaMemKind(kind)));
    return reinterpret_cast<uintptr_t>(p);
  });
  m.def("free", [](uintptr_t p) {
    Locked locked;
    check(tcaFree(ptr(p)));
  });
  m.def("create_handle", [](uintptr_t p, size_t bytes, int kind) {
    Locked locked;
    tcaHandle h;
    check(tcaCreateHandle(&h, ptr(p), bytes, tcaMemKind(kind)));
    return from_handle(h);
  });
  m.def("destroy_handle", [](nb::bytes b) {
    tcaHandle h = to_handle(b);
    Locked locked;
    check(tcaDestroyHandle(&h));
  });
  m.def("allgather_handles", [](nb::bytes b) {
    tcaHandle mine = to_handle(b);
    int n = 0;
    check(tcaSize(&n));
    std::vector<tcaHandle> all(static_cast<size_t>(n));
    blocking([&] { return tcaAllgatherHandles(&mine, all.data()); });
    std::vector<nb::bytes> out;
    for (const tcaHandle& h : all) out.push_back(from_handle(h));
    return out;
  });
  m.def("handle_info", [](nb::bytes b) {
    tcaHandle h = to_handle(b);
    int owner = 0;
    size_t bytes = 0;
    tcaMemKind kind = TCA_MEM_CPU;
    check(tcaHandleInfo(&h, &owner, &bytes, &kind));
    return std::make_tuple(owner, bytes, static_cast<int>(kind));
  });
  m.def("pio_pointer", [](nb::bytes b, size_t offset, size_t bytes) {
    tcaHandle h = to_handle(b);
    void* p = nullptr;
    check(tcaPIOPointer(&p, &h, offset, bytes));
    return reinterpret_cast<uintptr_t>(p);
  });
  m.def("pio_fence", [] { check(tcaPIOFence()); });
}

void bind_chains(nb::module_& m) {
  m.def("desc_new", [] {
    tcaDesc d = nullptr;
    check(tcaDescNew(&d));
    return reinterpret_cast<uintptr_t>(d);
  });
  m.def("desc_free", [](uintptr_t d) { check(tcaDescFree(desc(d))); });
  m.def("desc_memcpy", [](uintptr_t d, nb::bytes dst, size_t dst_offset, nb::bytes src,
                          size_t src_offset, size_t bytes, int notify_slot) {
    tcaHandle hd = to_handle(dst), hs = to_handle(src);
    unsigned flags = notify_slot >= 0 ? TCA_FLAG_NOTIFY : 0u;
    check(tcaDescSetMemcpy(desc(d), &hd, dst_offset, &hs, src_offset, bytes, flags,
                           notify_slot >= 0 ? notify_slot : 0));
  });
  m.def("desc_memcpy_2d",
        [](uintptr_t d, nb::bytes dst, size_t dst_offset, size_t dst_pitch, nb::bytes src,
           size_t src_offset, size_t src_pitch, size_t width, size_t count, int notify_slot) {
          tcaHandle hd = to_handle(dst), hs = to_handle(src);
          unsigned flags = notify_slot >= 0 ? TCA_FLAG_NOTIFY : 0u;
          check(tcaDescSetMemcpy2D(desc(d), &hd, dst_offset, dst_pitch, &hs, src_offset, src_pitch,
                                   width, count, flags, notify_slot >= 0 ? notify_slot : 0));
        });
  m.def("desc_set_path",
        [](uintptr_t d, int path) { check(tcaDescSetPath(desc(d), tcaPath(path))); });
  m.def("desc_set", [](uintptr_t d, int channel) {
    Locked locked;
    check(tcaDescSet(desc(d), channel));
  });
  m.def("desc_start", [](uintptr_t d) {
    Locked locked;
    check(tcaStartDMADesc(desc(d)));
  });
  m.def("wait_dma", [](int channel) { blocking([&] { return tcaWaitDMAC(channel); }); });
  m.def("wait_notify", [](int src_rank, int slot) {
    int from = -1;
    poll_until(
        [&](bool& done) {
          int arrived = 0;
          tcaResult r = tcaTestDMARecvDesc(src_rank, slot, &arrived, &from);
          done = arrived != 0;
          return r;
        },
        "wait_notify");
    return from;
  });
  m.def("test_notify", [](int src_rank, int slot) {
    Locked locked;
    int arrived = 0, from = -1;
    check(tcaTestDMARecvDesc(src_rank, slot, &arrived, &from));
    return std::make_pair(arrived != 0, from);
  });
  m.def("notify", [](int rank, int slot) {
    Locked locked;
    check(tcaNotify(rank, slot));
  });
  m.def("put", [](nb::bytes dst, size_t offset, uintptr_t src, size_t bytes) {
    tcaHandle h = to_handle(dst);
    blocking([&] { return tcaPut(&h, offset, ptr(src), bytes); });
  });
  m.def("get", [](uintptr_t dst, nb::bytes src, size_t offset, size_t bytes) {
    tcaHandle h = to_handle(src);
    blocking([&] { return tcaGet(ptr(dst), &h, offset, bytes); });
  });
}

void bind_collectives(nb::module_& m) {
  m.def("coll_new", [](int kind, int type, int op, size_t count, uintptr_t send, uintptr_t recv,
                       int algorithm, int memory, unsigned resident_idle_us) {
    tcaCollConfig config{};
    config.algorithm = tcaCollAlgorithm(algorithm);
    config.memory = tcaMemKind(memory);
    config.resident_idle_us = resident_idle_us;
    tcaColl c = nullptr;
    blocking([&] {
      return tcaCollNew(&c, tcaCollKind(kind), tcaDataType(type), tcaRedOp(op), count, ptr(send),
                        ptr(recv), &config);
    });
    return reinterpret_cast<uintptr_t>(c);
  });
  m.def("coll_start", [](uintptr_t c) {
    Locked locked;
    check(tcaCollStart(coll(c)));
  });
  m.def("coll_test", [](uintptr_t c) {
    Locked locked;
    int done = 0;
    check(tcaCollTest(coll(c), &done));
    return done != 0;
  });
  m.def("coll_wait", [](uintptr_t c) {
    poll_until(
        [&](bool& done) {
          int d = 0;
          tcaResult r = tcaCollTest(coll(c), &d);
          done = d != 0;
          return r;
        },
        "Collective.wait");
  });
  m.def("coll_free", [](uintptr_t c) { blocking([&] { return tcaCollFree(coll(c)); }); });
  m.def("coll_algorithm", [](uintptr_t c) {
    tcaCollAlgorithm a = TCA_COLL_AUTO;
    check(tcaCollGetAlgorithm(coll(c), &a));
    return std::string(tcaCollAlgorithmName(a));
  });
  m.def("allreduce", [](uintptr_t send, uintptr_t recv, size_t count, int type, int op,
                        int algorithm, int memory) {
    tcaCollConfig config{};
    config.algorithm = tcaCollAlgorithm(algorithm);
    config.memory = tcaMemKind(memory);
    blocking([&] {
      return tcaAllreduce(ptr(send), ptr(recv), count, tcaDataType(type), tcaRedOp(op), &config);
    });
  });
  m.def("allgather", [](uintptr_t send, uintptr_t recv, size_t count, int type, int algorithm,
                        int memory) {
    tcaCollConfig config{};
    config.algorithm = tcaCollAlgorithm(algorithm);
    config.memory = tcaMemKind(memory);
    blocking([&] { return tcaAllgather(ptr(send), ptr(recv), count, tcaDataType(type), &config); });
  });
  m.def("coll_release_cache", [] { blocking([] { return tcaCollReleaseCache(); }); });
  m.def("coll_choose", [](int kind, int memory, size_t bytes, int ranks) {
    tcaCollAlgorithm a = TCA_COLL_AUTO;
    check(tcaCollChooseAlgorithm(tcaCollKind(kind), tcaMemKind(memory), bytes, ranks, &a));
    return std::string(tcaCollAlgorithmName(a));
  });
}

void bind_cuda(nb::module_& m) {
#if TCA_PY_CUDA
  m.attr("has_cuda") = true;
  m.def("cuda_device", [] {
    int d = -1;
    check(tcaCudaDevice(&d));
    return d;
  });
  m.def("desc_start_stream", [](uintptr_t d, uintptr_t stream) {
    Locked locked;
    check(tcaStartDMADescStream(desc(d), reinterpret_cast<cudaStream_t>(stream)));
  });
  m.def("wait_notify_stream", [](int src_rank, int slot, uintptr_t stream) {
    Locked locked;
    check(tcaWaitDMARecvDescStream(src_rank, slot, reinterpret_cast<cudaStream_t>(stream)));
  });
  m.def("coll_start_stream", [](uintptr_t c, uintptr_t stream) {
    Locked locked;
    check(tcaCollStartStream(coll(c), reinterpret_cast<cudaStream_t>(stream)));
  });
  // Copies `bytes` between device addresses (any GPUs of this process) and returns when the
  // copy is complete: a device-to-device cudaMemcpy may return before, so the legacy default
  // stream it ran on is synchronized.
  m.def("copy_device", [](uintptr_t dst, uintptr_t src, size_t bytes) {
    cudaError_t e;
    {
      nb::gil_scoped_release release;
      e = cudaMemcpy(ptr(dst), ptr(src), bytes, cudaMemcpyDefault);
      if (e == cudaSuccess) e = cudaStreamSynchronize(nullptr);
    }
    if (e != cudaSuccess)
      raise(TCA_ERROR_TRANSPORT, std::string("cudaMemcpy of ") + std::to_string(bytes) +
                                     " bytes between GPU buffers: " + cudaGetErrorString(e));
  });
#else
  m.attr("has_cuda") = false;
  auto missing = [](nb::args) {
    raise(TCA_ERROR_UNSUPPORTED, "this tca was built without CUDA (TCA_CUDA)");
  };
  m.def("cuda_device", missing);
  m.def("desc_start_stream", missing);
  m.def("wait_notify_stream", missing);
  m.def("coll_start_stream", missing);
  m.def("copy_device", missing);
#endif
}

}  // namespace

NB_MODULE(_tca, m) {
  m.doc() = "tca's C API as plain functions (use the package tca, not this module)";
  m.attr("HANDLE_BYTES") = TCA_HANDLE_BYTES;
  m.attr("DMA_CHANNELS") = TCA_DMA_CHANNELS;
  m.attr("USER_DMA_CHANNELS") = TCA_USER_DMA_CHANNELS;
  m.attr("NOTIFY_SLOTS") = TCA_NOTIFY_SLOTS;
  m.attr("USER_NOTIFY_SLOTS") = TCA_USER_NOTIFY_SLOTS;
  m.attr("ANY_RANK") = TCA_ANY_RANK;
  bind_lifecycle(m);
  bind_paths(m);
  bind_memory(m);
  bind_chains(m);
  bind_collectives(m);
  bind_cuda(m);
}
