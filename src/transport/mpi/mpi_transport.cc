// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The mpi transport's start-up, notifications and fences (mpi_transport.h).
#include "transport/mpi/mpi_transport.h"

#include "transport/mpi/mpi_run.h"

namespace tca::mpi {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  std::string message = MPI_Error_string(code, text, &length) == MPI_SUCCESS
                            ? std::string(text, length)
                            : fmt::format("MPI error {}", code);
  int error_class = 0;
  if (MPI_Error_class(code, &error_class) == MPI_SUCCESS && error_class == MPI_ERR_RMA_RANGE)
    message +=
        " (the target memory is not attached at its owner; see the owner's warning "
        "about the MPI attach limit)";
  return message;
}

namespace {

// Open MPI's osc/rdma attaches at most osc_rdma_max_attach buffers to a dynamic window, and at
// that limit MPI_Win_attach returns without releasing the window lock it took (4.1.x, and the
// current source alike): every later access by a peer then spins forever. The limit is read
// here so that the transport never reaches it; without that variable none is known (SIZE_MAX).
size_t osc_rdma_attach_limit() {
  int provided = 0;
  // Asked at MPI's own level: Open MPI 4.1 makes the level MPI_T asks for MPI's as well, so
  // asking for less would lower what MPI_Query_thread reports afterwards.
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (MPI_T_init_thread(level, &provided) != MPI_SUCCESS) return SIZE_MAX;
  size_t limit = SIZE_MAX;
  int index = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  if (MPI_T_cvar_get_index("osc_rdma_max_attach", &index) == MPI_SUCCESS &&
      MPI_T_cvar_get_info(index, nullptr, nullptr, nullptr, &datatype, nullptr, nullptr, nullptr,
                          nullptr, nullptr) == MPI_SUCCESS &&
      (datatype == MPI_UNSIGNED || datatype == MPI_INT)) {
    MPI_T_cvar_handle handle;
    int count = 0;
    if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
      unsigned int value = 0;
      if (count == 1 && MPI_T_cvar_read(handle, &value) == MPI_SUCCESS) limit = value;
      MPI_T_cvar_handle_free(&handle);
    }
  }
  MPI_T_finalize();
  return limit;
}

}  // namespace

tcaResult MpiTransport::init() {
  const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size > 0) page_size_ = static_cast<uintptr_t>(page_size);

  TCA_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup for the mpi transport");
  TCA_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN),
                "MPI_Comm_set_errhandler for the mpi transport");
  int size = 0;
  TCA_MPI_CHECK(MPI_Comm_size(comm_, &size), "MPI_Comm_size");
  if (size != job_.size())
    TCA_FAIL(TCA_ERROR_INTERNAL, "MPI_COMM_WORLD has {} ranks but the job has {}", size,
             job_.size());

  // A lone rank has no peer to expose memory to; Open MPI's osc/rdma cannot even create a
  // window on one process. Its transfers are all local copies and self-notifications.
  if (size == 1) return TCA_SUCCESS;
  // Without a window the transport still serves this rank itself, and the job may not need it
  // for others (same-host peers use shm): a missing window fails the first use, not tcaInit.
  const int created = MPI_Win_create_dynamic(MPI_INFO_NULL, comm_, &window_);
  int created_everywhere = created == MPI_SUCCESS;
  TCA_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &created_everywhere, 1, MPI_INT, MPI_MIN, comm_),
                "MPI_Allreduce of the window's creation");
  if (!created_everywhere) {
    // A window made on some ranks only cannot be freed (that is collective); it is left alone.
    window_ = MPI_WIN_NULL;
    no_window_reason_ = fmt::format(
        "MPI_Win_create_dynamic failed{}; no MPI one-sided component serves dynamic windows "
        "here (Open MPI: enable osc/pt2pt, e.g. OMPI_MCA_osc=pt2pt, or give btl/vader a "
        "single-copy mechanism for osc/rdma)",
        created == MPI_SUCCESS ? " on another rank" : ": " + mpi_error_text(created));
    if (job_.rank() == 0) TCA_WARN("mpi transport reaches no other rank: {}", no_window_reason_);
    return TCA_SUCCESS;
  }
  TCA_MPI_CHECK(MPI_Win_set_errhandler(window_, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
  TCA_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_), "MPI_Win_lock_all");
  locked_ = true;

  unsigned char* control_block = job_.control_block();
  TCA_MPI_CHECK(
      MPI_Win_attach(window_, control_block, static_cast<MPI_Aint>(job_.control_block_size())),
      "MPI_Win_attach of the control block ({} bytes)", job_.control_block_size());
  control_block_attached_ = true;
  const size_t attach_limit = osc_rdma_attach_limit();
  if (attach_limit != SIZE_MAX) max_spans_ = attach_limit > 1 ? attach_limit - 1 : 0;
  MPI_Aint mine = 0;
  TCA_MPI_CHECK(MPI_Get_address(control_block, &mine), "MPI_Get_address of the control block");
  control_blocks_.resize(size);
  sequences_.assign(size, 0);
  wake_maps_.resize(size);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == job_.rank() || !job_.same_host(peer)) continue;
    const PeerInfo& info = job_.peer(peer);
    TCA_CHECK(PeerMapping::open(info.pid, info.control_fd, 0, job_.control_block_size(),
                                job_.memfd_name(peer, 0).c_str(), info.control_inode,
                                &wake_maps_[peer]));
  }
  TCA_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_AINT, control_blocks_.data(), 1, MPI_AINT, comm_),
                "MPI_Allgather of the control-block addresses");
  return TCA_SUCCESS;
}

// Runs collectively inside tcaFinalize; failures can only be reported.
MpiTransport::~MpiTransport() {
  // Freeing the window is collective: with a rank dead it would wait for it forever.
  const tcaResult released = guarded(nullptr, "freeing the mpi transport's window", [&] {
    release_window();
    return TCA_SUCCESS;
  });
  if (released != TCA_SUCCESS)
    TCA_WARN("mpi transport: its window is left as it is: {}", last_error_message());
}

tcaResult MpiTransport::check_reachable(int peer) const {
  if (peer != job_.rank() && window_ == MPI_WIN_NULL)
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "the mpi transport cannot reach rank {} from rank {}: {}", peer,
             job_.rank(), no_window_reason_);
  return TCA_SUCCESS;
}

bool MpiTransport::carries_default_traffic() const {
  for (int peer = 0; peer < job_.size(); ++peer)
    if (job_.control_transport(peer) == this) return true;
  return false;
}

tcaResult MpiTransport::prepare(const std::vector<Transfer>& run,
                                std::unique_ptr<PreparedRun>* out) {
  auto prepared = std::make_unique<MpiRun>(*this);
  for (const Transfer& transfer : run) TCA_CHECK(prepared->add(transfer));
  *out = std::move(prepared);
  return TCA_SUCCESS;
}

tcaResult MpiTransport::raise_slot(int peer, int slot, uint64_t value) {
  if (peer == job_.rank()) {  // only this rank writes its own cells for itself
    __atomic_store_n(
        reinterpret_cast<uint64_t*>(job_.control_block() + notify_cell_offset(peer, slot)), value,
        __ATOMIC_RELEASE);
    return TCA_SUCCESS;
  }
  const MPI_Aint cell =
      control_blocks_[peer] + static_cast<MPI_Aint>(notify_cell_offset(job_.rank(), slot));
  // Accumulate, not put: atomic with respect to the other accumulates on the same cell.
  TCA_MPI_CHECK(
      MPI_Accumulate(&value, 1, MPI_UINT64_T, peer, cell, 1, MPI_UINT64_T, MPI_REPLACE, window_),
      "MPI_Accumulate of notification slot {} at rank {}", slot, peer);
  TCA_MPI_CHECK(MPI_Win_flush(peer, window_), "MPI_Win_flush of notification slot {} at rank {}",
                slot, peer);
  if (static_cast<size_t>(peer) < wake_maps_.size() && wake_maps_[peer].data() != nullptr)
    wake_sleepers(wake_maps_[peer].data(), job_.size());
  return TCA_SUCCESS;
}

tcaResult MpiTransport::notify(int peer, int slot, uint64_t value) {
  TCA_CHECK(check_reachable(peer));
  if (peer == job_.rank()) return raise_slot(peer, slot, value);
  return guarded(peer, "a notification", [&]() -> tcaResult {
    TCA_MPI_CHECK(MPI_Win_flush(peer, window_), "MPI_Win_flush to rank {} before notifying", peer);
    return raise_slot(peer, slot, value);
  });
}

tcaResult MpiTransport::pio_pointer(PeerRegion& region, uint64_t, void**) {
  TCA_FAIL(TCA_ERROR_UNSUPPORTED,
           "region {} of rank {}: the mpi transport maps no peer memory; "
           "use tcaPut or a descriptor instead of PIO",
           region.id, region.owner);
}

tcaResult MpiTransport::fence() {
  if (window_ == MPI_WIN_NULL) return TCA_SUCCESS;
  return guarded(nullptr, "a flush to every rank", [&]() -> tcaResult {
    TCA_MPI_CHECK(MPI_Win_flush_all(window_), "MPI_Win_flush_all");
    return TCA_SUCCESS;
  });
}

tcaResult MpiTransport::progress() {
  if (mpi_guard().abandoned()) return TCA_SUCCESS;  // MPI is closed: nothing comes through it
  // Make remote writes into the control block visible to the waiter's loads ...
  if (window_ != MPI_WIN_NULL) TCA_MPI_CHECK(MPI_Win_sync(window_), "MPI_Win_sync");
  // ... and enter the MPI library, for osc components whose targets must serve requests.
  int pending = 0;
  TCA_MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &pending, MPI_STATUS_IGNORE),
                "MPI_Iprobe");
  return TCA_SUCCESS;
}

}  // namespace tca::mpi

namespace tca {

tcaResult make_mpi_transport(Job& job, int id, std::vector<std::unique_ptr<Transport>>* out) {
  // MPI_COMM_WORLD is this job only where MPI started it; otherwise other transports carry it.
  if (!job.bootstrap().is_mpi()) return TCA_SUCCESS;
  auto transport = std::make_unique<mpi::MpiTransport>(job, id);
  TCA_CHECK(transport->init());
  out->push_back(std::move(transport));
  return TCA_SUCCESS;
}

}  // namespace tca
