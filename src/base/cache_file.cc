// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "base/cache_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/error.h"
#include "base/settings.h"

namespace tca {

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

std::string cache_file(const char* setting, const char* stem, const char* extension) {
  std::string file;
  if (setting_text(setting, &file) == TCA_SUCCESS && !file.empty()) return file;
  clear_last_error();
  std::string base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    base = std::string(home) + "/.cache";
  } else {
    return "";
  }
  return base + "/tca/" + stem + "-" + host_name() + extension;
}

tcaResult make_parent_folders(const std::string& file) {
  for (size_t slash = file.find('/', 1); slash != std::string::npos;
       slash = file.find('/', slash + 1)) {
    const std::string folder = file.substr(0, slash);
    if (mkdir(folder.c_str(), 0755) != 0 && errno != EEXIST)
      TCA_FAIL(TCA_ERROR_TRANSPORT, "cannot create {}: {}", folder, std::strerror(errno));
  }
  return TCA_SUCCESS;
}

}  // namespace tca
