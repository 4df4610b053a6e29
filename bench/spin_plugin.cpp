// SPDX-License-Identifier: BSD-3-Clause
// nbdkit-spin-plugin: the peer of bench/nvram_accuracy.sh. It answers every
// write `latency-ns` nanoseconds after the write reached it, spinning on
// CLOCK_MONOTONIC the whole time (it never sleeps, so nothing it does can wake
// late), and stores nothing: the best a server on this machine can do for a
// fixed write latency, whatever the CPU it burns. Reads return zeros. The
// export named "base" answers at once, so one server gives both sides of a
// comparison.
//
//   nbdkit bench/nbdkit-spin-plugin.so latency-ns=N [size=SIZE]
#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <time.h>

#include <cstdint>
#include <cstring>

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

namespace {

std::int64_t g_latency = 0;
std::int64_t g_size = std::int64_t{64} << 20;

std::int64_t now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int spin_config(const char* key, const char* value) {
  if (std::strcmp(key, "latency-ns") == 0) {
    if (nbdkit_parse_int64_t("latency-ns", value, &g_latency) == -1) return -1;
    if (g_latency < 0) {
      nbdkit_error("latency-ns must not be negative: %s", value);
      return -1;
    }
    return 0;
  }
  if (std::strcmp(key, "size") == 0) return (g_size = nbdkit_parse_size(value)) == -1 ? -1 : 0;
  nbdkit_error("unknown parameter %s (latency-ns=N, size=SIZE)", key);
  return -1;
}

const std::int64_t kNoLatency = 0;

// The handle is the latency of the export asked for.
void* spin_open(int) {
  const char* name = nbdkit_export_name();
  const bool base = name != nullptr && std::strcmp(name, "base") == 0;
  return const_cast<std::int64_t*>(base ? &kNoLatency : &g_latency);
}
int64_t spin_get_size(void*) { return g_size; }

int spin_pread(void*, void* buf, uint32_t count, uint64_t, uint32_t) {
  std::memset(buf, 0, count);
  return 0;
}

int spin_pwrite(void* handle, const void*, uint32_t, uint64_t, uint32_t) {
  const std::int64_t deadline = now() + *static_cast<const std::int64_t*>(handle);
  while (now() < deadline) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
  return 0;
}

struct nbdkit_plugin make_plugin() {
  struct nbdkit_plugin p {};
  p.name = "spin";
  p.version = "1";
  p.config = spin_config;
  p.config_help = "latency-ns=N  each write's latency\nsize=SIZE     the export's size (default 64M)";
  p.open = spin_open;
  p.get_size = spin_get_size;
  p.pread = spin_pread;
  p.pwrite = spin_pwrite;
  return p;
}

struct nbdkit_plugin plugin = make_plugin();

}  // namespace

NBDKIT_REGISTER_PLUGIN(plugin)
