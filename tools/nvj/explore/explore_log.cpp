// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/explore/explore_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "tools/nvj/host/files/text_file.h"

namespace nvj::cli {

namespace fs = std::filesystem;

namespace {

const char* const kPlan = "plan.json";
const char* const kOutcomes = "outcomes.jsonl";

std::runtime_error bad(const fs::path& file, const std::string& what) {
  return std::runtime_error(file.string() + ": " + what);
}

void sync_file(const fs::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid() || ::fsync(fd.get()) != 0) throw bad(path, std::string("fsync: ") + std::strerror(errno));
}

}  // namespace

void write_plan(const fs::path& out, const ExplorePlan& plan) {
  const fs::path file = out / kPlan, beside = out / (std::string(kPlan) + ".new");
  write_text_file(beside, to_json_text(Json{{"options", plan.options}, {"workloads", plan.workloads}}, 2) + "\n");
  sync_file(beside);
  fs::rename(beside, file);
  sync_file(out);
}

ExplorePlan read_plan(const fs::path& out) {
  const fs::path file = out / kPlan;
  if (!fs::exists(file)) throw bad(file, "no such file: not the folder of an exploration that can be resumed");
  const Json j = parse_json(read_text_file(file), file.string());
  if (!j.is_object() || !j.contains("options") || !j.at("options").is_object() || !j.contains("workloads") ||
      !j.at("workloads").is_array())
    throw bad(file, "not a plan (options and workloads expected)");
  ExplorePlan plan{j.at("options"), {}};
  for (const Json& n : j.at("workloads")) {
    if (!n.is_number_unsigned()) throw bad(file, "a workload that is no ordinal: " + to_json_text(n));
    plan.workloads.push_back(n.get<std::uint64_t>());
  }
  return plan;
}

std::vector<LoggedOutcome> read_outcomes(const fs::path& out) {
  const fs::path file = out / kOutcomes;
  std::vector<LoggedOutcome> outcomes;
  const std::string text = read_text_file(file);  // "": none yet
  std::vector<std::string> lines;
  const bool whole = text.empty() || text.back() == '\n';
  std::istringstream split(text);
  for (std::string line; std::getline(split, line);) lines.push_back(line);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i + 1 == lines.size() && !whole) break;  // cut short by a kill: its workload runs again
    const std::string where = file.string() + ", line " + std::to_string(i + 1);
    const Json j = parse_json(lines[i], where);
    const auto entry_ok = [&] {
      const Json& e = j.at("entry");
      return e.is_object() && e.contains("ordinal") && e.at("ordinal") == j.at("ordinal") && e.contains("states") &&
             e.at("states").is_number_unsigned() && e.contains("failing") && e.at("failing").is_number_unsigned() &&
             e.contains("error") && e.contains("oracle_error");
    };
    if (!j.is_object() || !j.contains("ordinal") || !j.at("ordinal").is_number_unsigned() || !j.contains("entry") ||
        !entry_ok() || !j.contains("phases") || !j.at("phases").is_array() || !j.contains("status") ||
        !j.at("status").is_number_integer())
      throw std::runtime_error(where + ": not a workload's outcome (ordinal, entry, phases and status expected)");
    LoggedOutcome o{j.at("ordinal").get<std::uint64_t>(), j.at("entry"), {}, j.at("status").get<int>()};
    for (const Json& s : j.at("phases")) {
      if (!s.is_number()) throw std::runtime_error(where + ": a phase's time that is no number");
      o.phases.push_back(s.get<double>());
    }
    outcomes.push_back(std::move(o));
  }
  return outcomes;
}

OutcomeLog::OutcomeLog(const fs::path& out)
    : path_(out / kOutcomes), fd_(::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {
  if (!fd_.valid()) throw bad(path_, std::strerror(errno));
  // A line a kill cut short goes, so that the next one starts a line.
  const std::string text = read_text_file(path_);
  const std::size_t whole = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  if (whole != text.size() && ::ftruncate(fd_.get(), static_cast<off_t>(whole)) != 0)
    throw bad(path_, std::string("ftruncate: ") + std::strerror(errno));
}

void OutcomeLog::append(const LoggedOutcome& o) {
  const std::string line =
      to_json_text(Json{{"ordinal", o.ordinal}, {"entry", o.entry}, {"phases", o.phases}, {"status", o.status}}) + "\n";
  for (std::size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(fd_.get(), line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw bad(path_, std::string("write: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd_.get()) != 0) throw bad(path_, std::string("fdatasync: ") + std::strerror(errno));
}

}  // namespace nvj::cli
