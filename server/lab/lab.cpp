#include "server/lab/lab.h"

#include <spdlog/spdlog.h>

#include "server/lab/size.h"
#include "server/model/make_model.h"
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

void Lab::add(std::string_view role, const StoreSpec& spec, std::uint64_t default_size, const char* default_model) {
  auto store = open_store(role, spec, default_size);
  const std::string model_text = spec.model.value_or(default_model);
  std::unique_ptr<TimingModel> model;
  try {
    model = make_model(ModelSpec::parse(model_text), store->size());
  } catch (const std::invalid_argument& e) {  // checks that need the export's size
    throw ConfigError(std::string(role) + "-model=" + model_text + ": " + e.what());
  }
  // A volatile cache makes writes durable after a flush; NVRAM, or a cache
  // that is off, on acknowledgement (design.md). Without a model: a data
  // disk keeps the flush rule, the journal is NVRAM.
  const Durability durability = model ? (model->volatile_cache() ? Durability::on_flush : Durability::on_acknowledge)
                                      : (role == kJournalExport ? Durability::on_acknowledge : Durability::on_flush);
  devices_.push_back(std::make_unique<Device>(std::string(role), std::move(store), durability, std::move(model),
                                              &clock_));
}

std::unique_ptr<Lab> Lab::open(const LabConfig& config) {
  std::unique_ptr<Lab> lab(new Lab());
  lab->add(kDataExport, config.data, SizeLimits::kDefaultData, kDefaultDataModel);
  lab->add(kJournalExport, config.journal, SizeLimits::kDefaultJournal, kDefaultJournalModel);
  for (const auto& d : lab->devices_) d->set_stats_enabled(config.stats);
  // Power cuts are asked for through the control socket: log only with one.
  if (config.control)
    for (const auto& d : lab->devices_) d->enable_power_loss(config.crash_log.value_or(SizeLimits::kDefaultCrashLog));
  for (const auto& d : lab->devices_) spdlog::debug("{}", d->describe());
  return lab;
}

void Lab::mark(std::string label) {
  std::lock_guard lock(marks_mutex_);
  marks_.push_back(Mark{uptime(), std::move(label)});
}

std::vector<Lab::Mark> Lab::marks() const {
  std::lock_guard lock(marks_mutex_);
  return marks_;
}

void Lab::reset_stats() {
  for (const auto& d : devices_) d->stats().reset();
  std::lock_guard lock(marks_mutex_);
  marks_.clear();
}

void Lab::set_model(std::string_view export_name, std::string_view spec) {
  Device* device = find(export_name);
  if (device == nullptr || export_name.empty())
    throw std::invalid_argument("no export named '" + std::string(export_name) + "'");
  device->set_model(make_model(ModelSpec::parse(spec), device->size()));
  spdlog::info("{}: model now {}", device->name(), device->model_description());
}

std::vector<Device*> Lab::select(std::string_view export_name) const {
  std::vector<Device*> out;
  for (const auto& d : devices_)
    if (export_name.empty() || d->name() == export_name) out.push_back(d.get());
  if (out.empty()) throw std::invalid_argument("no export named '" + std::string(export_name) + "'");
  return out;
}

std::vector<std::pair<std::string, CrashReport>> Lab::cut_power(const CrashPolicy& policy,
                                                                std::string_view export_name) {
  if (!power_loss_enabled()) throw std::invalid_argument("power loss is off (the server has no control socket)");
  std::vector<std::pair<std::string, CrashReport>> reports;
  for (Device* d : select(export_name)) {
    reports.emplace_back(d->name(), d->cut_power(policy));
    spdlog::info("{}: power cut ({}), {} volatile writes lost, {} torn", d->name(), to_string(policy.kind),
                 reports.back().second.volatile_lost, reports.back().second.in_flight);
  }
  return reports;
}

void Lab::power_on(std::string_view export_name) {
  for (Device* d : select(export_name)) d->power_on();
}

Device* Lab::find(std::string_view export_name) const {
  if (export_name.empty()) export_name = kDataExport;
  for (const auto& d : devices_)
    if (d->name() == export_name) return d.get();
  return nullptr;
}

}  // namespace nvj
