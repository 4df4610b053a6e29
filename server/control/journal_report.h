// The live journal as the control API serves it: GET /journal (JSON, or a
// table with format=text, which `nvj journal top` shows), and the totals
// that GET /metrics adds.
#pragma once

#include <string>

#include "server/lab/lab.h"

namespace nvj {

std::string journal_json(const Lab& lab);
std::string journal_text(const Lab& lab);
// Prometheus families; empty without a tracer.
std::string journal_prometheus(const Lab& lab);

}  // namespace nvj
