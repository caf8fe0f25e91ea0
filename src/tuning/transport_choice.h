// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The choice between transports by size. Where several transports reach a class of peers for
// the same memory kinds (cuda and ucx inside a host, mpi and ucx between hosts, shm and mpi
// inside a host), a ping-pong at start-up times each at a few sizes between rank 0 and one peer
// of the class; each size then takes the fastest, and sizes in between the pick of the nearest
// measured size below. The tables are cached per machine, like the CUDA engine calibration
// (tuning/engine_choice.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tca/tca.h"
#include "tuning/size_table.h"

namespace tca {

// From `from_bytes` on (until the next step), transfers take transport id `value`.
using ChoiceStep = tuning::SizeStep<int>;

struct ChoiceTable : tuning::SizeTable<int> {  // the first step from 0
  // The transport for a transfer of `bytes` (-1 for an empty table).
  int pick(uint64_t bytes) const { return SizeTable::pick(bytes, -1); }
};

// The sizes the start-up ping-pong measures.
const std::vector<uint64_t>& choice_sizes();

// The table of one class from one-way times (`micros[c][s]` for candidate c, in preference
// order, at size s of `sizes`): each size takes the fastest candidate, but a later candidate
// replaces an earlier one only where it is faster by more than `margin` (0.03: 3%), so noise
// never trades the preferred transport for one that is barely faster.
ChoiceTable choose_by_size(const std::vector<uint64_t>& sizes, const std::vector<int>& candidates,
                           const std::vector<std::vector<double>>& micros, double margin = 0.03);

// "0:2,4096:5" (from_bytes:transport id, ...) and back; bad text is an error naming it.
std::string encode_table(const ChoiceTable& table);
tcaResult decode_table(const std::string& text, int transports, ChoiceTable* out);

// The cache: lines "KEY TABLE" after a first line "tca-transport-choice 1". Keys name the
// class and its candidates by transport name, so a build with other transports measures anew.
class ChoiceCache {
 public:
  // A missing file, or one of another format, is an empty cache; a malformed line is an error.
  tcaResult load(const std::string& path, int transports);
  const ChoiceTable* find(const std::string& key) const;
  void set(const std::string& key, const ChoiceTable& table) { tables_[key] = table; }
  // Written to a temporary file and renamed, so readers never see half a file.
  tcaResult save(const std::string& path) const;

 private:
  std::map<std::string, ChoiceTable> tables_;
};

// $TCA_CHOICE_FILE, else ${XDG_CACHE_HOME:-$HOME/.cache}/tca/choice-<hostname>.txt ("" where
// there is no home).
std::string choice_cache_path();

}  // namespace tca
