// The lab's statistics as the control API serves them: JSON (GET /stats),
// Prometheus text (GET /metrics) and a table for people (GET
// /stats?format=text, nvj stats, and the summary nbdkit prints at exit).
#pragma once

#include <string>

#include "server/lab/lab.h"

namespace nvj {

std::string stats_json(const Lab& lab);
std::string stats_prometheus(const Lab& lab);
std::string stats_text(const Lab& lab);

// A JSON string literal, escaped.
std::string json_quote(std::string_view text);

}  // namespace nvj
