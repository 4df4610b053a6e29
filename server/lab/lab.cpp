// SPDX-License-Identifier: BSD-3-Clause
#include "server/lab/lab.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>

#include <system_error>

#include "fscore/ext4/block_map.h"
#include "common/size.h"
#include "server/model/make_model.h"
#include "server/store/file_store.h"
#include "server/store/io_error.h"
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

namespace {

// trace-file=: appended to, like nbdkit's log filter does with logfile=.
int open_trace_file(const std::optional<std::string>& path) {
  if (!path) return -1;
  const int fd = ::open(path->c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw ConfigError("trace-file=" + *path + ": cannot open it: " + errno_text(errno));
  return fd;
}

std::unique_ptr<TimingModel> model_for(std::string_view param, const std::string& text, std::uint64_t size) {
  try {
    return make_model(ModelSpec::parse(text), size);
  } catch (const std::invalid_argument& e) {  // checks that need the export's size
    throw ConfigError(std::string(param) + "=" + text + ": " + e.what());
  }
}

// A volatile cache makes writes durable after a flush; NVRAM, or a cache that
// is off, on acknowledgement (docs/design.md, "The durability contract").
// Without a model: a data disk keeps the flush rule, a journal is NVRAM.
Durability durability_of(const TimingModel* model, bool journal) {
  if (model) return model->volatile_cache() ? Durability::on_flush : Durability::on_acknowledge;
  return journal ? Durability::on_acknowledge : Durability::on_flush;
}

// Formats or reads the filesystem; every failure names the parameter to change.
FilesystemState prepare(const LabConfig& config, Store& data, Store* journal) {
  const std::string data_param = config.data.file ? "data-file=" + *config.data.file : "data";
  try {
    return prepare_filesystem(config.fs, data, journal);
  } catch (const FilesystemError& e) {
    throw ConfigError(data_param + ": " + e.what() + " (fs-format=force formats it anyway, losing what it holds; "
                      "fs=none serves it blank)");
  } catch (const fscore::ext4::NoSpaceError& e) {
    throw ConfigError("fs-populate=" + config.fs.populate.value_or("") + ": the tree does not fit in " +
                      format_size(data.size()) + ": " + e.what());
  } catch (const fscore::ext4::JournalSizeError& e) {
    throw ConfigError("fs-journal=internal:" + format_size(config.fs.internal_journal_bytes.value_or(0)) + ": " +
                      e.what());
  } catch (const std::system_error& e) {
    throw ConfigError("fs-populate=" + config.fs.populate.value_or("") + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw ConfigError("fs: cannot build ext4 on " + format_size(data.size()) + ": " + e.what());
  }
}

}  // namespace

Device& Lab::add(std::string_view role, std::unique_ptr<Store> store, const StoreSpec& spec,
                 const char* default_model) {
  const std::string text = spec.model.value_or(default_model);
  auto model = model_for(std::string(role) + "-model", text, store->size());
  const Durability durability = durability_of(model.get(), role == kJournalExport);
  auto device = std::make_unique<Device>(std::string(role), std::move(store), durability, std::move(model), &clock_);
  const DeviceTraits traits = spec.traits.applied_to(device->traits());
  if (const std::string why = check_traits(traits, device->size()); !why.empty())
    throw ConfigError(spec.sector_param + ": " + why);
  device->set_traits(traits);
  devices_.push_back(std::move(device));
  return *devices_.back();
}

std::unique_ptr<Lab> Lab::open(const LabConfig& config) {
  std::unique_ptr<Lab> lab(new Lab());
  auto data = open_store(kDataExport, config.data, SizeLimits::kDefaultData);
  std::unique_ptr<Store> journal;
  if (config.journal_export()) journal = open_store(kJournalExport, config.journal, SizeLimits::kDefaultJournal);
  lab->filesystem_ = prepare(config, *data, journal.get());
  spdlog::debug("data: {}", lab->filesystem_.describe());
  if (const auto n = lab->filesystem_.populated.xattrs_not_copied; n > 0)
    spdlog::warn("fs-populate: {} extended attributes (ACLs, capabilities, ...) were not copied", n);

  // With a control socket, a base to go back to (POST /base/keep,
  // /base/restore): every store wrapped before anything else holds it (the
  // journal tracer reads the stores it is given). Without one, nothing
  // stands between a request and its store.
  if (config.control) {
    data = lab->with_base(std::move(data));
    if (journal) journal = lab->with_base(std::move(journal));
  }
  const std::uint64_t data_size = data->size();
  Store* const data_store = data.get();
  Store* const journal_store = journal.get();
  Device& device = lab->add(kDataExport, std::move(data), config.data, kDefaultDataModel);
  if (!lab->filesystem_.journal_region.empty()) {
    // The internal journal behaves as the journal device would.
    const bool same_disk = config.journal.model == kJournalOnDataDisk;
    std::unique_ptr<TimingModel> model;
    if (!same_disk) model = model_for("journal-model", config.journal.model.value_or(kDefaultJournalModel), data_size);
    const Durability durability = same_disk ? device.durability() : durability_of(model.get(), true);
    device.add_region(std::string(kJournalExport), lab->filesystem_.journal_region, durability, std::move(model),
                      same_disk);
  }
  Device* journal_device = nullptr;
  if (journal) journal_device = &lab->add(kJournalExport, std::move(journal), config.journal, kDefaultJournalModel);
  if (config.journal_trace && (journal_device != nullptr || !lab->filesystem_.journal_region.empty())) {
    lab->tracer_ = std::make_unique<JournalTracer>(*data_store, journal_store, lab->filesystem_.journal_region,
                                                   lab->clock_, lab->opened_, open_trace_file(config.trace_file));
    device.set_observer(&lab->tracer_->data_observer());
    if (journal_device != nullptr) journal_device->set_observer(&lab->tracer_->journal_observer());
  }
  for (const auto& d : lab->devices_) d->set_stats_enabled(config.stats);
  // Power cuts are asked for through the control socket: log only with one.
  if (config.control)
    for (const auto& d : lab->devices_) d->enable_power_loss(config.crash_log.value_or(SizeLimits::kDefaultCrashLog));
  for (const auto& d : lab->devices_) spdlog::debug("{}", d->describe());
  lab->record_buffer_ = config.record_buffer.value_or(SizeLimits::kDefaultRecordBuffer);
  if (config.record) {
    try {
      lab->start_recording(*config.record);  // before anything is served
    } catch (const std::exception& e) {
      throw ConfigError("record=" + *config.record + ": " + e.what());
    }
  }
  return lab;
}

Recorder::Status Lab::start_recording(const std::string& path) {
  std::lock_guard lock(recording_mutex_);
  if (!recorders_.empty() && recorders_.back()->status().recording)
    throw std::invalid_argument("a recording is running (" + recorders_.back()->status().path +
                                "): stop it first (POST /record/stop)");
  std::vector<fscore::record::ExportInfo> exports;
  for (const auto& d : devices_)
    exports.push_back({d->name(), d->size(), static_cast<std::uint32_t>(d->atomic_unit())});
  auto recorder = std::make_unique<Recorder>(Recorder::Options{path, record_buffer_}, exports);
  {
    // One moment of every export: all their changes wait while the bases
    // are read; only then does any device take the recorder.
    std::vector<std::unique_lock<std::mutex>> paused;
    for (const auto& d : devices_) paused.push_back(d->pause_changes());
    try {
      for (std::size_t i = 0; i < devices_.size(); ++i) devices_[i]->record_base(*recorder, static_cast<std::uint8_t>(i));
    } catch (const std::exception& e) {
      recorder.reset();
      ::unlink(path.c_str());  // a recording without its starting contents is none
      throw std::invalid_argument("cannot record the starting contents into " + path + ": " + e.what());
    }
    for (std::size_t i = 0; i < devices_.size(); ++i)
      devices_[i]->set_recorder(recorder.get(), static_cast<std::uint8_t>(i));
  }
  if (threads_started_) recorder->start();
  const Recorder::Status status = recorder->status();
  spdlog::info("recording to {} ({} bytes of starting contents)", path, status.base_bytes);
  recorders_.push_back(std::move(recorder));
  return status;
}

Recorder::Status Lab::stop_recording() {
  std::lock_guard lock(recording_mutex_);
  if (recorders_.empty() || !recorders_.back()->status().recording)
    throw std::invalid_argument("no recording is running (POST /record/start?file=PATH starts one)");
  return recorders_.back()->stop();
}

std::optional<Recorder::Status> Lab::recording() const {
  std::lock_guard lock(recording_mutex_);
  if (recorders_.empty()) return std::nullopt;
  return recorders_.back()->status();
}

void Lab::start_threads() {
  std::lock_guard lock(recording_mutex_);
  threads_started_ = true;
  if (!recorders_.empty()) recorders_.back()->start();
}

void Lab::mark(std::string label) {
  {
    std::lock_guard lock(recording_mutex_);
    if (!recorders_.empty()) recorders_.back()->mark(static_cast<std::uint64_t>(uptime()), label);
  }
  std::lock_guard lock(marks_mutex_);
  marks_.push_back(Mark{uptime(), std::move(label)});
}

std::vector<Lab::Mark> Lab::marks() const {
  std::lock_guard lock(marks_mutex_);
  return marks_;
}

void Lab::reset_stats() {
  for (const auto& d : devices_) d->reset_stats();
  clock_.reset_stats();
  if (tracer_) tracer_->reset();
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
  {
    // The cut rolls stores back behind the recording's back: it ends here.
    std::lock_guard lock(recording_mutex_);
    if (!recorders_.empty())
      recorders_.back()->abort("the power was cut (POST /crash): a recording covers a run without power cuts");
  }
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

std::unique_ptr<Store> Lab::with_base(std::unique_ptr<Store> store) {
  auto cow = std::make_unique<CowStore>(std::move(store));
  cows_.push_back(cow.get());
  return cow;
}

std::vector<std::pair<std::string, std::uint64_t>> Lab::rebase(void (CowStore::*what)()) {
  if (cows_.size() != devices_.size()) throw std::invalid_argument("a base needs the control socket (control=)");
  std::lock_guard lock(recording_mutex_);
  if (!recorders_.empty() && recorders_.back()->status().recording)
    throw std::invalid_argument("a recording is running: stop it first (POST /record/stop)");
  if (what == &CowStore::restore && !cows_.front()->kept())
    throw std::invalid_argument("no base was kept (POST /base/keep first)");
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    out.emplace_back(devices_[i]->name(), cows_[i]->pages_above());
    devices_[i]->reset_contents([&] { (cows_[i]->*what)(); });
  }
  return out;
}

std::vector<std::pair<std::string, std::uint64_t>> Lab::keep_base() {
  auto out = rebase(&CowStore::keep);
  spdlog::info("base kept: what the exports hold now is what POST /base/restore goes back to");
  return out;
}

std::vector<std::pair<std::string, std::uint64_t>> Lab::restore_base() {
  auto out = rebase(&CowStore::restore);
  spdlog::debug("base restored");
  return out;
}

Device* Lab::find(std::string_view export_name) const {
  if (export_name.empty()) export_name = kDataExport;
  for (const auto& d : devices_)
    if (d->name() == export_name) return d.get();
  return nullptr;
}

}  // namespace nvj
