#pragma once
// Parts of a `job_step:` section written back as YAML that read_job_step reads to the same values:
// the hardware file `stepsim calibrate` writes, and the layout `stepsim search --export` writes.
#include <string>

#include "schedules/lowering/job/job_step.hpp"

namespace stepsim::cli {

// A hardware file as `stepsim calibrate` writes it (the `hardware:` map as its root).
std::string format_hardware_yaml(const ClusterSpec& c, const std::string& comment);

// `l` as a one-line flow map in read_layout's keys: tp, pp, dp, schedule, micro_batch,
// global_batch and recompute always, every other key where it differs from read_layout's
// default. read_layout gives back `l` (recompute_layers: the count, where `auto` chose it).
std::string format_layout_yaml(const JobLayout& l);

// The keys where `l` differs from `base`, as a flow map: laid over `base`'s YAML key by key (a
// `variants:` entry of a job_step scenario), read_layout gives back `l`. Defaults are written
// out where `base` has another value (`recompute_layers: all`, `expert_tp: tp`).
std::string format_layout_yaml_over(const JobLayout& l, const JobLayout& base);

}  // namespace stepsim::cli
