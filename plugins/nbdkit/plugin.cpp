// SPDX-License-Identifier: BSD-3-Clause
// nbdkit-nvjournal-plugin: parameters in, requests to server/. No logic of its
// own: every callback finds the Device and hands the request over, turning
// exceptions into an nbdkit error and an errno for the client.
#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <new>
#include <string>

#include "plugins/nbdkit/nbdkit_log_sink.h"
#include "server/control/control_server.h"
#include "server/control/stats_report.h"
#include "server/lab/config.h"
#include "server/lab/lab.h"
#include "server/store/io_error.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

namespace {

nvj::ConfigParser g_parser;
nvj::LabConfig g_config;
std::unique_ptr<nvj::Lab> g_lab;
std::unique_ptr<nvj::ControlServer> g_control;
const std::string g_help = nvj::lab_parameters_help();

nvj::Device* device(void* handle) { return static_cast<nvj::Device*>(handle); }

// Runs fn, reporting any exception as an nbdkit error; returns 0 or -1.
template <typename Fn>
int guarded(Fn&& fn) noexcept {
  try {
    fn();
    return 0;
  } catch (const nvj::IoError& e) {
    nbdkit_error("%s", e.what());
    nbdkit_set_error(e.error());
  } catch (const std::bad_alloc&) {
    nbdkit_error("out of memory");
    nbdkit_set_error(ENOMEM);
  } catch (const std::exception& e) {
    nbdkit_error("%s", e.what());
    nbdkit_set_error(EIO);
  } catch (...) {
    nbdkit_error("unknown error");
    nbdkit_set_error(EIO);
  }
  return -1;
}

void nvj_load() {
  auto logger = std::make_shared<spdlog::logger>("nvjournal", std::make_shared<nvj::NbdkitLogSink>());
  logger->set_level(spdlog::level::debug);  // nbdkit shows debug only with -v
  spdlog::set_default_logger(logger);
}

void nvj_unload() { spdlog::shutdown(); }

int nvj_config(const char* key, const char* value) { return guarded([&] { g_parser.set(key, value); }); }

int nvj_config_complete() { return guarded([] { g_config = g_parser.finish(); }); }

// Files are created and locked, and the control socket and the metrics
// listener bound, after the configuration is complete and before nbdkit
// serves or forks.
int nvj_get_ready() {
  return guarded([] {
    g_lab = nvj::Lab::open(g_config);
    if (!g_config.control && !g_config.metrics) return;
    g_control = std::make_unique<nvj::ControlServer>(*g_lab);
    if (g_config.control) {
      try {
        g_control->listen_control(*g_config.control);
      } catch (const std::exception& e) {
        throw nvj::ConfigError("control=" + *g_config.control + ": " + e.what());
      }
    }
    if (g_config.metrics) {
      try {
        g_control->listen_metrics(*g_config.metrics);
      } catch (const std::exception& e) {
        throw nvj::ConfigError("metrics=" + g_config.metrics->text + ": " + e.what());
      }
    }
  });
}

// Threads start here: they would not survive nbdkit's fork into the background.
int nvj_after_fork() {
  return guarded([] {
    g_lab->start_threads();
    if (g_control) g_control->start();
  });
}

// At exit: the statistics, on nbdkit's stderr.
void nvj_cleanup() {
  if (g_control) g_control->stop();
  g_control.reset();
  if (g_lab) {
    const std::string summary = nvj::stats_text(*g_lab);
    std::fprintf(stderr, "nvjournal: statistics at exit\n%s", summary.c_str());
  }
  g_lab.reset();
}

void nvj_dump_plugin() {
  printf("nvjournal_version=%s\n", NVJ_VERSION);
  printf("nvjournal_exports=data,journal\n");
}

int nvj_list_exports(int /*readonly*/, int /*is_tls*/, struct nbdkit_exports* exports) {
  return guarded([&] {
    for (const auto& d : g_lab->devices())
      if (nbdkit_add_export(exports, d->name().c_str(), d->describe().c_str()) == -1)
        throw nvj::IoError(errno, "nbdkit_add_export");
  });
}

const char* nvj_default_export(int /*readonly*/, int /*is_tls*/) { return nvj::Lab::kDataExport.data(); }

void* nvj_open(int /*readonly*/) {
  const char* exported = nbdkit_export_name();
  const char* name = exported == nullptr ? "" : exported;
  nvj::Device* d = g_lab->find(name);
  if (d == nullptr) {
    nbdkit_error("no export named '%s' (this server has 'data' and 'journal')", name);
    nbdkit_set_error(ENOENT);
  }
  return d;
}

const char* nvj_export_description(void* handle) {
  static thread_local std::string text;
  return guarded([&] { text = device(handle)->describe(); }) == 0 ? text.c_str() : nullptr;
}

int64_t nvj_get_size(void* handle) { return static_cast<int64_t>(device(handle)->size()); }

int nvj_yes(void*) { return 1; }

// What the device tells the host (server/model/device_traits.h), asked once
// per connection: the flags the client negotiates.
int nvj_is_rotational(void* handle) { return device(handle)->traits().rotational ? 1 : 0; }

// Write-through: no flush and no FUA to send (nbdkit refuses them, EINVAL,
// from a client that sends them anyway).
int nvj_can_flush(void* handle) { return device(handle)->traits().write_back ? 1 : 0; }

int nvj_can_fua(void* handle) { return device(handle)->traits().write_back ? NBDKIT_FUA_NATIVE : NBDKIT_FUA_NONE; }

int nvj_can_trim(void* handle) { return device(handle)->traits().trim ? 1 : 0; }

// Without it nbdkit still offers write zeroes, and writes the zeroes itself.
int nvj_can_zero(void* handle) { return device(handle)->traits().zero ? 1 : 0; }

// The logical sector is the smallest request a client should make, the
// physical one the size without a read-modify-write; 32 MiB is the largest
// request the NBD protocol lets a client assume. nbdkit passes unaligned
// requests on all the same, and the device serves any byte range.
int nvj_block_size(void* handle, uint32_t* minimum, uint32_t* preferred, uint32_t* maximum) {
  const nvj::DeviceTraits& t = device(handle)->traits();
  *minimum = t.logical_sector;
  *preferred = t.physical_sector;
  *maximum = 32u << 20;
  return 0;
}

int nvj_pread(void* handle, void* buf, uint32_t count, uint64_t offset, uint32_t /*flags*/) {
  return guarded([&] { device(handle)->read(buf, count, offset); });
}

int nvj_pwrite(void* handle, const void* buf, uint32_t count, uint64_t offset, uint32_t flags) {
  return guarded([&] { device(handle)->write(buf, count, offset, (flags & NBDKIT_FLAG_FUA) != 0); });
}

int nvj_flush(void* handle, uint32_t /*flags*/) {
  return guarded([&] { device(handle)->flush(); });
}

int nvj_trim(void* handle, uint32_t count, uint64_t offset, uint32_t flags) {
  return guarded([&] { device(handle)->trim(count, offset, (flags & NBDKIT_FLAG_FUA) != 0); });
}

int nvj_zero(void* handle, uint32_t count, uint64_t offset, uint32_t flags) {
  return guarded([&] { device(handle)->zero(count, offset, (flags & NBDKIT_FLAG_FUA) != 0); });
}

int nvj_extents(void* handle, uint32_t count, uint64_t offset, uint32_t flags, struct nbdkit_extents* extents) {
  const bool one = (flags & NBDKIT_FLAG_REQ_ONE) != 0;
  return guarded([&] {
    bool stop = false;
    device(handle)->extents(offset, count, [&](const nvj::Extent& e) {
      if (stop) return;
      const uint32_t type = e.hole ? (NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO) : 0;
      if (nbdkit_add_extent(extents, e.offset, e.length, type) == -1) throw nvj::IoError(errno, "nbdkit_add_extent");
      stop = one;
    });
  });
}

struct nbdkit_plugin make_plugin() {
  struct nbdkit_plugin p {};
  p.name = "nvjournal";
  p.longname = "nvjournal: emulated journal and data devices";
  p.version = NVJ_VERSION;
  p.description = "A data disk and an NVRAM journal device for filesystem journal experiments.";
  p.load = nvj_load;
  p.unload = nvj_unload;
  p.config = nvj_config;
  p.config_complete = nvj_config_complete;
  p.config_help = g_help.c_str();
  p.magic_config_key = "data";
  p.get_ready = nvj_get_ready;
  p.after_fork = nvj_after_fork;
  p.cleanup = nvj_cleanup;
  p.dump_plugin = nvj_dump_plugin;
  p.list_exports = nvj_list_exports;
  p.default_export = nvj_default_export;
  p.open = nvj_open;
  p.export_description = nvj_export_description;
  p.get_size = nvj_get_size;
  p.block_size = nvj_block_size;
  p.is_rotational = nvj_is_rotational;
  p.can_write = nvj_yes;
  p.can_flush = nvj_can_flush;
  p.can_trim = nvj_can_trim;
  p.can_zero = nvj_can_zero;
  p.can_extents = nvj_yes;
  p.can_multi_conn = nvj_yes;
  p.can_fua = nvj_can_fua;
  p.pread = nvj_pread;
  p.pwrite = nvj_pwrite;
  p.flush = nvj_flush;
  p.trim = nvj_trim;
  p.zero = nvj_zero;
  p.extents = nvj_extents;
  return p;
}

struct nbdkit_plugin plugin = make_plugin();

}  // namespace

NBDKIT_REGISTER_PLUGIN(plugin)
