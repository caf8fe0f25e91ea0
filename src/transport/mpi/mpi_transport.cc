// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The MPI one-sided transport: every rank exposes its control block and its registered host
// regions through one dynamic RMA window, held in a lock_all epoch for the transport's lifetime.
// Puts and gets go straight to the owner's base address (the target displacement of a dynamic
// window); notifications are MPI_Accumulate(REPLACE) into the receiver's control block after a
// flush, so they are never visible before the data they announce.
//
// Where no window can be made (one rank alone, or no MPI component serves dynamic windows) the
// transport still carries this rank's transfers to itself, and reports other ranks unreachable.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/error.h"
#include "base/host_memory.h"
#include "base/log.h"
#include "bootstrap/bootstrap.h"
#include "core/context.h"
#include "core/wake.h"
#include "transport/transport.h"

namespace tca {
namespace {

// The largest amount one MPI call moves: counts are ints, and keeping every datatype's size
// below 2 GiB also keeps MPI_Type_size and the osc components' int arithmetic exact.
constexpr uint64_t kMaxBytesPerCall = uint64_t{1} << 30;

// Runs `call`, an MPI call that involves `ranks` (every rank where null), through the process's
// MPI guard (bootstrap/call_guard.h) where it is started, else right here at no cost.
template <typename Call>
tcaResult guarded(const std::vector<int>* ranks, const char* what, Call&& call) {
  if (!mpi_guard().engaged()) return call();
  return mpi_guard().run(ranks, what, std::forward<Call>(call));
}

template <typename Call>
tcaResult guarded(int peer, const char* what, Call&& call) {
  if (!mpi_guard().engaged()) return call();
  const std::vector<int> ranks{peer};
  return mpi_guard().run(&ranks, what, std::forward<Call>(call));
}

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
}  // namespace tca

// Fails with TCA_ERROR_TRANSPORT naming the MPI call (formatted from the trailing arguments).
#define TCA_MPI_CHECK(call, ...)                                                 \
  do {                                                                           \
    const int tca_mpi_code_ = (call);                                            \
    if (tca_mpi_code_ != MPI_SUCCESS)                                            \
      TCA_FAIL(TCA_ERROR_TRANSPORT, "{} failed: {}", ::fmt::format(__VA_ARGS__), \
               ::tca::mpi_error_text(tca_mpi_code_));                            \
  } while (0)

namespace tca {
namespace {

uint64_t load_acquire(const unsigned char* block, uint64_t offset) {
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(block + offset), __ATOMIC_ACQUIRE);
}

// Owns one derived datatype. Prepared runs (and so these) go before the transport and MPI.
class OwnedDatatype {
 public:
  explicit OwnedDatatype(MPI_Datatype type) : type_(type) {}
  OwnedDatatype(OwnedDatatype&& other) noexcept
      : type_(std::exchange(other.type_, MPI_DATATYPE_NULL)) {}
  OwnedDatatype(const OwnedDatatype&) = delete;
  OwnedDatatype& operator=(const OwnedDatatype&) = delete;
  OwnedDatatype& operator=(OwnedDatatype&&) = delete;
  ~OwnedDatatype() {
    // Not while a thread is left inside MPI (bootstrap/call_guard.h): leaked instead.
    if (type_ != MPI_DATATYPE_NULL && !mpi_guard().abandoned()) MPI_Type_free(&type_);
  }

 private:
  MPI_Datatype type_;
};

// How one side of an RMA call lays out its bytes: `count` elements of `type`.
struct Layout {
  MPI_Datatype type = MPI_BYTE;
  int count = 0;
};

// One MPI_Put or MPI_Get of at most kMaxBytesPerCall bytes.
struct RmaStep {
  bool is_put = true;
  int target = 0;
  unsigned char* local = nullptr;
  Layout local_layout;
  MPI_Aint target_disp = 0;
  Layout target_layout;
  uint64_t bytes = 0;
  const PeerRegion* remote = nullptr;  // for error messages
};

// A copy between two regions of this rank: `count` blocks of `width` bytes.
struct CopyStep {
  unsigned char* dst = nullptr;
  const unsigned char* src = nullptr;
  uint64_t dst_pitch = 0;
  uint64_t src_pitch = 0;
  uint64_t width = 0;
  uint64_t count = 0;
};

// Raises `slot` at `peer` once every earlier RMA step of the run is complete at its target.
struct NotifyStep {
  int peer = 0;
  int slot = 0;
  std::vector<int> earlier_targets;
};

using Step = std::variant<RmaStep, CopyStep, NotifyStep>;

// A remote region whose liveness cell is read before every start.
struct LivenessProbe {
  const PeerRegion* region = nullptr;
  MPI_Aint cell_disp = 0;
};

// [begin, end) of whole pages in this process's address space.
struct PageRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;
};

class MpiTransport final : public Transport {
 public:
  MpiTransport(Context& context, int id) : Transport(id), context_(context) {}
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;
  ~MpiTransport() override;

  tcaResult init();

  const char* name() const override { return "mpi"; }
  tcaPath path() const override { return TCA_PATH_MPI; }
  // Host memory of every rank (through the window; this rank's own without one).
  bool can_reach(int peer, tcaMemKind local, tcaMemKind remote) const override {
    return controls(peer) && local == TCA_MEM_CPU && remote == TCA_MEM_CPU;
  }
  bool controls(int peer) const override {
    return peer == context_.rank() ||
           (window_ != MPI_WIN_NULL && peer >= 0 && peer < context_.size());
  }
  tcaResult register_region(PeerRegion& own, WireHandle* wire) override;
  tcaResult deregister_region(PeerRegion& own) override;
  tcaResult attach(PeerRegion&) override { return TCA_SUCCESS; }
  tcaResult region_alive(const PeerRegion& region, bool* alive) override;
  tcaResult read_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                        uint64_t* issued) override;
  tcaResult prepare(const std::vector<Transfer>& run, std::unique_ptr<PreparedRun>* out) override;
  tcaResult notify(int peer, int slot, uint64_t value) override;
  tcaResult pio_pointer(PeerRegion& region, uint64_t offset, void** out) override;
  tcaResult fence() override;
  tcaResult progress() override;

  // ---- what prepared runs use ----
  Context& context() { return context_; }
  MPI_Win window() const { return window_; }
  MPI_Aint live_cell_disp(const PeerRegion& region) const {
    return control_blocks_[region.owner] + static_cast<MPI_Aint>(live_cell_offset(region.id));
  }
  // Fails with TCA_ERROR_UNREACHABLE when `peer` is another rank and there is no window.
  tcaResult check_reachable(int peer) const;
  // Writes the next begun (or, with `done`, the current) count of this rank's transfers into
  // `owner`'s in-flight cell (base/region.h); completed by the caller's next flush to `owner`.
  tcaResult announce(int owner, bool done);
  // Reads `words` words at `disp` of `owner`'s control block and waits for them.
  tcaResult get_words(int owner, MPI_Aint disp, uint64_t* words, int count);
  tcaResult read_remote_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                               uint64_t* issued);
  // Writes `value` into cell (this rank, slot) of `peer`'s control block and completes it there.
  tcaResult raise_slot(int peer, int slot, uint64_t value);

 private:
  PageRange pages_of(const PeerRegion& own) const;
  tcaResult attach_span(PageRange range);
  // `range` grown to reach the attached span nearest to it.
  PageRange hull_with_nearest_span(PageRange range) const;
  // Detaches `replaced` and attaches `merged` in their place (restoring them on failure).
  tcaResult replace_spans(const std::vector<PageRange>& replaced, PageRange merged);
  tcaResult detach_span(uintptr_t begin);
  void release_window();
  // Whether AUTO sends any peer's traffic here (then registrations must be reachable at once).
  bool carries_default_traffic() const;

  Context& context_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  bool locked_ = false;
  bool control_block_attached_ = false;
  size_t max_spans_ = SIZE_MAX;           // besides the control block
  bool warned_unreachable_ = false;       // about a region left out of the window
  std::string no_window_reason_;          // why the window could not be made, if it could not
  std::vector<MPI_Aint> control_blocks_;  // every rank's control-block address
  std::vector<uint64_t> sequences_;       // transfers announced to each owner
  // Same-host peers' control blocks, mapped only to wake a peer sleeping in a wait
  // (core/wake.h) after a notification lands.
  std::vector<PeerMapping> wake_maps_;
  uintptr_t page_size_ = 4096;
  // Memory attached to the window, as disjoint whole-page spans (begin -> end). MPI forbids
  // overlapping attachments, while registrations may overlap or share pages; the spans are the
  // page-wise union of the registrations in `attached_regions_` (or, at the span limit, hulls).
  std::map<uintptr_t, uintptr_t> spans_;
  std::map<uint64_t, PageRange> attached_regions_;  // region id -> its pages
};

class MpiRun final : public PreparedRun {
 public:
  explicit MpiRun(MpiTransport& transport) : transport_(transport) {}

  tcaResult start() override;
  tcaResult wait() override;

  // ---- built by MpiTransport::prepare ----
  tcaResult add(const Transfer& transfer);

 private:
  tcaResult add_rma(bool is_put, const PeerRegion& remote, uint64_t remote_offset,
                    uint64_t remote_pitch, unsigned char* local, uint64_t local_pitch,
                    uint64_t width, uint64_t count);
  void add_contiguous(bool is_put, const PeerRegion& remote, MPI_Aint target_disp,
                      unsigned char* local, uint64_t bytes);
  tcaResult make_layout(uint64_t rows, uint64_t width, uint64_t pitch, Layout* out);
  tcaResult check_liveness();
  tcaResult announce(bool done);
  tcaResult run_announced();
  tcaResult run_steps();
  tcaResult run_rma(const RmaStep& step);
  tcaResult run_notify(const NotifyStep& step);

  MpiTransport& transport_;
  std::vector<Step> steps_;
  std::vector<OwnedDatatype> datatypes_;
  std::vector<LivenessProbe> probes_;
  std::vector<uint64_t> probe_values_;  // where the probes' gets land
  std::vector<int> probe_targets_;      // distinct owners of the probed regions
  std::vector<int> targets_;            // distinct targets of the RMA steps so far
  std::vector<int> involved_;           // distinct other ranks the run touches (RMA, notices)
};

// ---------------------------------------------------------------- transport

tcaResult MpiTransport::init() {
  const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size > 0) page_size_ = static_cast<uintptr_t>(page_size);

  TCA_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup for the mpi transport");
  TCA_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN),
                "MPI_Comm_set_errhandler for the mpi transport");
  int size = 0;
  TCA_MPI_CHECK(MPI_Comm_size(comm_, &size), "MPI_Comm_size");
  if (size != context_.size())
    TCA_FAIL(TCA_ERROR_INTERNAL, "MPI_COMM_WORLD has {} ranks but the job has {}", size,
             context_.size());

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
    if (context_.rank() == 0)
      TCA_WARN("mpi transport reaches no other rank: {}", no_window_reason_);
    return TCA_SUCCESS;
  }
  TCA_MPI_CHECK(MPI_Win_set_errhandler(window_, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
  TCA_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_), "MPI_Win_lock_all");
  locked_ = true;

  unsigned char* control_block = context_.control_block();
  TCA_MPI_CHECK(
      MPI_Win_attach(window_, control_block, static_cast<MPI_Aint>(context_.control_block_size())),
      "MPI_Win_attach of the control block ({} bytes)", context_.control_block_size());
  control_block_attached_ = true;
  const size_t attach_limit = osc_rdma_attach_limit();
  if (attach_limit != SIZE_MAX) max_spans_ = attach_limit > 1 ? attach_limit - 1 : 0;
  MPI_Aint mine = 0;
  TCA_MPI_CHECK(MPI_Get_address(control_block, &mine), "MPI_Get_address of the control block");
  control_blocks_.resize(size);
  sequences_.assign(size, 0);
  wake_maps_.resize(size);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == context_.rank() || !context_.same_host(peer)) continue;
    const PeerInfo& info = context_.peer(peer);
    TCA_CHECK(PeerMapping::open(info.pid, info.control_fd, 0, context_.control_block_size(),
                                context_.memfd_name(peer, 0).c_str(), info.control_inode,
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

void MpiTransport::release_window() {
  if (locked_ && MPI_Win_unlock_all(window_) != MPI_SUCCESS)
    TCA_WARN("mpi transport: MPI_Win_unlock_all failed at finalize");
  if (window_ != MPI_WIN_NULL) {
    for (const auto& span : spans_) MPI_Win_detach(window_, reinterpret_cast<void*>(span.first));
    if (control_block_attached_) MPI_Win_detach(window_, context_.control_block());
    if (MPI_Win_free(&window_) != MPI_SUCCESS) TCA_WARN("mpi transport: MPI_Win_free failed");
  }
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

PageRange MpiTransport::pages_of(const PeerRegion& own) const {
  const uintptr_t begin = own.mapped != nullptr ? reinterpret_cast<uintptr_t>(own.mapped)
                                                : static_cast<uintptr_t>(own.address);
  const uintptr_t end = begin + own.bytes;
  return {begin & ~(page_size_ - 1), (end + page_size_ - 1) & ~(page_size_ - 1)};
}

tcaResult MpiTransport::attach_span(PageRange range) {
  const int code = MPI_Win_attach(window_, reinterpret_cast<void*>(range.begin),
                                  static_cast<MPI_Aint>(range.end - range.begin));
  // Attaching fails for want of a resource: the library's attach table or registrations.
  if (code != MPI_SUCCESS)
    TCA_FAIL(TCA_ERROR_OUT_OF_RESOURCES,
             "MPI_Win_attach of {} bytes at {:#x} failed ({} spans attached): {}",
             range.end - range.begin, range.begin, spans_.size(), mpi_error_text(code));
  spans_[range.begin] = range.end;
  return TCA_SUCCESS;
}

tcaResult MpiTransport::detach_span(uintptr_t begin) {
  TCA_MPI_CHECK(MPI_Win_detach(window_, reinterpret_cast<void*>(begin)),
                "MPI_Win_detach of the span at {:#x}", begin);
  spans_.erase(begin);
  return TCA_SUCCESS;
}

tcaResult MpiTransport::check_reachable(int peer) const {
  if (peer != context_.rank() && window_ == MPI_WIN_NULL)
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "the mpi transport cannot reach rank {} from rank {}: {}", peer,
             context_.rank(), no_window_reason_);
  return TCA_SUCCESS;
}

bool MpiTransport::carries_default_traffic() const {
  for (int peer = 0; peer < context_.size(); ++peer)
    if (context_.control_transport(peer) == this) return true;
  return false;
}

tcaResult MpiTransport::register_region(PeerRegion& own, WireHandle* /*wire*/) {
  // GPU memory stays out of the window; so does everything once MPI is closed to this process
  // (a call was abandoned inside it: bootstrap/call_guard.h), when no transfer runs here anyway.
  if (window_ == MPI_WIN_NULL || own.kind != TCA_MEM_CPU || own.bytes == 0 ||
      mpi_guard().abandoned())
    return TCA_SUCCESS;
  const PageRange pages = pages_of(own);

  // The spans that share a page with the region.
  auto first = spans_.upper_bound(pages.begin);
  if (first != spans_.begin() && std::prev(first)->second > pages.begin) --first;
  auto last = first;
  PageRange merged = pages;
  for (; last != spans_.end() && last->first < pages.end; ++last) {
    merged.begin = std::min(merged.begin, last->first);
    merged.end = std::max(merged.end, last->second);
  }
  if (first != last && merged.begin == first->first && merged.end == first->second) {
    attached_regions_[own.id] = pages;  // already inside one span
    return TCA_SUCCESS;
  }

  // Grow into one span covering the region and the spans it touches; at the library's span
  // limit, also up to the nearest span, so that the count of spans does not grow.
  if (spans_.size() - static_cast<size_t>(std::distance(first, last)) + 1 > max_spans_ &&
      !spans_.empty())
    merged = hull_with_nearest_span(merged);
  std::vector<PageRange> replaced;
  for (const auto& span : spans_)
    if (span.first < merged.end && span.second > merged.begin)
      replaced.push_back({span.first, span.second});
  const tcaResult result =
      spans_.size() - replaced.size() + 1 > max_spans_
          ? record_error(TCA_ERROR_OUT_OF_RESOURCES, __FILE__, __LINE__,
                         fmt::format("{} spans of memory are attached to the MPI window, the most "
                                     "Open MPI's osc/rdma allows (raise "
                                     "OMPI_MCA_osc_rdma_max_attach)",
                                     spans_.size()))
          : replace_spans(replaced, merged);
  if (result == TCA_SUCCESS) {
    attached_regions_[own.id] = pages;
    return TCA_SUCCESS;
  }
  if (carries_default_traffic()) return append_frame(result, __FILE__, __LINE__);
  // Only a forced path could use the region through MPI: registration still succeeds, and a
  // peer's access to it fails with MPI_ERR_RMA_RANGE.
  const LogLevel level = warned_unreachable_ ? LogLevel::kInfo : LogLevel::kWarn;
  TCA_LOG(level, "mpi transport: region {} ({} bytes) is not reachable through MPI: {}", own.id,
          own.bytes, last_error_message());
  warned_unreachable_ = true;
  clear_last_error();
  return TCA_SUCCESS;
}

PageRange MpiTransport::hull_with_nearest_span(PageRange range) const {
  auto above = spans_.lower_bound(range.end);
  const uintptr_t gap_above = above != spans_.end() ? above->first - range.end : UINTPTR_MAX;
  uintptr_t gap_below = UINTPTR_MAX;
  auto below = spans_.lower_bound(range.begin);
  if (below != spans_.begin()) {
    --below;
    gap_below = below->second <= range.begin ? range.begin - below->second : 0;
  }
  if (gap_below <= gap_above && gap_below != UINTPTR_MAX)
    range.begin = below->first;
  else if (above != spans_.end())
    range.end = above->second;
  return range;
}

tcaResult MpiTransport::replace_spans(const std::vector<PageRange>& replaced, PageRange merged) {
  // Between the detaches and the attach a peer's access to the old spans would fail; that only
  // happens when a registration overlaps a region a peer is writing at that very moment.
  for (const PageRange& span : replaced) TCA_CHECK(detach_span(span.begin));
  const tcaResult result = attach_span(merged);
  if (result != TCA_SUCCESS) {
    for (const PageRange& span : replaced) attach_span(span);  // best effort: the error stands
    return append_frame(result, __FILE__, __LINE__);
  }
  return TCA_SUCCESS;
}

tcaResult MpiTransport::deregister_region(PeerRegion& own) {
  const auto found = attached_regions_.find(own.id);
  if (found == attached_regions_.end()) return TCA_SUCCESS;  // GPU, or never attached
  if (mpi_guard().abandoned()) return TCA_SUCCESS;  // MPI is closed: the window stays as it is
  const PageRange pages = found->second;
  attached_regions_.erase(found);

  auto span = spans_.upper_bound(pages.begin);
  if (span == spans_.begin() || std::prev(span)->second < pages.end)
    TCA_FAIL(TCA_ERROR_INTERNAL, "region {} is registered but no attached span holds it", own.id);
  --span;
  const PageRange old_span{span->first, span->second};
  // Shrink the span to the page-wise union of the registrations left in it, so that no memory
  // stays attached after its last registration is gone.
  std::vector<PageRange> remaining;
  for (const auto& entry : attached_regions_)
    if (entry.second.begin >= old_span.begin && entry.second.end <= old_span.end)
      remaining.push_back(entry.second);
  std::sort(remaining.begin(), remaining.end(),
            [](const PageRange& a, const PageRange& b) { return a.begin < b.begin; });
  std::vector<PageRange> coverage;
  for (const PageRange& range : remaining) {
    if (!coverage.empty() && range.begin < coverage.back().end)
      coverage.back().end = std::max(coverage.back().end, range.end);
    else
      coverage.push_back(range);
  }
  // Splitting must not take more spans than the library allows: then one span covers them all.
  if (!coverage.empty() && spans_.size() - 1 + coverage.size() > max_spans_) {
    coverage.front().end = coverage.back().end;
    coverage.resize(1);
  }
  if (coverage.size() == 1 && coverage[0].begin == old_span.begin &&
      coverage[0].end == old_span.end)
    return TCA_SUCCESS;
  TCA_CHECK(detach_span(old_span.begin));
  for (const PageRange& range : coverage) TCA_CHECK(attach_span(range));
  return TCA_SUCCESS;
}

tcaResult MpiTransport::region_alive(const PeerRegion& region, bool* alive) {
  if (region.owner == context_.rank()) {
    *alive = load_acquire(context_.control_block(), live_cell_offset(region.id)) == region.id;
    return TCA_SUCCESS;
  }
  TCA_CHECK(check_reachable(region.owner));
  return guarded(region.owner, "a liveness read", [&]() -> tcaResult {
    uint64_t value = 0;
    TCA_MPI_CHECK(MPI_Get(&value, 1, MPI_UINT64_T, region.owner, live_cell_disp(region), 1,
                          MPI_UINT64_T, window_),
                  "MPI_Get of the liveness of region {} of rank {}", region.id, region.owner);
    TCA_MPI_CHECK(MPI_Win_flush(region.owner, window_), "MPI_Win_flush to rank {}", region.owner);
    *alive = value == region.id;
    return TCA_SUCCESS;
  });
}

tcaResult MpiTransport::get_words(int owner, MPI_Aint disp, uint64_t* words, int count) {
  TCA_MPI_CHECK(MPI_Get(words, count, MPI_UINT64_T, owner, control_blocks_[owner] + disp, count,
                        MPI_UINT64_T, window_),
                "MPI_Get of {} words of the control block of rank {}", count, owner);
  TCA_MPI_CHECK(MPI_Win_flush(owner, window_), "MPI_Win_flush to rank {}", owner);
  return TCA_SUCCESS;
}

tcaResult MpiTransport::read_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                                    uint64_t* issued) {
  if (owner == context_.rank()) {
    *issued = load_acquire(context_.control_block(), issued_id_offset(context_.size()));
    *found = tca::read_record(context_.control_block(), id, out);
    return TCA_SUCCESS;
  }
  TCA_CHECK(check_reachable(owner));
  TCA_CHECK(context_.check_peer_alive(owner));
  return guarded(owner, "a region record read",
                 [&] { return read_remote_record(owner, id, out, found, issued); });
}

tcaResult MpiTransport::read_remote_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                                           uint64_t* issued) {
  // The id before and after the words, each read completed before the next is issued: the
  // owner writes the words only while the id is absent, so equal ids bracket a whole record.
  const auto record_disp = static_cast<MPI_Aint>(record_offset(id));
  uint64_t before = 0, after = 0;
  uint64_t words[kRecordWords] = {};
  TCA_CHECK(get_words(owner, static_cast<MPI_Aint>(issued_id_offset(context_.size())), issued, 1));
  TCA_CHECK(get_words(owner, record_disp, &before, 1));
  *found = before == id;
  if (!*found) return TCA_SUCCESS;
  TCA_CHECK(get_words(owner, record_disp, words, static_cast<int>(kRecordWords)));
  TCA_CHECK(get_words(owner, record_disp, &after, 1));
  *found = after == id && words[0] == id;
  if (*found) *out = decode_record(words);
  return TCA_SUCCESS;
}

tcaResult MpiTransport::announce(int owner, bool done) {
  uint64_t& sequence = sequences_[owner];
  if (!done) ++sequence;
  const auto cell = control_blocks_[owner] + static_cast<MPI_Aint>(inflight_cell_offset(
                                                 context_.size(), context_.rank(), id(), done));
  // Accumulate, like notifications: the owner reads the cell while it may change.
  TCA_MPI_CHECK(MPI_Accumulate(&sequence, 1, MPI_UINT64_T, owner, cell, 1, MPI_UINT64_T,
                               MPI_REPLACE, window_),
                "MPI_Accumulate of the in-flight cell at rank {}", owner);
  return TCA_SUCCESS;
}

tcaResult MpiTransport::prepare(const std::vector<Transfer>& run,
                                std::unique_ptr<PreparedRun>* out) {
  auto prepared = std::make_unique<MpiRun>(*this);
  for (const Transfer& transfer : run) TCA_CHECK(prepared->add(transfer));
  *out = std::move(prepared);
  return TCA_SUCCESS;
}

tcaResult MpiTransport::raise_slot(int peer, int slot, uint64_t value) {
  if (peer == context_.rank()) {  // only this rank writes its own cells for itself
    __atomic_store_n(
        reinterpret_cast<uint64_t*>(context_.control_block() + notify_cell_offset(peer, slot)),
        value, __ATOMIC_RELEASE);
    return TCA_SUCCESS;
  }
  const MPI_Aint cell =
      control_blocks_[peer] + static_cast<MPI_Aint>(notify_cell_offset(context_.rank(), slot));
  // Accumulate, not put: atomic with respect to the other accumulates on the same cell.
  TCA_MPI_CHECK(
      MPI_Accumulate(&value, 1, MPI_UINT64_T, peer, cell, 1, MPI_UINT64_T, MPI_REPLACE, window_),
      "MPI_Accumulate of notification slot {} at rank {}", slot, peer);
  TCA_MPI_CHECK(MPI_Win_flush(peer, window_), "MPI_Win_flush of notification slot {} at rank {}",
                slot, peer);
  if (static_cast<size_t>(peer) < wake_maps_.size() && wake_maps_[peer].data() != nullptr)
    wake_sleepers(wake_maps_[peer].data(), context_.size());
  return TCA_SUCCESS;
}

tcaResult MpiTransport::notify(int peer, int slot, uint64_t value) {
  TCA_CHECK(check_reachable(peer));
  if (peer == context_.rank()) return raise_slot(peer, slot, value);
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

// ---------------------------------------------------------------- prepared runs

tcaResult MpiRun::add(const Transfer& transfer) {
  const PeerRegion& dst = *transfer.dst;
  const PeerRegion& src = *transfer.src;
  if (dst.kind != TCA_MEM_CPU || src.kind != TCA_MEM_CPU)
    TCA_FAIL(TCA_ERROR_UNSUPPORTED,
             "transfer between region {} of rank {} and region {} of rank "
             "{}: the mpi transport carries host memory only",
             src.id, src.owner, dst.id, dst.owner);
  const int me = transport_.context().rank();
  const bool dst_local = dst.owner == me;
  const bool src_local = src.owner == me;
  if ((dst_local && dst.mapped == nullptr) || (src_local && src.mapped == nullptr))
    TCA_FAIL(TCA_ERROR_INTERNAL, "a region of this rank has no local mapping");

  if (dst_local && src_local) {
    const bool contiguous =
        transfer.dst_pitch == transfer.width && transfer.src_pitch == transfer.width;
    const uint64_t width = contiguous ? transfer.width * transfer.count : transfer.width;
    steps_.push_back(CopyStep{dst.mapped + transfer.dst_offset, src.mapped + transfer.src_offset,
                              transfer.dst_pitch, transfer.src_pitch, width,
                              contiguous ? 1 : transfer.count});
  } else if (src_local) {
    TCA_CHECK(add_rma(true, dst, transfer.dst_offset, transfer.dst_pitch,
                      src.mapped + transfer.src_offset, transfer.src_pitch, transfer.width,
                      transfer.count));
  } else if (dst_local) {
    TCA_CHECK(add_rma(false, src, transfer.src_offset, transfer.src_pitch,
                      dst.mapped + transfer.dst_offset, transfer.dst_pitch, transfer.width,
                      transfer.count));
  } else {
    TCA_FAIL(TCA_ERROR_INTERNAL, "neither end of the transfer is on rank {}", me);
  }

  if (transfer.flags & TCA_FLAG_NOTIFY)
    steps_.push_back(NotifyStep{dst.owner, transfer.slot, targets_});
  for (int rank : {dst.owner, src.owner})
    if (rank != me && std::find(involved_.begin(), involved_.end(), rank) == involved_.end())
      involved_.push_back(rank);
  return TCA_SUCCESS;
}

tcaResult MpiRun::add_rma(bool is_put, const PeerRegion& remote, uint64_t remote_offset,
                          uint64_t remote_pitch, unsigned char* local, uint64_t local_pitch,
                          uint64_t width, uint64_t count) {
  TCA_CHECK(transport_.check_reachable(remote.owner));
  const bool probed = std::any_of(probes_.begin(), probes_.end(),
                                  [&](const LivenessProbe& p) { return p.region == &remote; });
  if (!probed) {
    probes_.push_back({&remote, transport_.live_cell_disp(remote)});
    probe_values_.push_back(0);
    if (std::find(probe_targets_.begin(), probe_targets_.end(), remote.owner) ==
        probe_targets_.end())
      probe_targets_.push_back(remote.owner);
  }
  if (std::find(targets_.begin(), targets_.end(), remote.owner) == targets_.end())
    targets_.push_back(remote.owner);

  if (width == 0) return TCA_SUCCESS;
  const MPI_Aint remote_base = static_cast<MPI_Aint>(remote.address + remote_offset);
  if (count == 1 || (local_pitch == width && remote_pitch == width)) {
    add_contiguous(is_put, remote, remote_base, local, width * count);
    return TCA_SUCCESS;
  }
  if (width > kMaxBytesPerCall) {  // rows too wide for one call: each row on its own
    for (uint64_t row = 0; row < count; ++row)
      add_contiguous(is_put, remote, remote_base + static_cast<MPI_Aint>(row * remote_pitch),
                     local + row * local_pitch, width);
    return TCA_SUCCESS;
  }
  // Groups of rows, each one strided datatype per side: one MPI call per group.
  const uint64_t rows_per_call = std::min(count, kMaxBytesPerCall / width);
  Layout local_layout, remote_layout;
  uint64_t layout_rows = 0;
  for (uint64_t row = 0; row < count; row += rows_per_call) {
    const uint64_t rows = std::min(rows_per_call, count - row);
    if (rows != layout_rows) {  // the first group, or a shorter last one
      TCA_CHECK(make_layout(rows, width, local_pitch, &local_layout));
      TCA_CHECK(make_layout(rows, width, remote_pitch, &remote_layout));
      layout_rows = rows;
    }
    RmaStep step;
    step.is_put = is_put;
    step.target = remote.owner;
    step.local = local + row * local_pitch;
    step.local_layout = local_layout;
    step.target_disp = remote_base + static_cast<MPI_Aint>(row * remote_pitch);
    step.target_layout = remote_layout;
    step.bytes = rows * width;
    step.remote = &remote;
    steps_.push_back(step);
  }
  return TCA_SUCCESS;
}

void MpiRun::add_contiguous(bool is_put, const PeerRegion& remote, MPI_Aint target_disp,
                            unsigned char* local, uint64_t bytes) {
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t chunk = std::min(bytes - done, kMaxBytesPerCall);
    const Layout layout{MPI_BYTE, static_cast<int>(chunk)};
    steps_.push_back(RmaStep{is_put, remote.owner, local + done, layout,
                             target_disp + static_cast<MPI_Aint>(done), layout, chunk, &remote});
    done += chunk;
  }
}

tcaResult MpiRun::make_layout(uint64_t rows, uint64_t width, uint64_t pitch, Layout* out) {
  if (rows == 1 || pitch == width) {  // contiguous on this side
    *out = Layout{MPI_BYTE, static_cast<int>(rows * width)};
    return TCA_SUCCESS;
  }
  if (mpi_guard().abandoned())
    TCA_FAIL(TCA_ERROR_PEER_FAILED,
             "the mpi path is closed: an MPI call was abandoned when a "
             "rank died during it");
  MPI_Datatype type;
  TCA_MPI_CHECK(MPI_Type_create_hvector(static_cast<int>(rows), static_cast<int>(width),
                                        static_cast<MPI_Aint>(pitch), MPI_BYTE, &type),
                "MPI_Type_create_hvector of {} blocks of {} bytes at pitch {}", rows, width, pitch);
  datatypes_.emplace_back(type);
  TCA_MPI_CHECK(MPI_Type_commit(&type), "MPI_Type_commit of a {}-block vector", rows);
  *out = Layout{type, 1};
  return TCA_SUCCESS;
}

tcaResult MpiRun::check_liveness() {
  const MPI_Win window = transport_.window();
  for (size_t i = 0; i < probes_.size(); ++i) {
    const PeerRegion& region = *probes_[i].region;
    TCA_MPI_CHECK(MPI_Get(&probe_values_[i], 1, MPI_UINT64_T, region.owner, probes_[i].cell_disp, 1,
                          MPI_UINT64_T, window),
                  "MPI_Get of the liveness of region {} of rank {}", region.id, region.owner);
  }
  for (int target : probe_targets_)
    TCA_MPI_CHECK(MPI_Win_flush(target, window), "MPI_Win_flush to rank {}", target);
  for (size_t i = 0; i < probes_.size(); ++i) {
    const PeerRegion& region = *probes_[i].region;
    if (probe_values_[i] != region.id)
      TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is freed", region.id, region.owner);
  }
  return TCA_SUCCESS;
}

tcaResult MpiRun::run_rma(const RmaStep& step) {
  const MPI_Win window = transport_.window();
  if (step.is_put) {
    TCA_MPI_CHECK(
        MPI_Put(step.local, step.local_layout.count, step.local_layout.type, step.target,
                step.target_disp, step.target_layout.count, step.target_layout.type, window),
        "MPI_Put of {} bytes into region {} of rank {}", step.bytes, step.remote->id, step.target);
  } else {
    TCA_MPI_CHECK(
        MPI_Get(step.local, step.local_layout.count, step.local_layout.type, step.target,
                step.target_disp, step.target_layout.count, step.target_layout.type, window),
        "MPI_Get of {} bytes from region {} of rank {}", step.bytes, step.remote->id, step.target);
  }
  return TCA_SUCCESS;
}

tcaResult MpiRun::run_notify(const NotifyStep& step) {
  for (int target : step.earlier_targets)
    TCA_MPI_CHECK(MPI_Win_flush(target, transport_.window()),
                  "MPI_Win_flush to rank {} before notifying", target);
  const uint64_t value = transport_.context().next_notify_value(step.peer, step.slot);
  return transport_.raise_slot(step.peer, step.slot, value);
}

tcaResult MpiRun::start() {
  // A dead peer of this host is noticed before any RMA to it (MPI may block on it forever).
  for (int target : probe_targets_) TCA_CHECK(transport_.context().check_peer_alive(target));
  if (involved_.empty()) return run_announced();  // copies inside this rank: no MPI call
  return guarded(&involved_, "a transfer", [&] { return run_announced(); });
}

tcaResult MpiRun::run_announced() {
  TCA_CHECK(announce(false));
  const tcaResult result = run_steps();
  const tcaResult ended = announce(true);
  if (result != TCA_SUCCESS) return append_frame(result, __FILE__, __LINE__);
  return ended == TCA_SUCCESS ? TCA_SUCCESS : append_frame(ended, __FILE__, __LINE__);
}

// Announces the run to the owners of the remote regions it touches (begun), or its end (done,
// after every operation of the run is complete at its target). Each completes at its owner
// before this returns, so an owner withdrawing a region either waits for the run or the run
// sees the region withdrawn.
tcaResult MpiRun::announce(bool done) {
  if (probe_targets_.empty()) return TCA_SUCCESS;
  const MPI_Win window = transport_.window();
  if (done)
    for (int target : targets_)
      TCA_MPI_CHECK(MPI_Win_flush(target, window), "MPI_Win_flush to rank {}", target);
  for (int target : probe_targets_) TCA_CHECK(transport_.announce(target, done));
  for (int target : probe_targets_)
    TCA_MPI_CHECK(MPI_Win_flush(target, window), "MPI_Win_flush to rank {}", target);
  return TCA_SUCCESS;
}

tcaResult MpiRun::run_steps() {
  TCA_CHECK(check_liveness());
  for (const Step& step : steps_) {
    if (const auto* rma = std::get_if<RmaStep>(&step)) {
      TCA_CHECK(run_rma(*rma));
    } else if (const auto* copy = std::get_if<CopyStep>(&step)) {
      // memmove: a region may be copied onto an overlapping part of itself.
      for (uint64_t row = 0; row < copy->count; ++row)
        std::memmove(copy->dst + row * copy->dst_pitch, copy->src + row * copy->src_pitch,
                     copy->width);
    } else {
      TCA_CHECK(run_notify(std::get<NotifyStep>(step)));
    }
  }
  return TCA_SUCCESS;
}

tcaResult MpiRun::wait() {
  if (targets_.empty()) return TCA_SUCCESS;
  return guarded(&targets_, "waiting for a transfer", [&]() -> tcaResult {
    for (int target : targets_)
      TCA_MPI_CHECK(MPI_Win_flush(target, transport_.window()), "MPI_Win_flush to rank {}", target);
    return TCA_SUCCESS;
  });
}

}  // namespace

tcaResult make_mpi_transport(Context& context, int id,
                             std::vector<std::unique_ptr<Transport>>* out) {
  // MPI_COMM_WORLD is this job only where MPI started it; otherwise other transports carry it.
  if (!context.bootstrap().is_mpi()) return TCA_SUCCESS;
  auto transport = std::make_unique<MpiTransport>(context, id);
  TCA_CHECK(transport->init());
  out->push_back(std::move(transport));
  return TCA_SUCCESS;
}

}  // namespace tca
