// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/guest_console.h"

#include <charconv>
#include <utility>

#include "tools/nvj/host/files/text_pattern.h"

namespace nvj::cli {
namespace {

constexpr std::size_t kTailLines = 30;

// The kernel's "[   12.345678] " before a line it logs.
const TextPattern& timestamp() {
  static const TextPattern pattern(R"(^\[ *[0-9]+\.[0-9]+\] )");
  return pattern;
}

}  // namespace

std::string without_timestamp(const std::string& line) {
  if (const auto m = timestamp().search(line)) return line.substr(m->end);
  return line;
}

GuestConsole::GuestConsole(std::string token) : prefix_("nvj-vm:" + token + ":") {}

std::vector<ConsoleLine> GuestConsole::feed(std::string_view bytes) {
  partial_.append(bytes);
  std::vector<ConsoleLine> lines;
  std::size_t start = 0;
  for (std::size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(classify(partial_.substr(start, nl - start)));
  partial_.erase(0, start);
  return lines;
}

std::vector<ConsoleLine> GuestConsole::finish() {
  if (partial_.empty()) return {};
  std::vector<ConsoleLine> lines{classify(std::exchange(partial_, {}))};
  return lines;
}

ConsoleLine GuestConsole::classify(std::string line) {
  // The serial line ends lines with CR LF; a progress bar redraws its line
  // after a bare CR: what a terminal would show is what follows the last.
  while (!line.empty() && line.back() == '\r') line.pop_back();
  if (const std::size_t cr = line.rfind('\r'); cr != std::string::npos) line.erase(0, cr + 1);
  // And the terminal controls it used (ESC [ K, clear to the end of line).
  static const TextPattern control("\x1b\\[[0-9;?]*[A-Za-z]");
  if (line.find('\x1b') != std::string::npos) line = control.replace(line, "");
  tail_.push_back(line);
  if (tail_.size() > kTailLines) tail_.pop_front();

  if (const std::size_t at = line.find(prefix_); at != std::string::npos) {
    const std::string rest = line.substr(at + prefix_.size());
    const std::string word = rest.substr(0, rest.find(' '));
    const std::string arg = rest.size() > word.size() ? rest.substr(word.size() + 1) : "";
    if (word == "begin") {
      begun_ = true;
    } else if (word == "end") {
      ended_ = true;
      std::from_chars(arg.data(), arg.data() + arg.size(), status_);
    } else if (word == "fail") {
      failure_ = arg;
    } else if (word == "unmounted") {
      unmounted_ = true;
    } else if (word == "kernel") {
      filesystem_log_.push_back(without_timestamp(arg));
    }
    return {ConsoleLine::Kind::marker, line};
  }
  if (!begun_ || ended_) return {ConsoleLine::Kind::boot, line};
  if (timestamp().search(line)) return {ConsoleLine::Kind::kernel, line};
  return {ConsoleLine::Kind::output, line};
}

std::string GuestConsole::tail() const {
  std::string out;
  for (const auto& l : tail_) out += "  " + l + "\n";
  return out;
}

}  // namespace nvj::cli
