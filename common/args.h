// A small reader for `nvj COMMAND [--option VALUE | --flag]... [OPERAND]...`.
// Usage errors are thrown as UsageError and end the command with exit 2.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvj::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  Args(std::string command, std::vector<std::string> args) : command_(std::move(command)), args_(std::move(args)) {}

  // Next option name ("--files") or operand; false at the end.
  bool next(std::string& item);
  // The value of the option just read (the next word, or after '=').
  std::string value(const std::string& option);
  std::uint64_t number(const std::string& option, std::uint64_t min, std::uint64_t max);
  // A size in bytes: "250K", "1G", "4096" (binary suffixes, as the plugin's parameters).
  std::uint64_t bytes(const std::string& option, std::uint64_t min, std::uint64_t max);
  [[noreturn]] void unknown(const std::string& item) const;

 private:
  std::string command_;
  std::vector<std::string> args_;
  std::size_t pos_ = 0;
  std::optional<std::string> inline_value_;
};

}  // namespace nvj::cli
