// SPDX-License-Identifier: BSD-3-Clause
// Lab: the running configuration: the devices a server exports, built from a
// LabConfig. Opening it creates missing files and locks them; any problem is
// a ConfigError naming the parameter, raised before anything is served.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/device/device.h"
#include "server/lab/config.h"
#include "server/lab/filesystem.h"
#include "common/clock.h"
#include "server/probe/journal_tracer.h"
#include "server/store/cow_store.h"

namespace nvj {

class Lab {
 public:
  static constexpr std::string_view kDataExport = "data";
  static constexpr std::string_view kJournalExport = "journal";

  static std::unique_ptr<Lab> open(const LabConfig& config);

  // The device behind an export name; "" is the default export, data.
  // nullptr for an unknown name.
  Device* find(std::string_view export_name) const;

  const std::vector<std::unique_ptr<Device>>& devices() const { return devices_; }
  // What the data export held or was given at start.
  const FilesystemState& filesystem() const { return filesystem_; }

  // The lab's clock, and how long it has been open.
  Clock& clock() { return clock_; }
  // What the clock's waits did since the start or the last reset_stats().
  MonotonicClock::Stats clock_stats() const { return clock_.stats(); }
  Nanos uptime() const { return clock_.now() - opened_; }

  // A labelled point in time, listed with the statistics.
  struct Mark {
    Nanos at;  // since the lab opened
    std::string label;
  };
  void mark(std::string label);
  std::vector<Mark> marks() const;

  void reset_stats();

  // The live journal decoder; nullptr without a journal or with
  // journal-trace=off.
  const JournalTracer* journal_tracer() const { return tracer_.get(); }

  // Replaces an export's timing model from a spec; std::invalid_argument
  // (unknown export, bad spec, durability change) changes nothing.
  void set_model(std::string_view export_name, std::string_view spec);

  // Power cut to one export, or to all (""): each loses what its durability
  // rule allows under `policy`, its drive's cache empties and its requests
  // fail until power_on(). Throws
  // std::invalid_argument for an unknown export or without power loss.
  std::vector<std::pair<std::string, CrashReport>> cut_power(const CrashPolicy& policy,
                                                              std::string_view export_name);
  void power_on(std::string_view export_name);
  bool power_loss_enabled() const { return devices_.front()->power_loss_enabled(); }

  // The crash lab's recording (server/record/recorder.h) of every export,
  // export i of the recording being devices()[i]. start_recording creates
  // `path` (an existing file is refused) and records from now on, one
  // recording at a time; the exports' changes pause while their starting
  // contents are read. While they serve, only with power loss on (control=),
  // whose changes take their turn; record= starts one before they serve.
  // std::invalid_argument says what is wrong and changes nothing.
  Recorder::Status start_recording(const std::string& path);
  // Ends the running recording: its final status. std::invalid_argument if
  // none is running.
  Recorder::Status stop_recording();
  // The running or the last recording; nullopt if there was none.
  std::optional<Recorder::Status> recording() const;
  // A base to go back to (server/store/cow_store.h), for the crash lab's
  // explorer, with a control socket (control=): keep_base() makes what
  // every export holds now the base;
  // restore_base() puts every export back to it, its write log and drive
  // cache emptied; each gives the pages written since, by export. The live
  // journal decoder is not told (start the server with journal-trace=off).
  // std::invalid_argument while a recording runs (it would record a jump),
  // or for restore_base() before any keep_base().
  std::vector<std::pair<std::string, std::uint64_t>> keep_base();
  std::vector<std::pair<std::string, std::uint64_t>> restore_base();
  // Starts the threads of the lab's own (a recording's writer): after
  // nbdkit's fork into the background, which threads do not survive.
  void start_threads();

 private:
  Lab() = default;
  // The export `role` with its model (spec.model, else default_model) and
  // what it tells the host (the model's traits with spec.traits applied).
  Device& add(std::string_view role, std::unique_ptr<Store> store, const StoreSpec& spec, const char* default_model);
  std::vector<Device*> select(std::string_view export_name) const;
  // keep_base and restore_base: `what` done to every export's CowStore with
  // its changes paused; refused while a recording runs.
  std::vector<std::pair<std::string, std::uint64_t>> rebase(void (CowStore::*what)());
  // `store` in a CowStore of the lab's (cows_), in the order of devices_.
  std::unique_ptr<Store> with_base(std::unique_ptr<Store> store);

  MonotonicClock clock_;  // outlives the devices that wait on it
  Nanos opened_ = clock_.now();
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<CowStore*> cows_;  // devices_[i]'s store, with control= only
  FilesystemState filesystem_;
  std::unique_ptr<JournalTracer> tracer_;  // observes devices_: destroyed before them
  mutable std::mutex marks_mutex_;
  std::vector<Mark> marks_;
  std::uint64_t record_buffer_ = 0;  // record-buffer=
  mutable std::mutex recording_mutex_;
  bool threads_started_ = false;
  // The recording; earlier ones stay until the lab closes, since a request
  // in flight may still hold one (they are stopped and take no frames).
  std::vector<std::unique_ptr<Recorder>> recorders_;
};

}  // namespace nvj
