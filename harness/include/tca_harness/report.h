// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The JSON report of a run: one object on stdout (with --json), holding the program's name,
// its own fields, the rows and the notes ('#' lines of the table that say what was skipped).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tca_harness/table.h"

namespace tca_harness {

class Report {
 public:
  // The object starts {"<key>": program}; a report that is not `active` prints nothing.
  explicit Report(const std::string& program, bool active = true,
                  const std::string& key = "benchmark");

  // A field after the program's name, in the order set (setting it again replaces the value).
  void set(const std::string& key, nlohmann::ordered_json value);
  void add_row(nlohmann::ordered_json row);
  void add_note(const std::string& text);  // once: a note already there is not added again

  const std::vector<nlohmann::ordered_json>& rows() const { return rows_; }
  const std::vector<std::string>& notes() const { return notes_; }

  // {"<key>": program, fields..., "rows": [...], "notes": [...] (only when there are notes)}.
  nlohmann::ordered_json document() const;
  // The document, indented, on stdout, with where, when and how the run was made after the
  // program's fields (those it did not set itself): "date" (UTC, ISO 8601), "host", "cpu",
  // "gpus" (where gpu_lister is set and devices exist) and "command_line".
  void print() const;
  static nlohmann::ordered_json run_description();

 private:
  nlohmann::ordered_json with_rows(nlohmann::ordered_json head) const;
  nlohmann::ordered_json head_;
  std::vector<nlohmann::ordered_json> rows_;
  std::vector<std::string> notes_;
  bool active_;
};

// Names the GPUs this process sees, for the run description. Set where the harness has its CUDA
// part (src/gpus.cc, compiled into every program that links tca_harness in CUDA builds); null in
// programs without it (tca-sim), whose reports name no GPUs.
using GpuLister = std::vector<std::string> (*)();
extern GpuLister gpu_lister;

// Something that did not run (a reference that cannot start here, a path the ranks lack):
// a '#' line in the table and a note in the report. The run goes on.
void skip_note(const Table& table, Report& report, const std::string& text);

}  // namespace tca_harness
