// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Files tca keeps between runs (the CUDA engine calibration, the choice between transports): one
// per machine, in the user's cache folder, each movable by a setting.
#pragma once

#include <string>

#include "tca/tca.h"

namespace tca {

// The file the setting `setting` names, else ${XDG_CACHE_HOME:-$HOME/.cache}/tca/
// <stem>-<hostname><extension>; "" where there is no home.
std::string cache_file(const char* setting, const char* stem, const char* extension);
// Makes every folder above `file` that is missing.
tcaResult make_parent_folders(const std::string& file);
// This machine's hostname.
std::string host_name();

}  // namespace tca
