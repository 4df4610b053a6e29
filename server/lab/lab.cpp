#include "server/lab/lab.h"

#include <spdlog/spdlog.h>

#include "server/lab/size.h"
#include "server/store/file_store.h"
#include "server/store/memory_store.h"

namespace nvj {
namespace {

std::unique_ptr<Store> open_store(std::string_view role, const StoreSpec& spec, std::uint64_t default_size) {
  if (!spec.file) return std::make_unique<MemoryStore>(spec.size.value_or(default_size));

  const std::string param = std::string(role) + "-file=" + *spec.file + ": ";
  std::unique_ptr<FileStore> store;
  try {
    store = FileStore::open(*spec.file, spec.size, default_size);
  } catch (const std::exception& e) {
    throw ConfigError(param + e.what());
  }
  const std::string why = check_export_size(role, store->size(), false);
  if (!why.empty()) throw ConfigError(param + "holds " + format_size(store->size()) + ": " + why);
  spdlog::debug("{}: {} {}", role, store->created() ? "created" : "opened", *spec.file);
  return store;
}

}  // namespace

std::unique_ptr<Lab> Lab::open(const LabConfig& config) {
  std::unique_ptr<Lab> lab(new Lab());
  lab->devices_.push_back(std::make_unique<Device>(
      std::string(kDataExport), open_store(kDataExport, config.data, SizeLimits::kDefaultData), Durability::on_flush));
  // The journal device is NVRAM: durable on acknowledgement (design.md).
  lab->devices_.push_back(std::make_unique<Device>(std::string(kJournalExport),
                                                   open_store(kJournalExport, config.journal,
                                                              SizeLimits::kDefaultJournal),
                                                   Durability::on_acknowledge));
  for (const auto& d : lab->devices_) spdlog::debug("{}", d->describe());
  return lab;
}

Device* Lab::find(std::string_view export_name) const {
  if (export_name.empty()) export_name = kDataExport;
  for (const auto& d : devices_)
    if (d->name() == export_name) return d.get();
  return nullptr;
}

}  // namespace nvj
