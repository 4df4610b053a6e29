// SPDX-License-Identifier: BSD-3-Clause
// Test support: JSON checked against the schemas published in docs/schemas
// by tests/support/validate_json.py (Debian's python3-jsonschema).
//
// Needs NVJ_SOURCE_DIR (the source tree) defined by the test's build.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/json.h"
#include "tools/nvj/host/processes/process.h"

namespace nvj::test {

struct SchemaVerdict {
  bool valid = false;
  std::string report;  // the validator's words: file, JSON path, what failed
};

inline std::string schema_file(const std::string& name) {
  return std::string(NVJ_SOURCE_DIR) + "/docs/schemas/" + name + ".schema.json";
}

// `file` (with `lines`: one document per line) against docs/schemas/NAME.schema.json,
// or against the schema file `name` when it names one (it ends in ".json").
// Throws when the validator cannot run or the schema is bad.
inline SchemaVerdict check_schema_file(const std::string& name, const std::filesystem::path& file, bool lines = false) {
  const std::string schema = name.ends_with(".json") ? name : schema_file(name);
  std::vector<std::string> argv{std::string(NVJ_SOURCE_DIR) + "/tests/support/validate_json.py"};
  if (lines) argv.emplace_back("--lines");
  argv.push_back(schema);
  argv.push_back(file.string());
  const cli::RunResult r = cli::run(argv);
  if (r.status != 0 && r.status != 1)
    throw std::runtime_error("validate_json.py exited " + std::to_string(r.status) + ": " + r.output);
  return {r.status == 0, r.output};
}

// The same for a document in memory (written to a temporary file named
// `label` in the report).
inline SchemaVerdict check_schema(const std::string& name, const std::string& text, const std::string& label = "json",
                                  bool lines = false) {
  const auto dir = std::filesystem::temp_directory_path();
  std::string templ = (dir / ("nvj-" + label + "-XXXXXX")).string();
  const int fd = ::mkstemp(templ.data());
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  struct Remove {
    std::string path;
    ~Remove() { std::filesystem::remove(path); }
  } remove{templ};
  if (done != text.size()) throw std::runtime_error("cannot write " + templ);
  return check_schema_file(name, templ, lines);
}

// A Catch check that `text` is valid against docs/schemas/NAME.schema.json;
// on failure the validator's report says where and why.
inline void check_valid(const std::string& name, const std::string& text, bool lines = false) {
  const SchemaVerdict v = check_schema(name, text, name, lines);
  INFO(v.report);
  CHECK(v.valid);
}

}  // namespace nvj::test
