// One transaction as a JSON object: a line of trace-file= and an entry of
// GET /journal's "recent". Times are microseconds since `epoch`.
#pragma once

#include <cstdint>
#include <string>

#include "fscore/jbd2/journal_decoder.h"
#include "common/clock.h"

namespace nvj {

std::string transaction_json(const fscore::jbd2::Transaction& t, std::uint32_t block_size, Nanos epoch,
                             double fill_after);

}  // namespace nvj
