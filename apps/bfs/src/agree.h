// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Errors that every rank agrees on: a failure found by one rank (a bad record in its share of a
// file, a failed allocation) must end every rank, with one message, instead of leaving the
// others waiting in the next collective.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "common.h"

namespace bfs {

// Collective. `failure` is empty where this rank is fine; if any rank's is not, every rank
// throws AgreedError with the message of the lowest failing rank.
void agree(const std::string& failure);

// Collective: the non-empty `text` of the lowest rank that has one ("" if none has).
std::string first_message(const std::string& text);

// Collective: runs `body`; an exception it throws on any rank becomes an AgreedError on every
// rank.
template <class Body>
void collectively(Body&& body) {
  std::string failure;
  try {
    body();
  } catch (const std::bad_alloc&) {
    failure = "out of host memory";
  } catch (const std::exception& e) {
    failure = e.what();
    if (failure.empty()) failure = "unknown error";
  }
  agree(failure);
}

}  // namespace bfs
