// SPDX-License-Identifier: BSD-3-Clause
// The lab's statistics as the control API serves them: JSON (GET /stats),
// Prometheus text (GET /metrics) and a table for people (GET
// /stats?format=text, nvj stats, and the summary nbdkit prints at exit).
#pragma once

#include <string>

#include "common/json.h"
#include "server/lab/lab.h"

namespace nvj {

// GET /stats; its shape is docs/schemas/stats.schema.json.
Json stats_json(const Lab& lab);
std::string stats_prometheus(const Lab& lab);
std::string stats_text(const Lab& lab);

}  // namespace nvj
