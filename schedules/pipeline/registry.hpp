#pragma once
// The schedule families stepsim knows, by name. Each family lives in its own file and
// contributes one ScheduleFamily to the list in registry.cpp.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/pipeline/action.hpp"

namespace stepsim {

struct ScheduleRequest {
  int devices = 1;
  int microbatches = 1;
  int virtual_stages = 0;  // model chunks per device for interleaved schedules; 0 = family default
};

struct ScheduleFamily {
  std::string name;
  std::vector<std::string> aliases;
  std::string summary;
  bool split_backward = false;
  // Whether `virtual_stages` chooses this family's chunks per device (interleaved-1f1b); other
  // families fix their placement and reject an explicit virtual_stages other than 1.
  bool takes_virtual_stages = false;
  // Why this family cannot take the request, or nullopt if it can.
  std::function<std::optional<std::string>(const ScheduleRequest&)> check;
  std::function<PipelinePlan(const ScheduleRequest&)> build;
};

const std::vector<ScheduleFamily>& schedule_families();
const ScheduleFamily* find_schedule(std::string_view name);
std::vector<std::string> schedule_names();

// Families, one per file.
ScheduleFamily fill_drain_family();
ScheduleFamily one_f_one_b_family();
ScheduleFamily zb_h1_family();
ScheduleFamily zb_h2_family();
ScheduleFamily interleaved_1f1b_family();
ScheduleFamily dualpipe_family();
ScheduleFamily dualpipe_v_family();

}  // namespace stepsim
