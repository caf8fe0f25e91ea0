// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A prepared run of the mpi transport: its steps (puts, gets, local copies, notifications), the
// derived datatypes they use and the liveness probes read before every start.
#pragma once

#include <variant>
#include <vector>

#include "transport/mpi/mpi_transport.h"

namespace tca::mpi {

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
}  // namespace tca::mpi
