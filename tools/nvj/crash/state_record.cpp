// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/state_record.h"

#include <sstream>
#include <stdexcept>

#include "tools/nvj/crash/results_json.h"

namespace nvj::cli {

namespace {

crashlab::Strategy strategy_named(const std::string& name) {
  for (std::size_t k = 0; k < crashlab::kStrategies; ++k)
    if (name == crashlab::to_string(static_cast<crashlab::Strategy>(k))) return static_cast<crashlab::Strategy>(k);
  throw std::runtime_error("a state's strategy '" + name + "' is none the crash lab has");
}

// Where the states go in the document's text, indented by one space.
constexpr std::string_view kStatesSlot = "\n \"states\": []";

}  // namespace

Json StateRecord::entry() const { return parse_json(line, "the entry of state " + std::to_string(ordinal)); }

StateRecord record_state(Json entry) {
  StateRecord r;
  r.ordinal = entry.at("ordinal").get<std::uint64_t>();
  r.point = entry.at("point").get<std::uint64_t>();
  r.frame = entry.at("frame").get<std::uint64_t>();
  r.strategy = strategy_named(entry.at("strategy").get<std::string>());
  r.verdict = crashlab::verdict_named(entry.at("verdict").get<std::string>()).value_or(crashlab::Verdict::unreadable);
  if (const Json& mark = entry.at("last_mark"); !mark.is_null()) r.last_mark = mark.get<std::string>();
  if (entry.contains("ground_truth")) {
    r.verified = true;
    r.truth_failing = entry["ground_truth"].at("verdict") != "pass";
    r.agree = entry.at("agree").get<bool>();
  }
  r.detailed = entry.contains("kept_changes");
  entry.erase("signature");
  r.signature = entry_signature(entry);
  if (!r.signature.empty()) entry["signature"] = r.signature;
  r.line = to_json_text(entry);
  return r;
}

std::vector<StateRecord> take_states(Json& results) {
  std::vector<StateRecord> out;
  Json& states = results.at("states");
  out.reserve(states.size());
  for (Json& s : states) out.push_back(record_state(std::move(s)));
  states = Json::array();
  return out;
}

void write_results_text(std::ostream& out, const Json& document, const std::vector<StateRecord>& states) {
  const std::string text = to_json_text(document, 1);
  const std::size_t slot = text.find(kStatesSlot);
  if (slot == std::string::npos || !document.at("states").empty())
    throw std::logic_error("write_results_text: the document has no empty \"states\" list");
  const std::size_t open = slot + kStatesSlot.size() - 1;  // the ']' of "[]"
  out.write(text.data(), static_cast<std::streamsize>(open));
  for (std::size_t i = 0; i < states.size(); ++i) {
    out << (i == 0 ? "\n  " : ",\n  ");
    out.write(states[i].line.data(), static_cast<std::streamsize>(states[i].line.size()));
  }
  if (!states.empty()) out << "\n ";
  out.write(text.data() + open, static_cast<std::streamsize>(text.size() - open));
  out << "\n";
}

std::string results_text(const Json& document, const std::vector<StateRecord>& states) {
  std::ostringstream out;
  write_results_text(out, document, states);
  return out.str();
}

}  // namespace nvj::cli
