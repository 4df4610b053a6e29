// SPDX-License-Identifier: BSD-3-Clause
// FactPoster: a workload's facts (crashlab/facts/fact.h) posted as marks to
// the server's control socket (common/mark_client.h), so that a recording
// running there holds the oracle the crash lab checks crash states against.
// Paths are made relative to the filesystem's root: the folder given, or
// $NVJ_MNT (what `nvj crash run` sets for its workload), or the current
// folder. Without a control socket nothing is posted.
//
// When to post: file, prefix and entry after the call that made them durable has
// returned, rename, rewrite and remove before the call (crashlab/facts/fact.h).
#pragma once

#include <cstdint>
#include <string>

namespace crashlab {
struct Fact;
}

namespace nvj::workloads {

class FactPoster {
 public:
  FactPoster() = default;
  // Throws std::invalid_argument when `root` (or the default) is not a folder.
  FactPoster(std::string control_socket, const std::string& root);

  // $NVJ_MNT, or the current folder.
  static std::string default_root();

  bool enabled() const { return !control_.empty(); }
  // `path` (absolute or from the current folder) under the root, as a
  // fact names it; throws std::invalid_argument for a path outside it.
  std::string relative(const std::string& path) const;

  // Each throws MarkError (common/mark_client.h) when the server does not
  // take the mark. No-ops when not enabled.
  void file(const std::string& path, std::uint64_t size, std::uint32_t crc32c) const;
  // The first `size` bytes (the file may grow past them).
  void prefix(const std::string& path, std::uint64_t size, std::uint32_t crc32c) const;
  void entry(const std::string& directory, const std::string& name) const;
  void rename(const std::string& from, const std::string& to) const;
  void rewrite(const std::string& path) const;
  void remove(const std::string& path) const;

 private:
  void post(const crashlab::Fact& fact) const;

  std::string control_;
  std::string root_;  // absolute, normalised
};

}  // namespace nvj::workloads
