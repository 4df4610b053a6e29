// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/explore/fstests.h"

#include <iterator>
#include <utility>

namespace crashlab::explore {

namespace {

using K = OpKind;
using F = FactKind;

// One scenario as its test runs it: setup steps (until the first sync), then
// the test's own, each persistence call on the step before it (or on a step
// of its own when that one has one already), then what the test asserts.
class Script {
 public:
  explicit Script(std::string test) : test_(std::move(test)) {}

  Script& setup(K kind, std::string path, std::string second = "") { return add(kind, std::move(path), std::move(second), true); }
  Script& op(K kind, std::string path, std::string second = "") { return add(kind, std::move(path), std::move(second), false); }
  Script& sync() { return persist(Persist::sync, ""); }
  Script& fsync(std::string path) { return persist(Persist::fsync, std::move(path)); }
  // What the test asserts once the last step has returned, each fact's
  // value read from the live tree then.
  Script& expect(F kind, const std::string& path) {
    steps_.back().expect.push_back(Expect{kind, path, test_});
    return *this;
  }
  Script& expect(F kind, std::initializer_list<const char*> paths) {
    for (const char* p : paths) expect(kind, p);
    return *this;
  }

  Scenario done() const {
    std::vector<Step> core;
    for (const Step& s : steps_)
      if (!s.setup) core.push_back(s);
    return Scenario{test_ + ": " + name_of(core), test_, steps_};
  }

 private:
  Script& add(K kind, std::string path, std::string second, bool setup) {
    Step s;
    s.op = Op{kind, std::move(path), std::move(second)};
    s.setup = setup;
    steps_.push_back(std::move(s));
    return *this;
  }
  Script& persist(Persist p, std::string path) {
    if (steps_.empty() || steps_.back().persist != Persist::none) add(K::nothing, "", "", !steps_.empty() && steps_.back().setup);
    steps_.back().persist = p;
    steps_.back().persist_path = std::move(path);
    return *this;
  }

  std::string test_;
  std::vector<Step> steps_;
};

// generic/520 (from CrashMonkey): a hard link made, then one object
// persisted. Each group: the link's source and name, then the objects
// fsynced (those marked * are the cases whose test asserts that the source
// is there with two links; the others check only that it mounts), then sync
// (asserting).
void add_link_cases(std::vector<Scenario>& out) {
  struct Group {
    const char* src;
    const char* dest;
    std::vector<std::pair<const char*, bool>> persisted;
  };
  const std::vector<Group> groups{
      {"foo", "bar", {{".", false}, {"foo", true}, {"bar", true}}},
      {"foo", "A/bar", {{".", false}, {"foo", true}, {"bar", false}, {"A", false}, {"A/bar", true}, {"A/foo", false}}},
      {"A/foo", "bar", {{".", false}, {"foo", false}, {"bar", true}, {"A", false}, {"A/bar", false}, {"A/foo", true}}},
      {"A/foo", "A/bar", {{".", false}, {"A", false}, {"A/bar", true}, {"A/foo", true}}},
      {"bar", "A/bar", {{".", false}, {"foo", false}, {"bar", true}, {"A", false}, {"A/bar", true}, {"A/foo", false}}},
      {"A/bar", "bar", {{".", false}, {"foo", false}, {"bar", true}, {"A", false}, {"A/bar", true}, {"A/foo", false}}},
  };
  for (const Group& g : groups) {
    const bool in_a = std::string(g.src).rfind("A/", 0) == 0 || std::string(g.dest).rfind("A/", 0) == 0;
    const auto start = [&] {
      Script s("generic/520");
      if (in_a) s.op(K::mkdir, "A");
      s.op(K::creat, g.src).op(K::link, g.src, g.dest);
      return s;
    };
    for (const auto& [p, asserts] : g.persisted) {
      Script s = start();
      const std::string object = p;
      const bool there = object == g.src || object == g.dest || object == "." || object == "A";
      if (!there) s.op(K::creat, object);  // the test touches a sibling that is not there
      s.fsync(object);
      if (asserts) s.expect(F::entry, g.src).expect(F::nlink, g.src);
      out.push_back(s.done());
    }
    Script s = start();
    s.sync().expect(F::entry, g.src).expect(F::nlink, g.src);
    out.push_back(s.done());
  }
}

// The scenarios of generic/034 to generic/073, in the tests' order.
void add_generic_034_to_073(std::vector<Scenario>& out) {
  {
    Script s("generic/034");
    s.setup(K::mkdir, "A").setup(K::creat, "A/foo").sync();
    s.op(K::creat, "A/bar").fsync("A").fsync("A/bar").expect(F::entry, {"A/foo", "A/bar"});
    out.push_back(s.done());
  }
  {
    Script s("generic/039");
    s.setup(K::mkdir, "A").setup(K::mkdir, "A/B").setup(K::creat, "A/B/foo").setup(K::fill, "A/B/foo");
    s.setup(K::link, "A/B/foo", "A/B/bar").sync();
    s.op(K::unlink, "A/B/bar").fsync("A/B/foo").expect(F::entry, {"A", "A/B"});
    out.push_back(s.done());
  }
  {
    Script s("generic/056");
    s.op(K::creat, "foo").op(K::fill, "foo").fsync("foo").op(K::link, "foo", "foo_link").op(K::creat, "bar");
    s.fsync("bar").expect(F::file, "foo");
    out.push_back(s.done());
  }
  {
    Script s("generic/057");
    s.setup(K::creat, "foo").setup(K::fill, "foo").sync();
    s.op(K::write_append, "foo").fsync("foo").op(K::link, "foo", "foo_link").op(K::creat, "bar").fsync("bar");
    s.expect(F::file, "foo");
    out.push_back(s.done());
  }
  {
    Script s("generic/065");
    s.setup(K::creat, "foo").setup(K::fill, "foo").setup(K::mkdir, "A").sync();
    s.op(K::link, "foo", "A/foo_2").op(K::link, "foo", "A/foo_3").op(K::creat, "hello").op(K::fill, "hello");
    s.op(K::link, "hello", "A/hello_2").op(K::mkdir, "A/x").op(K::mkdir, "A/x/y").op(K::mkdir, "A/x/y/z");
    s.op(K::link, "foo", "A/x/y/foo_y").op(K::link, "foo", "A/x/y/z/foo_z").op(K::creat, "A/x/y/z/qwerty");
    s.fsync("A").fsync("hello");
    s.expect(F::file, {"foo", "hello"}).expect(F::nlink, "foo");
    s.expect(F::entry, {"A/foo_2", "A/foo_3", "hello", "A/hello_2", "A/x/y/foo_y", "A/x/y/z/foo_z", "A/x/y/z/qwerty"});
    out.push_back(s.done());
  }
  {
    Script s("generic/066");
    s.setup(K::creat, "foo").setup(K::setxattr, "foo").sync();
    s.op(K::removexattr, "foo").fsync("foo").expect(F::xattr, "foo");
    out.push_back(s.done());
  }
  {
    Script s("generic/073");
    s.setup(K::creat, "foo").setup(K::fill, "foo").setup(K::mkdir, "A").setup(K::creat, "A/bar");
    s.setup(K::mkdir, "B").sync();
    s.op(K::write_append, "foo").op(K::rename_new, "A/bar", "B/bar").fsync("A").fsync("foo").expect(F::file, "foo");
    out.push_back(s.done());
  }
}

// The scenarios of generic/090 to generic/107, in the tests' order.
void add_generic_090_to_107(std::vector<Scenario>& out) {
  {
    Script s("generic/090");
    s.setup(K::creat, "foo").setup(K::fill, "foo").sync().setup(K::link, "foo", "bar").sync();
    s.op(K::write_append, "foo").fsync("foo").expect(F::file, "foo");
    out.push_back(s.done());
  }
  {
    Script s("generic/101");
    s.setup(K::creat, "foo").setup(K::fill, "foo").setup(K::creat, "bar").setup(K::fill, "bar").sync();
    s.op(K::truncate_shrink, "foo").op(K::truncate_grow, "foo").fsync("foo");
    s.op(K::truncate_shrink, "bar").op(K::truncate_grow, "bar").fsync("bar").expect(F::file, {"foo", "bar"});
    out.push_back(s.done());
  }
  {
    Script s("generic/104");
    s.setup(K::mkdir, "A").setup(K::creat, "A/foo").setup(K::creat, "A/bar").sync();
    s.op(K::link, "A/bar", "A/bar_link").op(K::link, "A/foo", "A/foo_link").fsync("A/bar");
    s.expect(F::nlink, {"A/foo", "A/bar"});
    out.push_back(s.done());
  }
  {
    Script s("generic/106");
    s.setup(K::mkdir, "A").setup(K::creat, "A/foo").setup(K::link, "A/foo", "A/bar").sync();
    s.op(K::unlink, "A/bar").fsync("A/foo").expect(F::entry, "A/foo").expect(F::absent, "A/bar");
    out.push_back(s.done());
  }
  {
    Script s("generic/107");
    s.setup(K::mkdir, "A").setup(K::creat, "foo").setup(K::link, "foo", "A/foo2").setup(K::link, "foo", "A/foo3");
    s.sync();
    s.op(K::unlink, "A/foo3").fsync("foo").expect(F::entry, "A/foo2").expect(F::absent, "A/foo3");
    out.push_back(s.done());
  }
}

// The scenarios of generic/321 to generic/343, in the tests' order.
void add_generic_321_to_343(std::vector<Scenario>& out) {
  {
    Script s("generic/321");
    s.op(K::mkdir, "A").fsync("A").expect(F::entry, "A").expect(F::mode, "A");
    out.push_back(s.done());
  }
  for (const bool xattr : {false, true}) {
    Script s("generic/321");
    s.op(K::creat, "foo").op(K::mkdir, "A").fsync("foo").op(K::rename_new, "foo", "A/foo").fsync("A");
    if (xattr) s.op(K::setxattr, "A/foo");
    s.fsync("A/foo").expect(F::entry, {"A", "A/foo"}).expect(F::absent, "foo").expect(F::mode, "A/foo");
    out.push_back(s.done());
  }
  {
    Script s("generic/322");
    s.op(K::creat, "foo").op(K::fill, "foo").fsync("foo").op(K::rename_new, "foo", "bar").fsync("bar");
    s.expect(F::file, "bar");
    out.push_back(s.done());
  }
  {
    Script s("generic/335");
    s.setup(K::mkdir, "A").setup(K::mkdir, "A/B").setup(K::mkdir, "C").setup(K::creat, "A/B/foo").sync();
    s.op(K::rename_new, "A/B/foo", "C/foo").op(K::creat, "A/bar").fsync("A").fsync("C/foo");
    s.expect(F::entry, {"A/B", "A/bar", "C/foo"}).expect(F::absent, "A/B/foo");
    out.push_back(s.done());
  }
  {
    Script s("generic/336");
    s.setup(K::mkdir, "A").setup(K::mkdir, "B").setup(K::mkdir, "C").setup(K::creat, "A/foo");
    s.setup(K::link, "A/foo", "B/foo_link").setup(K::creat, "B/bar").sync();
    s.op(K::unlink, "B/foo_link").op(K::rename_new, "B/bar", "C/bar").fsync("A/foo");
    s.expect(F::entry, {"A/foo", "C/bar"}).expect(F::absent, {"B/foo_link", "B/bar"});
    out.push_back(s.done());
  }
  {
    Script s("generic/341");
    s.setup(K::mkdir, "A").setup(K::mkdir, "A/x").setup(K::creat, "A/x/foo").setup(K::fill, "A/x/foo");
    s.setup(K::creat, "A/x/bar").setup(K::fill, "A/x/bar").sync();
    s.op(K::rename_dir, "A/x", "A/y").op(K::mkdir, "A/x").fsync("A/x");
    s.expect(F::entry, {"A/x", "A/y", "A/y/foo", "A/y/bar"}).expect(F::absent, {"A/x/foo", "A/x/bar"});
    s.expect(F::file, {"A/y/foo", "A/y/bar"});
    out.push_back(s.done());
  }
  {
    Script s("generic/342");
    s.setup(K::mkdir, "A").setup(K::creat, "A/foo").setup(K::fill, "A/foo").sync();
    s.op(K::rename_new, "A/foo", "A/bar").op(K::creat, "A/foo").op(K::fill, "A/foo").fsync("A/foo");
    s.expect(F::entry, {"A/foo", "A/bar"}).expect(F::file, {"A/foo", "A/bar"});
    out.push_back(s.done());
  }
  {
    Script s("generic/343");
    s.setup(K::mkdir, "A").setup(K::mkdir, "B").setup(K::creat, "A/foo").setup(K::mkdir, "B/z");
    s.setup(K::creat, "B/foo2").sync();
    s.op(K::link, "A/foo", "A/bar").op(K::rename_dir, "B/z", "A/z").op(K::rename_new, "B/foo2", "A/foo2");
    s.fsync("A/bar").expect(F::entry, {"A/foo", "A/bar", "A/foo2", "A/z"}).expect(F::absent, {"B/z", "B/foo2"});
    out.push_back(s.done());
  }
}

// The scenarios of generic/348 to generic/510, in the tests' order.
void add_generic_348_to_510(std::vector<Scenario>& out) {
  {
    Script s("generic/348");
    s.setup(K::mkdir, "A").sync();
    s.op(K::symlink, "A/bar", "foo1").fsync("A").op(K::mkdir, "B").op(K::symlink, "B/bar", "foo2").fsync("B");
    s.expect(F::symlink, {"A/bar", "B/bar"});
    out.push_back(s.done());
  }
  {
    Script s("generic/376");
    s.setup(K::mkdir, "A").setup(K::creat, "A/foo").sync();
    s.op(K::rename_new, "A/foo", "A/bar").op(K::creat, "A/foo").fsync("A/bar").expect(F::entry, {"A/foo", "A/bar"});
    out.push_back(s.done());
  }
  {
    Script s("generic/479");
    s.setup(K::mkdir, "A").setup(K::symlink, "A/foo", "xxx").sync();
    s.op(K::creat, "A/f1").fsync("A/f1").op(K::rename_new, "A/foo", "A/bar").op(K::link, "A/bar", "A/foo");
    s.op(K::creat, "f2").fsync("f2");
    out.push_back(s.done());
  }
  {
    Script s("generic/480");
    s.setup(K::mkdir, "A").setup(K::creat, "A/foo").setup(K::link, "A/foo", "A/bar").sync();
    s.op(K::unlink, "A/bar").op(K::creat, "A/bar").fsync("A/bar");
    out.push_back(s.done());
  }
  {
    Script s("generic/481");
    s.op(K::creat, "foo").fsync("foo");
    out.push_back(s.done());
  }
  {
    Script s("generic/489");
    s.setup(K::creat, "foo").setup(K::setxattr, "foo").fsync("foo").sync();
    s.op(K::fill, "foo").fsync("foo").expect(F::xattr, "foo").expect(F::file, "foo");
    out.push_back(s.done());
  }
  {
    Script s("generic/498");
    s.op(K::mkdir, "A").op(K::mkdir, "B").op(K::mkdir, "A/C").op(K::creat, "B/foo").fsync("B/foo");
    s.op(K::link, "B/foo", "A/C/foo").fsync("A").expect(F::entry, {"A", "B/foo"});
    out.push_back(s.done());
  }
  {
    Script s("generic/502");
    s.setup(K::mkdir, "A").setup(K::creat, "A/foo").setup(K::link, "A/foo", "A/bar").sync();
    s.op(K::rename_new, "A/foo", "A/qwerty").op(K::rename_new, "A/bar", "A/foo").op(K::creat, "A/bar");
    s.fsync("A/bar").expect(F::entry, {"A/bar", "A/foo", "A/qwerty"});
    out.push_back(s.done());
  }
  {
    Script s("generic/510");
    s.setup(K::mkdir, "A").setup(K::mkdir, "A/C").setup(K::mkdir, "A/D").setup(K::creat, "A/D/bar").sync();
    s.op(K::rename_new, "A/D/bar", "A/C/bar").op(K::rename_dir, "A/C", "A/D").fsync("A/D/bar");
    s.expect(F::entry, {"A/D", "A/D/bar"}).expect(F::absent, "A/C");
    out.push_back(s.done());
  }
}

// The scenarios of generic/526 to generic/557, in the tests' order.
void add_generic_526_to_557(std::vector<Scenario>& out) {
  {
    Script s("generic/526");
    s.setup(K::mkdir, "A").setup(K::creat, "A/foo").setup(K::fill, "A/foo").setup(K::creat, "A/hello");
    s.setup(K::fill, "A/hello").sync();
    s.op(K::rename_new, "A/foo", "A/f3").op(K::rename_new, "A/hello", "A/f4").op(K::link, "A/f3", "A/hello");
    s.op(K::creat, "A/foo").op(K::fill, "A/foo").fsync("A/foo");
    s.expect(F::file, {"A/foo", "A/hello", "A/f3", "A/f4"});
    out.push_back(s.done());
  }
  {
    Script s("generic/527");
    s.setup(K::mkdir, "A").setup(K::creat, "A/foo").setup(K::fill, "A/foo").setup(K::creat, "A/hello");
    s.setup(K::fill, "A/hello").setup(K::mkdir, "B").setup(K::creat, "B/zz").setup(K::fill, "B/zz");
    s.setup(K::link, "B/zz", "B/zz_link").setup(K::creat, "B/a").setup(K::fill, "B/a").sync();
    s.op(K::rename_new, "A/foo", "A/f3").op(K::unlink, "A/hello").op(K::link, "A/f3", "A/hello");
    s.op(K::creat, "A/foo").op(K::fill, "A/foo").fsync("A/foo");
    s.op(K::rename_new, "B/a", "B/tmp").op(K::rename_new, "B/zz_link", "B/a").op(K::rename_new, "B/tmp", "B/zz_link");
    s.op(K::rename_new, "B/zz", "B/a2").op(K::creat, "B/zz").op(K::fill, "B/zz").fsync("B/zz");
    s.expect(F::file, {"A/foo", "A/hello", "A/f3", "B/a", "B/a2", "B/zz", "B/zz_link"});
    out.push_back(s.done());
  }
  {
    Script s("generic/534");
    s.op(K::creat, "foo").op(K::fill, "foo").fsync("foo").op(K::truncate_shrink, "foo");
    s.op(K::rename_new, "foo", "bar").fsync("bar").expect(F::entry, "bar").expect(F::absent, "foo").expect(F::file, "bar");
    out.push_back(s.done());
  }
  for (const bool dir : {false, true}) {
    Script s("generic/535");
    const char* p = dir ? "A" : "foo";
    s.setup(dir ? K::mkdir : K::creat, p).setup(K::chmod, p, "0777").sync();
    s.op(K::chmod, p, "0755").fsync(p).expect(F::mode, p);
    out.push_back(s.done());
  }
  {
    Script s("generic/552");
    s.op(K::mkdir, "A").op(K::creat, "A/foo").op(K::creat, "A/bar").op(K::fill, "A/bar").op(K::write_direct, "A/bar");
    s.fsync("A/foo").op(K::rename_new, "A/bar", "A/baz").fsync("A/baz").expect(F::file, "A/baz");
    out.push_back(s.done());
  }
  {
    Script s("generic/557");
    s.op(K::mkdir, "A").op(K::creat, "A/foo").fsync("A/foo").op(K::unlink, "A/foo").fsync("A");
    s.expect(F::absent, "A/foo");
    out.push_back(s.done());
  }
}

// The scenarios of generic/640 to generic/785, in the tests' order.
void add_generic_640_to_785(std::vector<Scenario>& out) {
  {
    Script s("generic/640");
    s.setup(K::mkdir, "A").setup(K::mkdir, "B").setup(K::creat, "A/foo").setup(K::fill, "A/foo").sync();
    s.op(K::creat, "A/bar").fsync("A").op(K::rename_new, "A/foo", "B/foo").op(K::creat, "baz").fsync("baz");
    s.expect(F::entry, {"A/bar", "baz"});  // foo under one of its names: the rule rename-keeps
    out.push_back(s.done());
  }
  {
    Script s("generic/690");
    s.setup(K::mkdir, "A").sync();
    s.op(K::creat, "A/foo").fsync("A").op(K::symlink, "A/bar", "A/foo").op(K::rename_new, "A/bar", "A/baz");
    s.fsync("A").expect(F::symlink, "A/baz");
    out.push_back(s.done());
  }
  {
    Script s("generic/779");
    s.op(K::mkdir, "A").op(K::symlink, "A/old", "foobar").fsync("A").op(K::rename_new, "A/old", "A/new").fsync("A");
    s.expect(F::symlink, "A/new");
    out.push_back(s.done());
  }
  {
    Script s("generic/782");
    s.setup(K::creat, "foo").sync();
    s.op(K::mkdir, "A").op(K::fill, "foo").fsync("foo").op(K::link, "foo", "A/bar").fsync(".");
    s.expect(F::entry, {"A", "foo"}).expect(F::file, "foo");
    out.push_back(s.done());
  }
  {
    Script s("generic/784");
    s.setup(K::mkdir, "A").setup(K::mkdir, "B").sync();
    s.op(K::rename_dir, "A", "B/A").op(K::creat, "A").fsync("A").op(K::rename_new, "A", "B/foo").fsync("B/foo");
    s.expect(F::entry, {"B", "B/A", "B/foo"}).expect(F::absent, "A");
    out.push_back(s.done());
  }
  {
    Script s("generic/785");
    s.setup(K::creat, "f1").sync();
    s.op(K::fill, "f1").fsync("f1").op(K::mkdir, "A").op(K::creat, "A/foo").op(K::rename_new, "f1", "f2").fsync(".");
    s.expect(F::entry, {"A", "A/foo", "f2"}).expect(F::absent, "f1").expect(F::file, "f2");
    out.push_back(s.done());
  }
}

// Every scenario, in the bound's order (its indices are the workloads' ordinals).
std::vector<Scenario> make_scenarios() {
  std::vector<Scenario> out;
  add_generic_034_to_073(out);
  add_generic_090_to_107(out);
  add_generic_321_to_343(out);
  add_generic_348_to_510(out);
  add_link_cases(out);
  add_generic_526_to_557(out);
  add_generic_640_to_785(out);
  return out;
}

// A rule for each test the scenarios cite: the purposes in our words; the
// source, the test in fstests' tree; each of the level "fstests" (one test's
// own assertion), which fstests_rules() sets.
constexpr Rule kTestRules[] = {
    {"generic/034", "a directory fsynced, then a new file in it: both files are there", "fstests tests/generic/034"},
    {"generic/039", "a link removed, the file fsynced: its directories are whole", "fstests tests/generic/039"},
    {"generic/056", "a file fsynced, then linked, another file fsynced: the first file's data is there",
     "fstests tests/generic/056"},
    {"generic/057", "an append fsynced, then a link, another file fsynced: the appended data is there",
     "fstests tests/generic/057"},
    {"generic/065", "a directory with new links and subdirectories fsynced: every link and link count is there",
     "fstests tests/generic/065"},
    {"generic/066", "an extended attribute removed, the file fsynced: it stays removed", "fstests tests/generic/066"},
    {"generic/073", "a file moved out of a directory that is fsynced, then another file fsynced: its data is there",
     "fstests tests/generic/073"},
    {"generic/090", "a link made and synced, then an append fsynced: the appended data is there",
     "fstests tests/generic/090"},
    {"generic/101", "a file shrunk and grown again, fsynced: its size is there, the grown part zeroes",
     "fstests tests/generic/101"},
    {"generic/104", "links to two files, one of them fsynced: both link counts are there", "fstests tests/generic/104"},
    {"generic/106", "a link removed, the file fsynced: the removed name is gone", "fstests tests/generic/106"},
    {"generic/107", "a link removed in another directory, the file fsynced: the removed name is gone",
     "fstests tests/generic/107"},
    {"generic/321", "a new directory fsynced, a file renamed into it and fsynced: the directory and the file's new "
                    "name are there", "fstests tests/generic/321"},
    {"generic/322", "a file renamed, fsynced under its new name: its data is there", "fstests tests/generic/322"},
    {"generic/335", "a file moved to another directory, its old parent's parent fsynced: the file is at its "
                    "destination", "fstests tests/generic/335"},
    {"generic/336", "a link removed and another file moved, the first file fsynced: the moved file is only at its "
                    "destination", "fstests tests/generic/336"},
    {"generic/341", "a directory renamed, a new one made under its old name and fsynced: both are there, the "
                    "renamed one whole", "fstests tests/generic/341"},
    {"generic/342", "a file renamed, a new file under the old name fsynced: both files are there",
     "fstests tests/generic/342"},
    {"generic/343", "a new link, a directory and a file moved into its directory, the link fsynced: the moved "
                    "entries are only at their destinations", "fstests tests/generic/343"},
    {"generic/348", "a symlink made, its directory fsynced: the symlink is there with its target",
     "fstests tests/generic/348"},
    {"generic/376", "a file renamed, a new file under the old name, the renamed one fsynced: both names are there",
     "fstests tests/generic/376"},
    {"generic/479", "a symlink renamed and linked back under its old name, another file fsynced: the log replays",
     "fstests tests/generic/479"},
    {"generic/480", "a link removed and a new file made under its name, fsynced: the log replays",
     "fstests tests/generic/480"},
    {"generic/481", "a new file fsynced: the log replays and new files can be made", "fstests tests/generic/481"},
    {"generic/489", "extended attributes fsynced, then a write fsynced: the attributes and the data are there",
     "fstests tests/generic/489"},
    {"generic/498", "a link made in new directories, the top one fsynced: the directory is there",
     "fstests tests/generic/498"},
    {"generic/502", "two links renamed in turn, a new file under a freed name fsynced: every name is there",
     "fstests tests/generic/502"},
    {"generic/510", "a file moved, its old directory replaced by a rename of its new one, the file fsynced: one "
                    "parent, under the replaced name", "fstests tests/generic/510"},
    {"generic/520", "a hard link made, then the file, a name, a directory or a sibling persisted: the file is there "
                    "with both links", "fstests tests/generic/520"},
    {"generic/526", "renames, a link to a freed name and a new file under another, the new file fsynced: every name "
                    "leads to its data", "fstests tests/generic/526"},
    {"generic/527", "renames, a removal, a link and new files under freed names, fsynced: every name leads to its "
                    "data", "fstests tests/generic/527"},
    {"generic/534", "a file fsynced, shrunk, renamed and fsynced under its new name: the new name and size are there",
     "fstests tests/generic/534"},
    {"generic/535", "a mode changed after a sync, fsynced: the new mode is there", "fstests tests/generic/535"},
    {"generic/552", "an O_DIRECT write, a sibling fsynced, the file renamed and fsynced: its data is there",
     "fstests tests/generic/552"},
    {"generic/557", "a file fsynced, removed, its directory fsynced: it is gone", "fstests tests/generic/557"},
    {"generic/640", "a directory fsynced, a file moved out of it, another file fsynced: the moved file is not lost",
     "fstests tests/generic/640"},
    {"generic/690", "a symlink made and renamed, its directory fsynced: it is there under its new name",
     "fstests tests/generic/690"},
    {"generic/779", "a symlink fsynced through its directory, renamed, the directory fsynced: it is there under its "
                    "new name", "fstests tests/generic/779"},
    {"generic/782", "a new directory, a file fsynced and linked into it, the root fsynced: the directory is there",
     "fstests tests/generic/782"},
    {"generic/784", "a directory moved away, a file made under its old name and fsynced, moved and fsynced: the "
                    "tree is as it was", "fstests tests/generic/784"},
    {"generic/785", "a file fsynced, a directory made, the file renamed, the root fsynced: the names and the data "
                    "are there (its timestamps left out)", "fstests tests/generic/785"},
};

}  // namespace

const std::vector<Scenario>& fstests_scenarios() {
  static const std::vector<Scenario> scenarios = make_scenarios();
  return scenarios;
}

const std::vector<Rule>& fstests_rules() {
  static const std::vector<Rule> table = [] {
    std::vector<Rule> rules(std::begin(kTestRules), std::end(kTestRules));
    for (Rule& r : rules) r.level = "fstests";
    return rules;
  }();
  return table;
}

}  // namespace crashlab::explore
