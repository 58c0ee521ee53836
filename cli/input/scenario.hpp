#pragma once
// Scenario: one YAML file, loaded in one place into plain structs with units converted. Every
// later stage takes a Scenario, never raw YAML, so file:line:key errors are produced here.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/input/input.hpp"
#include "cli/input/job_scenario.hpp"
#include "cli/input/job_step_input.hpp"
#include "cli/input/scenario_data_parallel.hpp"
#include "cli/input/scenario_moe.hpp"
#include "cli/input/scenario_plan.hpp"
#include "schedules/lowering/pipeline/pipeline_spec.hpp"
#include "schedules/lowering/rl/rl_run.hpp"
#include "sim/time.hpp"

namespace stepsim::cli {

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  std::optional<PipelineSpec> pipeline;
  std::optional<DataParallelScenario> data_parallel;
  std::optional<JobScenario> job;
  std::optional<PlanScenario> plan;  // `plan:` (stepsim plan)
  std::optional<RlSpec> rl;
  std::optional<MoeScenario> moe;           // `moe:` (cli/scenario_moe.hpp)
  std::optional<JobStepScenario> job_step;  // `job_step:` (cli/input/job_step_input.hpp)

  std::shared_ptr<const Source> source;
  // Throws InputError pointing at the dotted `key` (its line if the file has it).
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  // Runs `work`; a time past the engine's limit or a byte count past 1 EiB (OverflowError) is
  // blamed on `section`, whose inputs are at fault: "file:line: job: too large: ... would exceed
  // 292 years".
  template <class Work>
  void blaming(const std::string& section, Work work) const {
    try {
      work();
    } catch (const OverflowError& e) { fail(source->overflow_key(section), e.what()); }
  }
};

Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides = {});
Scenario parse_scenario(const std::string& text, const std::string& name,
                        const std::vector<std::string>& overrides = {});
// From a parsed document (copied, then `overrides` applied): see Source::from_root.
Scenario scenario_from_root(const YAML::Node& root, const std::string& name,
                            const std::vector<std::string>& overrides = {});

// Section readers, one per scenario kind.
PipelineSpec read_pipeline(const Reader& r);
// `pipeline.actions_csv`: a schedule in PyTorch's CSV form, path relative to the scenario file.
std::vector<std::vector<Action>> read_actions_csv(const Reader& r);
RlSpec read_rl(const Reader& r);  // cli/scenario_rl.cpp

}  // namespace stepsim::cli
