// SPDX-License-Identifier: BSD-3-Clause
// The explorer's enumeration: every workload of a bound (seq-1: one core
// operation; seq-2: two; seq-3: three), each core operation drawn from a
// fixed list of variants over the file set (workload.h) and followed by one
// of the persistence calls that fit it (the last never none); or the
// workloads of a listed bound (fstests: fstests.h), in their order. A workload's
// ordinal is its place in that order, so `--workload N` names the same
// workload on every machine as long as this table does not change; its
// setup satisfies each core operation's dependencies from the state the
// steps before leave (a file is created and filled before it is written,
// a name is removed before it is created again). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crashlab/explore/workload.h"

namespace crashlab::explore {

// A bound narrowed as ACE narrowed seq-3 (ace_subset): the operations drawn
// from, the names an operation and its persistence call may use, whether
// sync() is among the persistence calls, and a rule over a workload's core
// steps that keeps it.
struct Restriction {
  std::vector<OpKind> kinds;
  std::vector<std::string> names;  // empty: every name of the file set
  bool sync = true;       // sync() among the persistence calls
  bool fdatasync = true;  // fdatasync(F) among them
  bool (*keep)(const std::vector<Step>& core) = nullptr;
};

class Generator {
 public:
  // `core_ops`: 1 to 3. `kinds`: the operations to draw from (empty: all).
  // std::invalid_argument for a bound outside 1..3.
  Generator(int core_ops, const std::vector<OpKind>& kinds = {});
  // A listed bound: these workloads, in this order (their ordinals their
  // places in it).
  explicit Generator(std::vector<Workload> listed);
  // A bound of `core_ops` narrowed by `restriction`: the workloads of the
  // plain bound over its operations that it keeps, in their order, their
  // ordinals their places among those kept.
  Generator(int core_ops, const Restriction& restriction);

  // How many workloads the bound holds.
  std::uint64_t count() const { return count_; }
  // A listed bound (fstests): its workloads are as they were written, not
  // drawn from choices, so none is reduced to fewer steps.
  bool listed() const { return core_ops_ == 0; }
  // Workload `ordinal` (0 <= ordinal < count()); std::out_of_range past it.
  Workload at(std::uint64_t ordinal) const;

  // A core operation with one persistence call: the unit the enumeration
  // draws from, in its order.
  const std::vector<Step>& choices() const { return choices_; }

 private:
  int core_ops_;  // 0: a listed bound
  std::vector<Workload> listed_;
  std::vector<Step> choices_;  // every (variant, persistence) pair
  std::vector<std::size_t> last_;  // the indices of choices_ whose persistence is not none
  std::uint64_t count_ = 0;
  std::vector<std::uint64_t> kept_;  // a restricted bound with a rule: the plain ordinals it keeps
  std::vector<Step> core_at(std::uint64_t plain) const;  // the core steps of a plain ordinal
};

// ACE's seq-3 subsets (CrashMonkey's ace/specific_generator_scripts), as
// this generator's operations draw them; std::invalid_argument for another
// name.
//   seq-3-data (seq3writegenerator): writes of every kind, mmap writes and
//     fallocate, on A/foo alone; fsync or fdatasync of A/foo or none (no
//     sync); the first an append, never three buffered writes.
//   seq-3-metadata (seq3generator): buffered writes (append, unaligned),
//     link, unlink, rename over files and truncate, in A and B (A/C left
//     out); fsync of what they name, sync or none; never three buffered
//     writes.
//   seq-3-nested (seq3nestedgenerator): link and rename, files and A/C,
//     over A, B and A/C; fsync, sync or none; each operation after the
//     first names a path one before it named.
Restriction ace_subset(const std::string& name);

// The bound's number of core operations: 1, 2 or 3 for "seq-1", "seq-2",
// "seq-3" (and ACE's seq-3 subsets); std::invalid_argument naming the bound
// otherwise.
int bound_named(const std::string& bound);
// The workloads of a bound by its name: seq-1, seq-2 and seq-3 generated,
// seq-3-data, seq-3-metadata and seq-3-nested too (ace_subset: `kinds`
// narrows their operations further);
// fstests listed (fstests.h: each scenario whose core operations are all
// among `kinds`, or every one when `kinds` is empty). std::invalid_argument
// naming an unknown bound, or an fstests bound that `kinds` leaves empty.
Generator generator_named(const std::string& bound, const std::vector<OpKind>& kinds = {});
// The operations of a comma-separated list of names ("" : none, which means
// all to the Generator); std::invalid_argument naming the first unknown one.
std::vector<OpKind> op_kinds_named(const std::string& list);

// The steps that make `core` possible from the start, the setup before each
// core step included, and a sync after the first setup (so that the core
// operations start from a durable tree).
std::vector<Step> with_setup(const std::vector<Step>& core);

}  // namespace crashlab::explore
