#pragma once
// How fast a named attention kernel runs on a GPU generation, against the accelerator's own fused
// kernel, whose rate its `attention` efficiency is (docs/job.md, "Attention kernels").
#include <optional>
#include <string>

#include "models/accelerators.hpp"
#include "models/job_spec.hpp"

namespace stepsim {

// The kernel's speed as a share of the accelerator's own fused kernel: a softmax attention core
// runs at peak x efficiency.attention x this (1 for flash and unfused, whose FLOPs and bytes
// already differ).
double attention_kernel_speed(AttentionKernel k, GpuArchitecture a);

// Why `a` cannot run the kernel at a known speed, in one sentence naming what would run; nullopt
// when it can.
std::optional<std::string> attention_kernel_refusal(AttentionKernel k, const AcceleratorSpec& a);

}  // namespace stepsim
