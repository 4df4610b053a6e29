// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/devices/block_queue.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "tools/nvj/host/files/text_file.h"

namespace nvj::cli {
namespace {

std::string queue_file(const std::string& device, const char* name) {
  return "/sys/block/" + device.substr(device.rfind('/') + 1) + "/queue/" + name;
}

std::string read_value(const std::string& path) {
  std::string text = read_text_file(path);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

void write_value(const std::string& device, const char* name, const std::string& value) {
  const std::string path = queue_file(device, name);
  std::ofstream out(path);
  if (out) out << value << std::flush;
  if (!out)
    throw std::runtime_error("the kernel would not set " + path + " to '" + value + "' (" + std::strerror(errno) +
                             "); it holds '" + read_value(path) + "'");
}

// "none [mq-deadline] kyber" -> "mq-deadline"
std::string active_scheduler(const std::string& text) {
  const std::size_t open = text.find('[');
  const std::size_t close = text.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return text;
  return text.substr(open + 1, close - open - 1);
}

}  // namespace

std::string default_scheduler(bool rotational) { return rotational ? "mq-deadline" : "none"; }

QueueSettings read_queue_settings(const std::string& device) {
  QueueSettings s;
  s.rotational = read_value(queue_file(device, "rotational")) == "1";
  s.write_back = read_value(queue_file(device, "write_cache")) == "write back";
  s.discard = read_value(queue_file(device, "discard_max_bytes")) != "0";
  s.scheduler = active_scheduler(read_value(queue_file(device, "scheduler")));
  return s;
}

bool discard_limit_stuck(const std::string& device) {
  return read_value(queue_file(device, "discard_max_bytes")) == "0" &&
         read_value(queue_file(device, "discard_max_hw_bytes")) != "0";
}

unsigned logical_block_size(const std::string& device) {
  return static_cast<unsigned>(std::stoul(read_value(queue_file(device, "logical_block_size"))));
}

void set_scheduler(const std::string& device, const std::string& scheduler) {
  try {
    write_value(device, "scheduler", scheduler);  // the kernel loads a scheduler's module if it must
  } catch (const std::runtime_error&) {
    throw std::runtime_error("the kernel has no I/O scheduler '" + scheduler + "' for " + device +
                             " (it offers: " + read_value(queue_file(device, "scheduler")) + ")");
  }
}

void apply_queue_settings(const std::string& device, const QueueSettings& want) {
  write_value(device, "rotational", want.rotational ? "1" : "0");
  write_value(device, "write_cache", want.write_back ? "write back" : "write through");
  if (!want.discard) write_value(device, "discard_max_bytes", "0");
  set_scheduler(device, want.scheduler);

  const QueueSettings got = read_queue_settings(device);
  auto check = [&](bool ok, const char* name, const std::string& wanted) {
    if (!ok)
      throw std::runtime_error(device + ": " + queue_file(device, name) + " reads '" +
                               read_value(queue_file(device, name)) + "' after nvj attach set it to '" + wanted + "'");
  };
  check(got.rotational == want.rotational, "rotational", want.rotational ? "1" : "0");
  check(got.write_back == want.write_back, "write_cache", want.write_back ? "write back" : "write through");
  if (!want.discard) check(!got.discard, "discard_max_bytes", "0");
  check(got.scheduler == want.scheduler, "scheduler", want.scheduler);
}

}  // namespace nvj::cli
