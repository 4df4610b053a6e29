// The lab's statistics as the control API serves them: JSON (GET /stats),
// Prometheus text (GET /metrics) and a table for people (GET
// /stats?format=text, nvj stats, and the summary nbdkit prints at exit).
#pragma once

#include <string>
#include <string_view>

#include "common/json.h"
#include "server/lab/lab.h"

namespace nvj {

// GET /stats; its shape is docs/schemas/stats.schema.json.
Json stats_json(const Lab& lab);
std::string stats_prometheus(const Lab& lab);
std::string stats_text(const Lab& lab);

// A JSON string literal. Kept only for nvj journal inspect --json, which
// still writes its JSON from a format string; remove it once that writes
// through nvj::Json.
std::string json_quote(std::string_view text);

}  // namespace nvj
