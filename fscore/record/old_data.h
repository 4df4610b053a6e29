// SPDX-License-Identifier: BSD-3-Clause
// Old data: what a disk that was used before holds where nothing has been
// written since, as nvjournal stands it in. A filesystem made with its free
// blocks holding old data (the plugin's fs-free=old-data) shows, after a
// crash, whether a file reads blocks that nothing wrote for it: the stale
// data that data=ordered exists to keep out, as another user's deleted file
// would be. Pure.
//
// The text is the same 512-byte sector over and over, so that any run of
// whole sectors of it is the same bytes wherever it lies: a recording keeps
// such a run of its starting contents as an offset and a length
// (recording_format.h, a base frame with kOldData), not as the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace fscore::record {

inline constexpr std::size_t kOldDataSector = 512;

// The first `length` bytes of old data (at most kOldDataSpan): a span over
// a buffer that lives as long as the program.
inline constexpr std::size_t kOldDataSpan = std::size_t{1} << 20;
std::span<const std::uint8_t> old_data(std::size_t length);

// Whether `bytes` (whole sectors) are old data.
bool is_old_data(std::span<const std::uint8_t> bytes);

}  // namespace fscore::record
