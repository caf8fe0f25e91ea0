// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Error reporting of the collectives. Data movement, memory and synchronization go through
// the public API only (tca.h); failures are recorded in tca's own last-error slot (TCA_FAIL,
// TCA_CHECK) so that tcaGetLastErrorMessage() explains a failed collective call like any
// other tca call. This header is the collectives' only way into the library's internals.
#pragma once

#include "base/error.h"
