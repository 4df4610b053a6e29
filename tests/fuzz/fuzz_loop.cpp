// SPDX-License-Identifier: BSD-3-Clause
// The fuzz drivers' shared command line and loop (fuzz_loop.h).
#include "tests/fuzz/fuzz_loop.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace nvj::fuzz {
namespace {

[[noreturn]] void usage(const char* name, std::span<const DriverFlag> flags, const std::string& problem) {
  std::string own;
  for (const DriverFlag& f : flags) own += std::string(" [") + f.name + "]";
  std::fprintf(stderr,
               "%s: %s\n"
               "usage: %s --iterations N [--seed S] [--seconds T] [--save-slowest FILE]%s\n"
               "       %s --seconds T [--seed S] [--save-slowest FILE]%s\n"
               "       %s --write-seeds DIR\n"
               "       %s FILE...\n",
               name, problem.c_str(), name, own.c_str(), name, own.c_str(), name, name);
  for (const DriverFlag& f : flags) std::fprintf(stderr, "  %s: %s\n", f.name, f.help);
  std::exit(2);
}

std::uint64_t number(const char* name, std::span<const DriverFlag> flags, const char* text, std::string_view option) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || text[0] == '-')
    usage(name, flags, std::string(option) + " takes a number, not '" + text + "'");
  return v;
}

bool write_file(const char* name, const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::fprintf(stderr, "%s: cannot write %s\n", name, path.c_str());
  return static_cast<bool>(out);
}

// The input being run, saved (as libFuzzer's crash- files) when the target
// aborts or crashes on it.
const std::vector<std::uint8_t>* g_current = nullptr;
std::string g_crash_file;

extern "C" void on_fatal_signal(int signal) {
  if (g_current != nullptr) {
    const int fd = ::open(g_crash_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      (void)!::write(fd, g_current->data(), g_current->size());
      ::close(fd);
      static const char kSaved[] = "fuzz: the input is saved in ";
      (void)!::write(2, kSaved, sizeof kSaved - 1);
      (void)!::write(2, g_crash_file.c_str(), g_crash_file.size());
      (void)!::write(2, "\n", 1);
    }
  }
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

int replay(const LoopOptions& options, const FuzzLoop& loop) {
  for (const std::string& path : options.files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read %s\n", loop.name, path.c_str());
      return 1;
    }
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    std::printf("%s: %s\n", path.c_str(), loop.verdict ? loop.verdict().c_str() : "done");
  }
  if (loop.summary) loop.summary();
  return 0;
}

}  // namespace

bool LoopOptions::has(std::string_view flag) const { return std::find(flags.begin(), flags.end(), flag) != flags.end(); }

LoopOptions parse_loop_options(const char* name, int argc, char** argv, std::span<const DriverFlag> flags) {
  LoopOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(name, flags, std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--seconds") {
      o.seconds = number(name, flags, value(), arg);
      if (o.seconds == 0) usage(name, flags, "--seconds takes a number above 0");
    } else if (arg == "--iterations") {
      o.iterations = number(name, flags, value(), arg);
      if (o.iterations == 0) usage(name, flags, "--iterations takes a number above 0");
    } else if (arg == "--seed") {
      o.seed = number(name, flags, value(), arg);
    } else if (arg == "--save-slowest") {
      o.save_slowest = value();
    } else if (arg == "--write-seeds") {
      o.write_seeds = value();
    } else if (arg == "-h" || arg == "--help") {
      usage(name, flags, "a fuzz target, run on mutated seeds");
    } else if (std::any_of(flags.begin(), flags.end(), [&](const DriverFlag& f) { return arg == f.name; })) {
      o.flags.emplace_back(arg);
    } else if (arg.starts_with("-")) {
      usage(name, flags, "unknown option " + std::string(arg));
    } else {
      o.files.emplace_back(arg);
    }
  }
  if (o.files.empty() && o.write_seeds.empty() && o.iterations == 0 && o.seconds == 0)
    usage(name, flags, "how long to fuzz: give --iterations N (the same work everywhere) or --seconds T");
  return o;
}

int run_fuzz_loop(const LoopOptions& options, const FuzzLoop& loop) {
  if (!options.files.empty()) return replay(options, loop);
  if (!options.write_seeds.empty()) {
    for (const NamedInput& s : loop.seeds)
      if (!write_file(loop.name, options.write_seeds + "/" + s.name, s.bytes)) return 1;
    std::printf("%zu seeds written to %s\n", loop.seeds.size(), options.write_seeds.c_str());
    return 0;
  }

  g_crash_file = std::string(loop.name) + "-crash-input";
  for (const int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, on_fatal_signal);
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  std::vector<std::uint64_t> runs(loop.seeds.size(), 0);
  std::vector<std::uint8_t> input;
  std::uint64_t done = 0;
  bool out_of_time = false;
  double slowest = 0;
  std::uint64_t slowest_iteration = 0;
  std::size_t slowest_seed = 0;
  std::vector<std::uint8_t> slowest_input;
  for (;;) {
    if (options.iterations != 0 && done >= options.iterations) break;
    if (options.seconds > 0 && done % 64 == 0 && elapsed() >= static_cast<double>(options.seconds)) {
      out_of_time = true;
      break;
    }
    input.clear();
    const std::size_t seed = loop.next(input);
    const auto began = std::chrono::steady_clock::now();
    g_current = &input;
    LLVMFuzzerTestOneInput(input.data(), input.size());
    g_current = nullptr;
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    ++done;
    ++runs[seed];
    if (loop.after) loop.after(seed);
    if (took > slowest) {
      slowest = took;
      slowest_iteration = done;
      slowest_seed = seed;
      if (!options.save_slowest.empty()) slowest_input = input;
    }
  }
  const double seconds = elapsed();
  std::printf("%s: seed %llu: %llu iterations in %.1f s (%.0f/s)\n", loop.name,
              static_cast<unsigned long long>(options.seed), static_cast<unsigned long long>(done), seconds,
              seconds > 0 ? static_cast<double>(done) / seconds : 0.0);
  if (out_of_time && options.iterations != 0)
    std::printf("  stopped by --seconds %llu before the %llu iterations asked for\n",
                static_cast<unsigned long long>(options.seconds), static_cast<unsigned long long>(options.iterations));
  if (slowest_iteration != 0)
    std::printf("  slowest input: %.1f ms, iteration %llu (from %s; --iterations %llu ends with it)\n", slowest * 1e3,
                static_cast<unsigned long long>(slowest_iteration), loop.seeds[slowest_seed].name.c_str(),
                static_cast<unsigned long long>(slowest_iteration));
  for (std::size_t i = 0; i < loop.seeds.size(); ++i) {
    const std::string note =
        loop.seed_note ? loop.seed_note(i) : " (" + std::to_string(loop.seeds[i].bytes.size()) + " bytes)";
    std::printf("  %-28s %8llu runs%s\n", loop.seeds[i].name.c_str(), static_cast<unsigned long long>(runs[i]),
                note.c_str());
  }
  if (loop.summary) loop.summary();
  if (!options.save_slowest.empty() && !write_file(loop.name, options.save_slowest, slowest_input)) return 1;
  return 0;
}

}  // namespace nvj::fuzz
