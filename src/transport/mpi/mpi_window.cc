// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The mpi transport's window: registered regions attached to it as disjoint whole-page spans
// (MPI forbids overlapping attachments), merged into hulls at Open MPI's attach limit.
#include "transport/mpi/mpi_transport.h"

namespace tca::mpi {

void MpiTransport::release_window() {
  if (locked_ && MPI_Win_unlock_all(window_) != MPI_SUCCESS)
    TCA_WARN("mpi transport: MPI_Win_unlock_all failed at finalize");
  if (window_ != MPI_WIN_NULL) {
    for (const auto& span : spans_) MPI_Win_detach(window_, reinterpret_cast<void*>(span.first));
    if (control_block_attached_) MPI_Win_detach(window_, job_.control_block());
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

}  // namespace tca::mpi
