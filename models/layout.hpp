#pragma once
// Checks that a parallel layout divides the model and the cluster, and says what would fit.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "models/job_spec.hpp"
#include "models/model_limits.hpp"

namespace stepsim {

// The divisors of n from 1 up to `limit`, ascending: the values a layout degree may take, for the
// search's auto keys and for what a refusal says would fit.
std::vector<int> divisors(std::int64_t n, std::int64_t limit = std::numeric_limits<std::int64_t>::max());
// The same, comma-separated ("1, 2, 4, 8"), as the refusals write them.
std::string divisors_of(std::int64_t n, std::int64_t limit = 64);

// The settings that need neither the model nor the cluster: a ZeRO stage that exists, gradients
// of 2 or 4 bytes. (Readers check them at the key before anything is derived or searched.)
std::optional<InputProblem> check_layout_settings(const JobLayout& l);

// The layout's kernels on the accelerator: FP8 GEMMs need FP8 tensor cores (an FP8 peak; Transformer
// Engine refuses FP8 below compute capability 8.9, the A100's is 8.0), MXFP8 Blackwell, NVFP4 FP4
// tensor cores; a named attention kernel a generation it runs on at a known speed
// (models/attention_kernels.hpp).
std::optional<InputProblem> check_accelerator_kernels(const JobLayout& l, const AcceleratorSpec& a);

// The decoder layers split into the pipeline's chunks: evenly, or with the first and last chunks
// set (chunk_layer_counts) and an equal share of at least one layer for each of the others.
std::optional<InputProblem> check_layer_split(int layers, const JobLayout& l);

// `gpus`: the cluster's GPU count (0: take tp x pp x dp x cp). nullopt when the layout is sound.
// Each degree and micro_batch is at least 1 and at most kMaxGpus, and so is tp x pp x dp x cp: a
// sound layout's ranks() and microbatches() do not overflow.
std::optional<InputProblem> check_layout(const JobModel& m, const JobLayout& l, std::int64_t gpus);

}  // namespace stepsim
