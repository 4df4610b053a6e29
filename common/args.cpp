#include "common/args.h"

#include "common/size.h"

#include <charconv>
#include <stdexcept>
#include <utility>

namespace nvj::cli {

bool Args::next(std::string& item) {
  if (inline_value_) throw UsageError("nvj " + command_ + ": " + item + " takes no value");
  if (pos_ >= args_.size()) return false;
  item = args_[pos_++];
  if (item.rfind("--", 0) == 0) {
    const std::size_t eq = item.find('=');
    if (eq != std::string::npos) {
      inline_value_ = item.substr(eq + 1);
      item.resize(eq);
    }
  }
  return true;
}

std::string Args::value(const std::string& option) {
  if (inline_value_) return *std::exchange(inline_value_, std::nullopt);
  if (pos_ >= args_.size()) throw UsageError("nvj " + command_ + ": " + option + " needs a value");
  return args_[pos_++];
}

std::uint64_t Args::number(const std::string& option, std::uint64_t min, std::uint64_t max) {
  const std::string text = value(option);
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < min || n > max)
    throw UsageError("nvj " + command_ + ": " + option + "=" + text + ": expected a whole number from " +
                     std::to_string(min) + " to " + std::to_string(max));
  return n;
}

std::uint64_t Args::bytes(const std::string& option, std::uint64_t min, std::uint64_t max) {
  const std::string text = value(option);
  std::uint64_t n = 0;
  try {
    n = parse_size(text);
  } catch (const std::invalid_argument& e) {
    throw UsageError("nvj " + command_ + ": " + option + "=" + text + ": " + e.what());
  }
  if (n < min || n > max)
    throw UsageError("nvj " + command_ + ": " + option + "=" + text + ": expected a size from " + format_size(min) +
                     " to " + format_size(max));
  return n;
}

void Args::unknown(const std::string& item) const {
  if (item.rfind("-", 0) == 0)
    throw UsageError("nvj " + command_ + ": unknown option '" + item + "' (nvj " + command_ + " --help)");
  throw UsageError("nvj " + command_ + ": unexpected argument '" + item + "' (nvj " + command_ + " --help)");
}

}  // namespace nvj::cli
