// SPDX-License-Identifier: BSD-3-Clause
// nvj crash image: one crash state's exports, as the power cut left them,
// written to image files (sparse) for a person to mount or fsck.
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "crashlab/judge/state_walk.h"
#include "crashlab/index/recording_index.h"
#include "tools/nvj/crash/check_command.h"
#include "tools/nvj/crash/ground_truth.h"
#include "tools/nvj/crash/state_options.h"
#include "tools/nvj/crash/subcommands.h"
#include "tools/nvj/host/files/mapped_file.h"

namespace nvj::cli {
namespace {

constexpr const char* kImageText = R"(Write the exports of one crash state of RECORDING (the state whose ordinal is
N, as nvj crash check numbers them with the same options) to DIR/data.img
and DIR/journal.img, sparse, as the power cut left them: the journal not
replayed. With several --state, each state's go to DIR/N/. Mount them through loop devices or run e2fsck on them to see for
yourself what a check said.
)";

struct ImageArgs {
  CheckArgs check;                  // the recording and the options that number the states
  std::vector<std::string> states;  // their ordinals
  std::string out;                  // the folder for the images (DIR/N/ for each of several)
};

int crash_image_main(const ImageArgs& a) {
  std::set<std::uint64_t> wanted;
  for (const std::string& text : a.states) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
      throw UsageError("nvj crash image: --state " + text + ": expected a state's ordinal, a whole number");
    wanted.insert(n);
  }
  const MappedFile file(a.check.recording);
  const crashlab::RecordingIndex index(file.bytes());
  const crashlab::CrashChecker checker(index, enumeration_of(a.check));
  std::vector<crashlab::SelectedState> found;
  try {
    found = checker.find(wanted);
  } catch (const std::out_of_range& e) {
    throw std::runtime_error(e.what());
  }
  checker.walk_states(found, [&](crashlab::StateContext& c) {
    std::filesystem::path dir = a.out;
    if (wanted.size() > 1) dir /= std::to_string(c.selected.ordinal);
    std::filesystem::create_directories(dir);
    for (std::size_t d = 0; d < c.image.count(); ++d) {
      const std::string name = index.exports()[d].name;
      const auto path = dir / (name + ".img");
      write_state_file(c.image, static_cast<std::uint8_t>(d), path);
      std::printf("%s: export %s of state %llu\n", path.c_str(), name.c_str(),
                  static_cast<unsigned long long>(c.selected.ordinal));
    }
    const auto& p = c.point;
    const std::string mark = p.last_mark == crashlab::kNoMark ? "" : ", after mark '" + index.marks()[p.last_mark].label + "'";
    std::printf("  crash point %zu (after frame %llu%s), strategy %s, %zu of %zu volatile changes kept%s\n",
                c.state.point, static_cast<unsigned long long>(p.sequence), mark.c_str(),
                crashlab::to_string(c.state.strategy), c.state.kept.size(), p.volatile_changes.size(),
                c.state.torn ? (", one more torn after " + std::to_string(c.state.torn->bytes) + " bytes").c_str() : "");
  });
  std::printf("the journal is not replayed: mount it (ext4 replays it) or run e2fsck on it, as after a power cut\n");
  return 0;
}

}  // namespace

CrashSubcommand declare_crash_image(Command& crash) {
  auto image = std::make_shared<ImageArgs>();
  Command images = crash.subcommand("image", "write one crash state's exports to image files");
  images.describe(kImageText);
  recording_options(images, image->check);
  images.add("--state", image->states, "the state's ordinal (results.json's \"ordinal\"); repeatable")
      .value_name("N")
      .one_value_per_use();
  images.add("--out", image->out, "the folder for EXPORT.img, or N/EXPORT.img for several (required)")
      .value_name("DIR");
  return {images, [image] {
            check_torn_unit(image->check.options.strategies, "nvj crash image");
            if (image->check.recording.empty()) throw UsageError("nvj crash image: which RECORDING?");
            if (image->out.empty()) throw UsageError("nvj crash image: --out DIR is required");
            if (image->states.empty()) throw UsageError("nvj crash image: which --state N?");
            return crash_image_main(*image);
          }};
}

}  // namespace nvj::cli
