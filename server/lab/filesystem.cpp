// SPDX-License-Identifier: BSD-3-Clause
#include "server/lab/filesystem.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "fscore/ext4/geometry.h"
#include "fscore/ext4/image_reader.h"
#include "fscore/ext4/journal_device.h"
#include "fscore/record/old_data.h"
#include "common/size.h"
#include "server/lab/host_tree.h"
#include "server/lab/store_image.h"

namespace nvj {
namespace {

using fscore::ext4::ImageBuilder;
using fscore::ext4::ImageOptions;
using fscore::ext4::JournalKind;

fscore::Uuid random_uuid() {
  std::random_device random;
  std::array<std::uint8_t, 16> bytes{};
  for (std::size_t i = 0; i < bytes.size(); i += 4) {
    const std::uint32_t r = random();
    for (std::size_t k = 0; k < 4; ++k) bytes[i + k] = static_cast<std::uint8_t>(r >> (8 * k));
  }
  return fscore::make_random_uuid(bytes);
}

fscore::ext4::Timestamp now() {
  const auto t = std::chrono::system_clock::now().time_since_epoch();
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t).count();
  return {ns / 1000000000, static_cast<std::uint32_t>(ns % 1000000000)};
}

// Old data in each free block of a new filesystem (fs-free=old-data);
// returns the bytes written.
std::uint64_t write_old_data(const fscore::ext4::ImageLayout& layout, fscore::BlockSink& sink) {
  const std::uint64_t block = layout.geometry.block_size;
  std::uint64_t written = 0;
  for (const fscore::ext4::BlockRun& run : layout.free_runs) {
    for (std::uint64_t at = run.start * block, end = (run.start + run.count) * block; at < end;) {
      const std::uint64_t n = std::min<std::uint64_t>(end - at, fscore::record::kOldDataSpan);
      sink.write(at, fscore::record::old_data(static_cast<std::size_t>(n)));
      at += n;
      written += n;
    }
  }
  return written;
}

// Builds the images; with a null sink, a dry run that only checks the tree fits.
FilesystemState build(const FilesystemSpec& spec, const ImageOptions& options, fscore::BlockSink* data_sink) {
  ImageBuilder builder(options, data_sink);
  FilesystemState state;
  if (spec.populate) {
    HostTree tree(*spec.populate);
    state.populated = fscore::ext4::populate(builder, tree);
  }
  const fscore::ext4::ImageLayout layout = builder.finish();
  state.origin = FilesystemState::Origin::formatted;
  state.journal = spec.journal;
  state.block_size = layout.geometry.block_size;
  state.blocks = layout.geometry.blocks;
  state.uuid = options.uuid;
  state.label = options.label;
  for (const auto& run : layout.journal_runs)
    state.journal_region.emplace_back(run.start * state.block_size, run.count * state.block_size);
  if (spec.free_old_data && data_sink != nullptr) state.old_data_bytes = write_old_data(layout, *data_sink);
  return state;
}

FilesystemState format(const FilesystemSpec& spec, Store& data, Store* journal) {
  std::uint32_t block_size = spec.block_size;
  if (block_size == 0 && spec.sector_size > 1024)
    block_size = std::max(spec.sector_size, fscore::ext4::plan_geometry({.device_bytes = data.size()}).block_size);
  ImageOptions options;
  options.device_bytes = data.size();
  options.block_size = block_size;
  options.uuid = spec.uuid.value_or(random_uuid());
  options.hash_seed = random_uuid();
  options.label = spec.label;
  options.now = now();
  const fscore::ext4::Geometry geometry =
      fscore::ext4::plan_geometry({.device_bytes = data.size(), .block_size = block_size});
  fscore::ext4::JournalDeviceOptions device;
  switch (spec.journal) {
    case JournalPlacement::none: options.journal = JournalKind::kNone; break;
    case JournalPlacement::internal:
      options.journal = JournalKind::kInternal;
      if (spec.internal_journal_bytes) options.journal_blocks = *spec.internal_journal_bytes / geometry.block_size;
      break;
    case JournalPlacement::external:
      if (journal == nullptr) throw FilesystemError("an external journal needs a journal export");
      options.journal = JournalKind::kExternal;
      device.device_bytes = journal->size();
      device.block_size = geometry.block_size;
      device.uuid = random_uuid();
      device.hash_seed = random_uuid();
      device.now = options.now;
      device.users = {options.uuid};
      fscore::ext4::plan_journal_device(device.device_bytes, device.block_size);  // checks the size
      options.external_journal_uuid = device.uuid;
      break;
  }
  // A dry run where a failure half-way would leave something written: a
  // tree that does not fit, or stores cleared for a forced format.
  if (spec.populate || spec.force) build(spec, options, nullptr);
  if (spec.force) {
    clear_store(data);
    if (journal != nullptr && spec.journal == JournalPlacement::external) clear_store(*journal);
  }
  StoreSink data_sink(data);
  FilesystemState state = build(spec, options, &data_sink);
  state.bytes_written = data_sink.bytes_written();
  if (spec.journal == JournalPlacement::external) {
    StoreSink journal_sink(*journal);
    fscore::ext4::build_journal_device(device, journal_sink);
    state.bytes_written += journal_sink.bytes_written();
    journal->flush();
  }
  data.flush();
  return state;
}

}  // namespace

std::string FilesystemState::describe() const {
  if (origin == Origin::blank) return "no filesystem (blank)";
  std::string text = "ext4, " + format_size(block_size) + " blocks, " + format_size(blocks * block_size);
  switch (journal) {
    case JournalPlacement::none: text += ", no journal"; break;
    case JournalPlacement::external: text += ", external journal"; break;
    case JournalPlacement::internal: {
      std::uint64_t bytes = 0;
      for (const auto& r : journal_region) bytes += r.second;
      text += ", internal journal of " + format_size(bytes);
      break;
    }
  }
  if (old_data_bytes > 0) text += ", old data in " + format_size(old_data_bytes) + " of free blocks";
  return text + (origin == Origin::formatted ? " (formatted)" : " (existing)");
}

FilesystemState read_filesystem(Store& data, Store* journal) {
  StoreSource source(data);
  fscore::ext4::ImageInfo info;
  try {
    info = fscore::ext4::read_image(source);
  } catch (const std::exception& e) {
    throw FilesystemError(std::string("holds an ext4 signature but cannot be served: ") + e.what());
  }
  if (info.journal_device) throw FilesystemError("holds an external journal device, not a filesystem");
  FilesystemState state;
  state.origin = FilesystemState::Origin::existing;
  state.block_size = info.block_size;
  state.blocks = info.blocks;
  state.uuid = info.super.uuid;
  state.label = info.super.volume_name;
  switch (info.journal) {
    case JournalKind::kNone: state.journal = JournalPlacement::none; break;
    case JournalKind::kInternal:
      state.journal = JournalPlacement::internal;
      for (const auto& run : info.journal_runs) {
        state.journal_region.emplace_back(run.start * info.block_size, run.count * info.block_size);
      }
      break;
    case JournalKind::kExternal: {
      state.journal = JournalPlacement::external;
      if (journal == nullptr)
        throw FilesystemError("holds an ext4 whose journal is external (uuid " +
                              fscore::format_uuid(info.super.journal_uuid) + "), and there is no journal export");
      StoreSource journal_source(*journal);
      fscore::ext4::ImageInfo j;
      try {
        j = fscore::ext4::read_image(journal_source);
      } catch (const std::exception& e) {
        throw FilesystemError("the journal export does not hold this filesystem's journal: " + std::string(e.what()));
      }
      if (!j.journal_device || j.super.uuid != info.super.journal_uuid)
        throw FilesystemError("the journal export does not hold this filesystem's journal (uuid " +
                              fscore::format_uuid(info.super.journal_uuid) + ")");
      break;
    }
  }
  return state;
}

FilesystemState prepare_filesystem(const FilesystemSpec& spec, Store& data, Store* journal) {
  if (!spec.format) return FilesystemState{};
  if (!spec.force) {
    if (fscore::ext4::has_ext4_magic(StoreSource(data))) return read_filesystem(data, journal);
    if (store_holds_data(data))
      throw FilesystemError("holds data that is not an ext4 filesystem; it is not formatted over");
    if (journal != nullptr && spec.journal == JournalPlacement::external && store_holds_data(*journal))
      throw FilesystemError("the journal export holds data while the data export is empty; it is not formatted over");
  }
  return format(spec, data, journal);
}

}  // namespace nvj
