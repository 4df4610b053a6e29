// SPDX-License-Identifier: BSD-3-Clause
// The bound `fstests`: the scenarios of fstests' generic tests that cut the
// power after a short sequence of operations (dm-flakey's drop of unflushed
// writes, or dm-log-writes' replay) and check what survived, written again
// as the explorer's steps over names of our own (A, B, foo, bar, ...), each
// with the facts its test asserts after its power cut (Step::expect of its
// last step: nothing follows them that could end them), citing the test. Only what the test asserts: a test that checks that the
// filesystem mounts and its fsck is clean has no expectation (the oracle's
// rules and the structure check still apply). Sizes are the explorer's (a
// fill is 8 KiB, an append 4 KiB) where the test's own sizes only make the
// data; docs/explore-rules.md lists every such test, the ones left out and
// why. Read from kdave/xfstests (GPL-2.0), not copied: the steps and the
// purposes are ours. Pure.
#pragma once

#include <vector>

#include "crashlab/explore/oracle.h"
#include "crashlab/explore/workload.h"

namespace crashlab::explore {

struct Scenario {
  std::string name;   // "generic/335: rename_new(A/B/foo,C/foo); creat(A/bar) fsync(A); fsync(C/foo)"
  std::string test;   // "generic/335"
  std::vector<Step> steps;  // setup first (made durable by a sync), then the test's own steps
};

// Every scenario, in the bound's order (the tests' numbers; a test with
// several cases, in its order).
const std::vector<Scenario>& fstests_scenarios();

// A rule for each test the scenarios cite: id "generic/NNN", its purpose
// in a line, its source.
const std::vector<Rule>& fstests_rules();

}  // namespace crashlab::explore
