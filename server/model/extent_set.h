// ExtentSet: a set of byte ranges, merged: the dirty data in a drive's write
// cache.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace nvj {

class ExtentSet {
 public:
  struct Range {
    std::uint64_t begin;
    std::uint64_t end;  // exclusive
  };

  void insert(std::uint64_t begin, std::uint64_t end);
  void erase(std::uint64_t begin, std::uint64_t end);
  bool contains(std::uint64_t begin, std::uint64_t end) const;
  bool empty() const { return ranges_.empty(); }
  std::uint64_t bytes() const { return bytes_; }
  std::size_t size() const { return ranges_.size(); }

  // The first range that ends after `pos` (an elevator's next stop), else the
  // first range of all (the sweep starts again from the low end).
  std::optional<Range> next_from(std::uint64_t pos) const;

 private:
  std::map<std::uint64_t, std::uint64_t> ranges_;  // begin -> end
  std::uint64_t bytes_ = 0;
};

}  // namespace nvj
