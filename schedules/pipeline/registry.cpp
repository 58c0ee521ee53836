#include "schedules/pipeline/registry.hpp"

namespace stepsim {

const std::vector<ScheduleFamily>& schedule_families() {
  static const std::vector<ScheduleFamily> families = {
      fill_drain_family(), one_f_one_b_family(), interleaved_1f1b_family(), zb_h1_family(),
      zb_h2_family(),      dualpipe_family(),    dualpipe_v_family(),
  };
  return families;
}

const ScheduleFamily* find_schedule(std::string_view name) {
  for (const auto& f : schedule_families()) {
    if (f.name == name) return &f;
    for (const auto& a : f.aliases)
      if (a == name) return &f;
  }
  return nullptr;
}

std::vector<std::string> schedule_names() {
  std::vector<std::string> names;
  for (const auto& f : schedule_families()) {
    names.push_back(f.name);
    for (const auto& a : f.aliases) names.push_back(a);
  }
  return names;
}

}  // namespace stepsim
