// SPDX-License-Identifier: BSD-3-Clause
// One state checked, as results.json keeps it: its entry (results_json.h's
// state_json, with "signature" last when it fails) as one line of compact
// JSON, beside what the counts, signatures, coverage and report read of
// it. A check of millions of states keeps text and a few numbers per state,
// not a tree of JSON values, so writing results.json, at the end or at a
// signal, is copying lines.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "common/json.h"
#include "crashlab/judge/fast_path.h"
#include "crashlab/states/crash_states.h"

namespace nvj::cli {

struct StateRecord {
  std::uint64_t ordinal = 0, point = 0, frame = 0;
  crashlab::Strategy strategy = crashlab::Strategy::none;
  crashlab::Verdict verdict = crashlab::Verdict::pass;
  bool verified = false;       // the kernel checked it too (a "ground_truth")
  bool truth_failing = false;  // and it does not pass there
  bool agree = true;           // the kernel's and the fast path's verdicts agree
  bool detailed = false;       // with the changes it kept and dropped, and its cause
  std::string last_mark;       // the last mark's label, "" for none
  std::string signature;       // "" for a state that passes both checks
  std::string line;            // the entry, compact JSON

  bool failing() const { return !signature.empty(); }
  Json entry() const;  // the line read back
};

// The record of `entry`, whose "signature" is set again (last) when it
// fails. Throws naming the key an entry from a file lacks.
StateRecord record_state(Json entry);

// The records of a results document's "states", which is left an empty
// list (results_text puts the records back there).
std::vector<StateRecord> take_states(Json& results);

// results.json's text: `document` (indented by one space) with its empty
// "states" list replaced by the records' lines, one state a line; written
// to `out` as it goes, or returned.
void write_results_text(std::ostream& out, const Json& document, const std::vector<StateRecord>& states);
std::string results_text(const Json& document, const std::vector<StateRecord>& states);

}  // namespace nvj::cli
