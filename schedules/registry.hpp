#pragma once
// The schedule families stepsim knows, by name. Each family lives in its own file and
// contributes one ScheduleFamily to the list in registry.cpp.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/action.hpp"

namespace stepsim {

struct ScheduleRequest {
  int devices = 1;
  int microbatches = 1;
  int virtual_stages = 1;  // model chunks per device (interleaved schedules)
};

struct ScheduleFamily {
  std::string name;
  std::vector<std::string> aliases;
  std::string summary;
  bool split_backward = false;
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

}  // namespace stepsim
