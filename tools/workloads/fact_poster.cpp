// SPDX-License-Identifier: BSD-3-Clause
#include "tools/workloads/fact_poster.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "common/mark_client.h"
#include "crashlab/facts/fact.h"

namespace nvj::workloads {

namespace fs = std::filesystem;
using crashlab::Fact;
using crashlab::FactKind;

FactPoster::FactPoster(std::string control_socket, const std::string& root) : control_(std::move(control_socket)) {
  const std::string folder = root.empty() ? default_root() : root;
  std::error_code error;
  if (!fs::is_directory(folder, error))
    throw std::invalid_argument("the filesystem's root for facts, " + folder + ", is not a folder");
  root_ = fs::weakly_canonical(fs::absolute(folder)).string();
}

std::string FactPoster::default_root() {
  const char* mnt = std::getenv("NVJ_MNT");
  if (mnt != nullptr && *mnt != '\0') return mnt;
  return fs::current_path().string();
}

std::string FactPoster::relative(const std::string& path) const {
  const fs::path full = fs::weakly_canonical(fs::absolute(path));
  const fs::path rel = full.lexically_relative(root_);
  const std::string text = rel.generic_string();
  if (text.empty() || text == ".." || text.rfind("../", 0) == 0)
    throw std::invalid_argument(path + " is not under the filesystem's root " + root_ +
                                " (facts name paths from it: set NVJ_MNT)");
  return text;
}

void FactPoster::post(const Fact& fact) const { post_mark(control_, crashlab::format_fact(fact)); }

void FactPoster::file(const std::string& path, std::uint64_t size, std::uint32_t crc32c) const {
  if (enabled()) post(Fact{FactKind::file, relative(path), "", size, crc32c});
}

void FactPoster::prefix(const std::string& path, std::uint64_t size, std::uint32_t crc32c) const {
  if (enabled()) post(Fact{FactKind::prefix, relative(path), "", size, crc32c});
}

void FactPoster::entry(const std::string& directory, const std::string& name) const {
  if (enabled()) post(Fact{FactKind::entry, relative(directory), name, 0, 0});
}

void FactPoster::rename(const std::string& from, const std::string& to) const {
  if (enabled()) post(Fact{FactKind::rename, relative(from), relative(to), 0, 0});
}

void FactPoster::rewrite(const std::string& path) const {
  if (enabled()) post(Fact{FactKind::rewrite, relative(path), "", 0, 0});
}

void FactPoster::remove(const std::string& path) const {
  if (enabled()) post(Fact{FactKind::remove, relative(path), "", 0, 0});
}

}  // namespace nvj::workloads
