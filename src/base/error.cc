// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "base/error.h"

#include <cstring>

namespace tca {
namespace {
thread_local std::string g_last_error;

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}
}  // namespace

tcaResult record_error(tcaResult code, const char* file, int line, const std::string& message) {
  g_last_error =
      fmt::format("{}: {} [{}:{}]", tcaGetErrorString(code), message, base_name(file), line);
  return code;
}

tcaResult append_frame(tcaResult code, const char* file, int line) {
  if (g_last_error.empty()) g_last_error = tcaGetErrorString(code);
  g_last_error += fmt::format(" <- {}:{}", base_name(file), line);
  return code;
}

void clear_last_error() { g_last_error.clear(); }

tcaResult adopt_error(tcaResult code, const std::string& message) {
  g_last_error = message.empty() ? std::string(tcaGetErrorString(code)) : message;
  return code;
}

ErrorKeeper::~ErrorKeeper() { g_last_error = kept_; }

const char* last_error_message() { return g_last_error.c_str(); }

}  // namespace tca

extern "C" const char* tcaGetErrorString(tcaResult result) {
  switch (result) {
    case TCA_SUCCESS:
      return "success";
    case TCA_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case TCA_ERROR_NOT_INITIALIZED:
      return "tca is not initialized";
    case TCA_ERROR_ALREADY_INITIALIZED:
      return "tca is already initialized";
    case TCA_ERROR_OUT_OF_MEMORY:
      return "out of memory";
    case TCA_ERROR_OUT_OF_RESOURCES:
      return "out of resources";
    case TCA_ERROR_OUT_OF_BOUNDS:
      return "transfer outside the registered region";
    case TCA_ERROR_SIZE_OVERFLOW:
      return "offset or size overflows";
    case TCA_ERROR_INVALID_HANDLE:
      return "handle is corrupted or forged";
    case TCA_ERROR_FOREIGN_HANDLE:
      return "handle belongs to another job";
    case TCA_ERROR_FREED_HANDLE:
      return "handle refers to a freed region";
    case TCA_ERROR_INVALID_CHANNEL:
      return "no such DMA channel";
    case TCA_ERROR_INVALID_DESC:
      return "invalid descriptor";
    case TCA_ERROR_INVALID_RANK:
      return "no such rank";
    case TCA_ERROR_INVALID_SLOT:
      return "no such notification slot";
    case TCA_ERROR_UNREACHABLE:
      return "peer unreachable on this path";
    case TCA_ERROR_UNSUPPORTED:
      return "unsupported";
    case TCA_ERROR_TIMEOUT:
      return "timed out";
    case TCA_ERROR_PEER_FAILED:
      return "peer process failed";
    case TCA_ERROR_TRANSPORT:
      return "transport failure";
    case TCA_ERROR_INTERNAL:
      return "internal error";
  }
  return "unknown tcaResult";
}

extern "C" const char* tcaGetLastErrorMessage(void) { return tca::last_error_message(); }
