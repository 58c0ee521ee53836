#pragma once
// Reports of a job step (schedules/lowering/job/job_step.hpp): the text table, the JSON summary
// and the Chrome trace.
#include <string>

#include <nlohmann/json.hpp>

#include "schedules/lowering/job/job_step.hpp"

namespace stepsim::cli {

std::string job_step_text(const std::string& name, const JobStepRun& run);
nlohmann::ordered_json job_step_json(const std::string& name, const JobStepRun& run);
std::string job_step_trace(const JobStepRun& run);

}  // namespace stepsim::cli
