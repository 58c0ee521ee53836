#pragma once
// Parts of a `job_step:` section written back as YAML that read_job_step reads to the same values:
// the hardware file `stepsim calibrate` writes, the layout `stepsim search --export` writes, and
// the model, hardware and layout of a measured run `stepsim check-against --export` writes.
#include <string>
#include <vector>

#include "schedules/lowering/job/job_step.hpp"

namespace stepsim::cli {

// A bandwidth as the readers read it back exactly, in the largest decimal unit that divides it:
// 50GB/s, 12500MB/s, 3B/s.
std::string bandwidth(std::int64_t bytes_per_s);

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

// A duration the readers read back exactly: in the largest unit that divides it ("90s", "3us").
std::string exact_duration(Time t);

// `m` as a one-line flow map in read_job_model's keys: name, layers, hidden, ffn, heads, vocab
// and seq always, every other key where it differs from the reader's default (a job's model:
// swiglu, no dropout, no qk_norm). read_job_model gives back `m`.
std::string format_model_yaml(const JobModel& m);
// The keys where `m` differs from `base` (a variant's `model:`).
std::string format_model_yaml_over(const JobModel& m, const JobModel& base);
// The keys `base` has that `m` cannot write over it (the experts' or latent attention's, where `m`
// has none): a variant's map laid over the base's cannot take a key away.
std::vector<std::string> model_keys_lost_over(const JobModel& m, const JobModel& base);

// `c` on `gpus` cards as a one-line flow map in read_cluster's keys: its preset (the accelerator's
// name), gpus and the six dense efficiencies always, every other efficiency and any accelerator,
// node or network value where it differs from the preset's. read_cluster gives back `c` (the MoE
// passes' host time to the nanosecond).
std::string format_cluster_yaml(const ClusterSpec& c, std::int64_t gpus);
// The keys where `c` on `gpus` differs from `base` on `base_gpus` (a variant's `hardware:`).
std::string format_cluster_yaml_over(const ClusterSpec& c, std::int64_t gpus, const ClusterSpec& base,
                                     std::int64_t base_gpus);

}  // namespace stepsim::cli
