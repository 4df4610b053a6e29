// SPDX-License-Identifier: BSD-3-Clause
// The live journal for people and Prometheus: GET /journal?format=text (the
// table `nvj journal top` shows) and the totals GET /metrics adds. Its JSON
// (GET /journal, trace-file=) is server/probe/journal_json.h.
#pragma once

#include <string>

#include "server/lab/lab.h"

namespace nvj {

std::string journal_text(const Lab& lab);
// Prometheus families; empty without a tracer.
std::string journal_prometheus(const Lab& lab);

}  // namespace nvj
