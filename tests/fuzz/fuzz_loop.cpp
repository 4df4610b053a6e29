// The journal fuzz drivers' shared command line and loop (fuzz_loop.h).
#include "tests/fuzz/fuzz_loop.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace nvj::fuzz {
namespace {

[[noreturn]] void usage(const char* name, const std::string& problem) {
  std::fprintf(stderr,
               "%s: %s\n"
               "usage: %s [--seconds N] [--iterations N] [--seed S] [--save-slowest FILE]\n"
               "       %s --write-seeds DIR\n"
               "       %s FILE...\n",
               name, problem.c_str(), name, name, name);
  std::exit(2);
}

std::uint64_t number(const char* name, const char* text, std::string_view option) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || text[0] == '-')
    usage(name, std::string(option) + " takes a number, not '" + text + "'");
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

}  // namespace

LoopOptions parse_loop_options(const char* name, int argc, char** argv) {
  LoopOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(name, std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--seconds") {
      o.seconds = static_cast<double>(number(name, value(), arg));
    } else if (arg == "--iterations") {
      o.iterations = number(name, value(), arg);
    } else if (arg == "--seed") {
      o.seed = number(name, value(), arg);
    } else if (arg == "--save-slowest") {
      o.save_slowest = value();
    } else if (arg == "--write-seeds") {
      o.write_seeds = value();
    } else if (arg == "-h" || arg == "--help") {
      usage(name, "a fuzz target, run on mutated seeds");
    } else if (arg.starts_with("-")) {
      usage(name, "unknown option " + std::string(arg));
    } else {
      o.files.emplace_back(arg);
    }
  }
  if (o.seconds == 0 && o.iterations == 0) o.seconds = 10;
  return o;
}

int run_fuzz_loop(const LoopOptions& options, const FuzzLoop& loop) {
  if (!options.files.empty()) {
    for (const std::string& path : options.files) {
      std::ifstream in(path, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "%s: cannot read %s\n", loop.name, path.c_str());
        return 1;
      }
      const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      std::printf("%s: done\n", path.c_str());
    }
    if (loop.summary) loop.summary();
    return 0;
  }
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
  double slowest = 0;
  std::uint64_t slowest_iteration = 0;
  std::size_t slowest_seed = 0;
  std::vector<std::uint8_t> slowest_input;
  for (;;) {
    if (options.iterations != 0 && done >= options.iterations) break;
    if (options.seconds > 0 && done % 64 == 0 && elapsed() >= options.seconds) break;
    input.clear();
    const std::size_t seed = loop.next(input);
    const auto began = std::chrono::steady_clock::now();
    g_current = &input;
    LLVMFuzzerTestOneInput(input.data(), input.size());
    g_current = nullptr;
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    ++done;
    ++runs[seed];
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
  if (slowest_iteration != 0)
    std::printf("  slowest input: %.1f ms, iteration %llu (from %s; --iterations %llu ends with it)\n", slowest * 1e3,
                static_cast<unsigned long long>(slowest_iteration), loop.seeds[slowest_seed].name.c_str(),
                static_cast<unsigned long long>(slowest_iteration));
  for (std::size_t i = 0; i < loop.seeds.size(); ++i)
    std::printf("  %-28s %8llu runs (%zu bytes)\n", loop.seeds[i].name.c_str(),
                static_cast<unsigned long long>(runs[i]), loop.seeds[i].bytes.size());
  if (loop.summary) loop.summary();
  if (!options.save_slowest.empty() && !write_file(loop.name, options.save_slowest, slowest_input)) return 1;
  return 0;
}

}  // namespace nvj::fuzz
