#pragma once
// The `job_step:` section of a scenario: one training step of a job given by its model, its
// cluster and its parallel layout (docs/job.md). Not `job:`, which is the whole-run Monte Carlo.
//
//   job_step:
//     model: {file: models/gpt3-175b.yaml}     # or inline fields, or a built-in name
//     hardware: {preset: a100-sxm-80gb, gpus: 1024, efficiency: {...}, node: {...}, network: {...}}
//     layout: {tp: 8, pp: 8, virtual_stages: 2, zero: 1, micro_batch: 1, global_batch: 1536, ...}
//     input_wait: 0.5s
//     allow_oom: false    # true: a layout that does not fit is reported, not an error
//     variants: {no-recompute: {layout: {recompute: none}}}   # `compare`: each beside the base
#include <memory>
#include <string>

#include "cli/input/input.hpp"
#include "schedules/lowering/job/job_step.hpp"

namespace stepsim::cli {

// A variant of the step for `stepsim compare`: the base with the variant's keys laid over it.
struct JobStepVariant {
  std::string name;
  JobStepSpec spec;
  std::string option;  // the command-line option that made it ("--schedules"), not the file
};

struct JobStepScenario {
  JobStepSpec spec;
  bool allow_oom = false;
  // `variants: {NAME: {layout: {...}, model: {...}, hardware: {...}}, ...}`, in file order. A
  // variant's maps are merged over the base's key by key (a map with `file:` replaces the base's
  // whole); its memory is not checked before the run: `compare` reports a variant that does not
  // fit, as a search does.
  std::vector<JobStepVariant> variants;
};

JobStepScenario read_job_step(const Reader& r);

// Pieces, for the calibrate / check-against commands and hardware files.
JobModel read_job_model(const Reader& parent, const std::string& k);
ClusterSpec read_cluster(const Reader& parent, const std::string& k);
JobLayout read_layout(const Reader& r);

// "unknown preset 'NAME'; did you mean 'P'?" (or the presets known), for a scenario's `preset:` and
// a measured-runs CSV's `hw` alike. The preset meant: the one sharing most of the name's
// dash-separated parts, case aside, a part with a digit (a model number: a100, 4090, b200) counting
// double (H100-SXM, h100, a100-80gb, b200-sxm, 4090), else the nearest by edit distance.
std::string unknown_preset_message(const std::string& name);

// The keys read_layout takes (a search's layout takes them too, lists for its axes).
const std::vector<std::string>& layout_keys();
// Of those, the keys a search may give as a list or `auto` (a job step gives one value; its
// `recompute_layers: auto` and `offload_activations: auto` are its own), those a search around a job step opens
// (kAroundKeys) first: the order in which a search's report names the keys searched.
const std::vector<std::string>& searchable_layout_keys();

// Fails at `layout.<key>` if the layout does not divide, and at `layout` if it does not fit in
// memory by the analytic figure (saying which change would fit), unless `allow_oom`.
void check_job_step(const Reader& r, const JobStepSpec& spec, std::int64_t gpus, bool allow_oom);

// Why `spec` is refused for memory `mem` (over the usable memory), and the single change that
// would fit; `where` qualifies the figure (" at the simulated peak").
std::string memory_refusal(const JobStepSpec& spec, const JobMemory& mem, const std::string& where);

}  // namespace stepsim::cli
