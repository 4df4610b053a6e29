// SPDX-License-Identifier: BSD-3-Clause
#include "server/model/make_model.h"

#include <stdexcept>

#include "server/model/hdd_model.h"
#include "server/model/nvram_model.h"
#include "server/model/ssd_model.h"

namespace nvj {

std::unique_ptr<TimingModel> make_model(const ModelSpec& spec, std::uint64_t device_size) {
  if (spec.name == "none") {
    if (!spec.params.empty()) throw std::invalid_argument("model none takes no parameters");
    return nullptr;
  }
  if (spec.name == "nvram") return std::make_unique<NvramModel>(NvramModel::parse(spec));
  if (spec.name == "ssd") return std::make_unique<SsdModel>(SsdModel::parse(spec));
  if (spec.name == "hdd") return std::make_unique<HddModel>(HddModel::parse(spec, device_size));
  throw std::invalid_argument("unknown model '" + spec.name + "' (none, nvram, ssd or hdd)");
}

void check_model_spec(const ModelSpec& spec) { make_model(spec, std::uint64_t{1} << 30); }

}  // namespace nvj
