// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/frames_command.h"

#include <charconv>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>

#include "common/command_line.h"
#include "common/json.h"
#include "crashlab/reports/block_meaning.h"
#include "crashlab/judge/state_walk.h"
#include "crashlab/reports/frame_timeline.h"
#include "crashlab/index/recording_index.h"
#include "tools/nvj/crash/state_options.h"
#include "tools/nvj/crash/subcommands.h"
#include "tools/nvj/host/files/mapped_file.h"

namespace nvj::cli {
namespace {

using crashlab::FrameKind;
using crashlab::TimelineFrame;

std::uint64_t whole_number(const std::string& option, const std::string& text, const std::string& what) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw UsageError("nvj crash frames: " + option + " " + text + ": expected " + what + ", a whole number");
  return n;
}

// "write FUA", "ack of 380 (durable)", "flush 5 done: 3 durable", ...
std::string request(const TimelineFrame& f) {
  switch (f.kind) {
    case FrameKind::write:
    case FrameKind::zero:
    case FrameKind::trim: return std::string(fscore::record::to_string(f.kind)) + (f.fua ? " FUA" : "");
    case FrameKind::ack: return "ack of " + std::to_string(f.change_frame) + (f.durable ? " (durable)" : "");
    case FrameKind::failed: return "failed: " + std::to_string(f.change_frame);
    case FrameKind::flush: return "flush " + std::to_string(f.id);
    case FrameKind::flush_done:
      return "flush " + std::to_string(f.id) + " done" +
             (f.made_durable == 0 ? "" : ": " + std::to_string(f.made_durable) + " durable");
    case FrameKind::mark: return "mark";
    default: return fscore::record::to_string(f.kind);
  }
}

std::string fate(const TimelineFrame& f) {
  if (f.in_state == crashlab::InState::torn) return "torn@" + std::to_string(f.torn_bytes);
  return crashlab::to_string(f.in_state);
}

bool is_change(FrameKind k) { return k == FrameKind::write || k == FrameKind::zero || k == FrameKind::trim; }

// The state (--state) or the crash point alone (--point) the frames are
// listed around.
struct Chosen {
  std::optional<crashlab::CrashState> state;
  std::optional<crashlab::SelectedState> selected;
  std::size_t point = 0;
};

Chosen choose(const FramesArgs& a, const crashlab::RecordingIndex& index, const crashlab::CrashChecker& checker) {
  const auto& points = checker.points();
  Chosen chosen;
  if (!a.state.empty()) {
    const std::uint64_t n = whole_number("--state", a.state, "a state's ordinal");
    try {
      chosen.selected = checker.find({n}).front();
    } catch (const std::out_of_range& e) {
      throw UsageError(std::string("nvj crash frames: --state ") + a.state + ": " + e.what());
    }
    chosen.state = crashlab::state_of(index, points, checker.options().strategies, chosen.selected->key);
    chosen.point = chosen.state->point;
    return chosen;
  }
  chosen.point = whole_number("--point", a.point, "a crash point's number");
  if (points.empty()) throw UsageError("nvj crash frames: --point " + a.point + ": the recording has no crash points");
  if (chosen.point >= points.size())
    throw UsageError("nvj crash frames: --point " + a.point + ": the recording has " + std::to_string(points.size()) +
                     " crash points (0 to " + std::to_string(points.size() - 1) + "; nvj crash states counts them)");
  return chosen;
}

Json frame_json(const TimelineFrame& f, const crashlab::RecordingIndex& index, const crashlab::BlockMeanings& meanings) {
  Json j{{"frame", f.sequence}, {"kind", fscore::record::to_string(f.kind)}};
  j["export"] = f.device ? Json(index.exports()[*f.device].name) : Json(nullptr);
  if (is_change(f.kind)) {
    j["id"] = f.id;
    j["offset"] = f.offset;
    j["length"] = f.length;
    j["fua"] = f.fua;
    j["in_state"] = crashlab::to_string(f.in_state);
    if (f.in_state == crashlab::InState::torn) j["torn_bytes"] = f.torn_bytes;
    Json meaning = Json::array();
    for (const auto& m : meanings.of(f.change))
      meaning.push_back(Json{{"offset", m.offset}, {"length", m.length}, {"what", m.what}});
    j["meaning"] = meaning;
  } else if (f.kind == FrameKind::ack || f.kind == FrameKind::failed) {
    j["id"] = f.id;
    j["change_frame"] = f.change_frame;
    if (f.kind == FrameKind::ack) j["durable"] = f.durable;
  } else if (f.kind == FrameKind::mark) {
    j["label"] = f.label;
  } else {
    j["id"] = f.id;
    if (f.kind == FrameKind::flush_done) j["made_durable"] = f.made_durable;
  }
  return j;
}

// What nvj crash frames lists, once chosen.
struct Listing {
  const crashlab::RecordingIndex& index;
  const Chosen& chosen;
  const crashlab::CrashPoint& p;
  const crashlab::Timeline& t;
  const crashlab::BlockMeanings& meanings;
  std::string mark;  // the last mark before the point, or none
};

void print_json(const FramesArgs& a, const Listing& l) {
  Json frames = Json::array();
  for (const TimelineFrame& f : l.t.frames) frames.push_back(frame_json(f, l.index, l.meanings));
  const Chosen& c = l.chosen;
  Json out{{"recording", a.check.recording},
           {"state", c.selected ? Json{{"ordinal", c.selected->ordinal},
                                       {"strategy", crashlab::to_string(c.state->strategy)},
                                       {"kept", c.state->kept.size()},
                                       {"torn", c.state->torn.has_value()}}
                                : Json(nullptr)},
           {"point", Json{{"number", c.point},
                          {"after_frame", l.p.sequence},
                          {"last_mark", l.mark.empty() ? Json(nullptr) : Json(l.mark)},
                          {"volatile", l.p.volatile_changes.size()}}},
           {"filesystem", l.meanings.summary()},
           {"first", l.t.first},
           {"last", l.t.last},
           {"frames", frames}};
  std::printf("%s\n", to_json_text(out, 2).c_str());
}

// The lines above the frames: the state or point, the cut, the exports.
void print_heading(const FramesArgs& a, const Listing& l) {
  const Chosen& c = l.chosen;
  std::printf("%s: ", a.check.recording.c_str());
  if (c.selected)
    std::printf("state %llu: crash point %zu, strategy %s, %zu of %zu volatile changes kept%s\n",
                static_cast<unsigned long long>(c.selected->ordinal), c.point, crashlab::to_string(c.state->strategy),
                c.state->kept.size(), l.p.volatile_changes.size(),
                c.state->torn ? (", one more kept in part (" + std::to_string(c.state->torn->bytes) + " bytes)").c_str()
                              : "");
  else
    std::printf("crash point %zu, %zu volatile changes\n", c.point, l.p.volatile_changes.size());
  std::printf("the power is cut right after frame %llu%s\n", static_cast<unsigned long long>(l.p.sequence),
              l.mark.empty() ? "" : (", after the mark '" + l.mark + "'").c_str());
  std::printf("exports:");
  for (const auto& x : l.index.exports())
    std::printf(" %s (%llu bytes, atomic %u)", x.name.c_str(), static_cast<unsigned long long>(x.size), x.atomic_unit);
  std::printf("\nfilesystem: %s\n", l.meanings.summary().c_str());
  std::printf("frames %llu to %llu of %llu%s\n\n", static_cast<unsigned long long>(l.t.first),
              static_cast<unsigned long long>(l.t.last), static_cast<unsigned long long>(l.index.end()),
              a.all ? "" : " (--before, --after, --all for more)");
}

void print_text(const FramesArgs& a, const Listing& l) {
  print_heading(a, l);
  std::printf("%7s  %-8s %-22s %-22s %-10s %s\n", "frame", "export", "request", "bytes", "state", "what");
  bool cut = false;
  for (const TimelineFrame& f : l.t.frames) {
    if (!cut && f.sequence > l.t.point) {
      std::printf("------- the power is cut here (crash point %zu) -------\n", l.chosen.point);
      cut = true;
    }
    const std::string device = f.device ? l.index.exports()[*f.device].name : "";
    if (f.kind == FrameKind::mark) {
      std::printf("%7llu  %-8s %s\n", static_cast<unsigned long long>(f.sequence), "", ("mark: " + f.label).c_str());
      continue;
    }
    if (!is_change(f.kind)) {
      std::printf("%7llu  %-8s %s\n", static_cast<unsigned long long>(f.sequence), device.c_str(), request(f).c_str());
      continue;
    }
    const auto what = l.meanings.of(f.change);
    const std::string bytes = std::to_string(f.offset) + " +" + std::to_string(f.length);
    std::printf("%7llu  %-8s %-22s %-22s %-10s %s\n", static_cast<unsigned long long>(f.sequence), device.c_str(),
                request(f).c_str(), bytes.c_str(), fate(f).c_str(), what.empty() ? "" : what.front().what.c_str());
    for (std::size_t i = 1; i < what.size(); ++i) std::printf("%75s%s\n", "", what[i].what.c_str());
  }
  if (!cut) std::printf("------- the power is cut here (crash point %zu) -------\n", l.chosen.point);
}

}  // namespace

int crash_frames_main(const FramesArgs& a) {
  if (a.check.recording.empty()) throw UsageError("nvj crash frames: which RECORDING?");
  if (a.state.empty() == a.point.empty())
    throw UsageError("nvj crash frames: which state? give --state N (results.json's ordinal) or --point P");
  // A recording that is not there or not one is bad input, as a wrong
  // option is (1 would say a state failed, as nvj crash check's does).
  std::optional<MappedFile> file;
  std::optional<crashlab::RecordingIndex> read;
  try {
    file.emplace(a.check.recording);
    read.emplace(file->bytes());
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string("nvj crash frames: ") + e.what());
  }
  const crashlab::RecordingIndex& index = *read;
  const crashlab::CrashChecker checker(index, enumeration_of(a.check));
  const Chosen chosen = choose(a, index, checker);
  const crashlab::CrashPoint& p = checker.points()[chosen.point];
  const crashlab::Timeline t =
      crashlab::frame_timeline(index, p, chosen.state ? &*chosen.state : nullptr, {a.before, a.after, a.all});
  const crashlab::BlockMeanings meanings(index, t.last);
  const Listing listing{index, chosen, p, t, meanings,
                        p.last_mark == crashlab::kNoMark ? "" : index.marks()[p.last_mark].label};
  if (a.json)
    print_json(a, listing);
  else
    print_text(a, listing);
  return 0;
}

namespace {

constexpr const char* kFramesText = R"(List what each export saw around one crash state of RECORDING (--state N,
as nvj crash check numbers them with the same options) or one crash point
(--point P), frame by frame in the recording's order, as replay-log lists
a log: every write, zero and trim with FUA, its acknowledgement (durable or
not), every flush and its completion, every mark; for each change what the
state made of it (durable before the power went, kept, dropped, torn after
so many bytes, or sent after the cut), and what its blocks are where the
lab can tell: ext4's metadata by kind and the data of which file, the jbd2
journal's descriptor, logged copies (of which home block), revoke and
commit blocks, XFS's blocks by their magic numbers.
)";

}  // namespace

CrashSubcommand declare_crash_frames(Command& crash) {
  auto frames = std::make_shared<FramesArgs>();
  Command frame_list = crash.subcommand("frames", "list what the exports saw around a crash state, block by block");
  frame_list.describe(kFramesText);
  recording_options(frame_list, frames->check);
  frame_list.add("--state", frames->state, "the state's ordinal (results.json's \"ordinal\")").value_name("N");
  frame_list.add("--point", frames->point, "or a crash point's number, with no state (nvj crash states counts them)")
      .value_name("P");
  frame_list.count("--before", frames->before, 0, ~std::uint64_t{0},
                   "frames before the oldest volatile change (default 20)").value_name("N");
  frame_list.count("--after", frames->after, 0, ~std::uint64_t{0}, "frames after the crash point (default 10)")
      .value_name("N");
  frame_list.flag("--all", frames->all, "every frame of the recording");
  frame_list.flag("--json", frames->json, "one JSON object");
  return {frame_list, [frames] {
            check_torn_unit(frames->check.options.strategies, "nvj crash frames");
            return crash_frames_main(*frames);
          }};
}

}  // namespace nvj::cli
