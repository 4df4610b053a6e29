// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/devices/undo_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nvj::cli {
namespace {

// Fields are separated by tabs; paths with tabs or newlines are refused.
std::string encode(const UndoStep& step) {
  std::string line = step.kind;
  for (const auto& a : step.args) {
    if (a.find_first_of("\t\n") != std::string::npos)
      throw std::invalid_argument("'" + a + "' contains a tab or newline");
    line += '\t' + a;
  }
  return line + '\n';
}

void write_synced(const std::filesystem::path& file, const std::string& text, int flags) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0600);
  if (fd < 0) throw std::runtime_error("cannot write " + file.string() + ": " + std::strerror(errno));
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + file.string() + ": " + std::strerror(err));
}

}  // namespace

void UndoLog::append(const UndoStep& step) { write_synced(file_, encode(step), O_APPEND); }

std::vector<UndoStep> UndoLog::read() const {
  std::vector<UndoStep> steps;
  std::ifstream in(file_);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    UndoStep step;
    std::getline(fields, step.kind, '\t');
    std::string arg;
    while (std::getline(fields, arg, '\t')) step.args.push_back(arg);
    steps.push_back(std::move(step));
  }
  return steps;
}

void UndoLog::rewrite(const std::vector<UndoStep>& steps) {
  if (steps.empty()) {
    std::filesystem::remove(file_);
    return;
  }
  std::string text;
  for (const auto& s : steps) text += encode(s);
  const auto tmp = file_.string() + ".tmp";
  write_synced(tmp, text, O_TRUNC);
  std::filesystem::rename(tmp, file_);
}

}  // namespace nvj::cli
