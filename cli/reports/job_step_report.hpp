#pragma once
// Reports of a job step (schedules/lowering/job/job_step.hpp): the text table, the JSON summary
// and the Chrome trace; the tables they are made of (the HTML page shows the same ones).
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/reports/table.hpp"
#include "cli/reports/trace_writer.hpp"
#include "models/accelerators.hpp"
#include "schedules/lowering/job/job_step.hpp"

namespace stepsim::cli {

// "50% of the 128 experts hot at 1.5x the mean, placed contiguous" (a skewed or capped routing).
std::string expert_routing_words(const JobModel& m, const JobLayout& l);
// The model in words: "gemma3-27b (62 layers, 52 of them within a 1,024-token window, h 5376, seq
// 131072)".
std::string model_words(const JobModel& m);
// The low-precision GEMMs in words, as the step's and the search's headings say them: "FP8 GEMMs
// (tensorwise scaling; the first and last layers in BF16)", "NVFP4 GEMMs (the LM head in BF16)";
// empty without FP8.
std::string low_precision_gemm_words(const JobLayout& l);
// A named attention kernel in words, as the step's and the search's headings say it:
// "FlashAttention-2", "FlashAttention-3"; empty for flash (the accelerator's own) and unfused.
std::string attention_kernel_words(const JobLayout& l);
// The layout in words: "tp 8 pp 4 (v 5) dp 2, zero 1, interleaved-1f1b, micro-batch 1, ...".
std::string layout_line(const JobStepSpec& s);
// The scenario name, the model, cluster and layout, and what was simulated: three lines.
std::string job_step_heading(const std::string& name, const JobStepRun& run);
// "efficiencies: the h100-sxm preset's, not calibrated (...)\n" where the cluster's efficiencies
// are its preset's own, else "": a figure from them is the preset's guess, not a fit.
std::string uncalibrated_line(const ClusterSpec& c);
// "node and network, not the h100-sxm preset's: ..." where a scenario changed either; else empty.
std::string cluster_line(const ClusterSpec& c);
// Step time, throughput, MFU/HFU, bubble (and, `with_exposed`, the exposed communication).
Table job_step_summary_table(const JobStepRun& run, bool with_exposed);
// Exposed communication by kind (TP, PP, DP/ZeRO, CP, EP), in the tables' order.
std::vector<std::pair<std::string, Time>> job_step_exposed(const JobStepResult& r);
// The same with each kind's share of the step, and their total.
Table job_step_exposed_table(const JobStepRun& run);
// Memory per GPU of the most loaded pipeline rank in GiB, against the usable memory.
Table job_step_memory_table(const JobStepRun& run);
// Every pipeline rank's memory in GiB, part by part (the report's most loaded is the largest total).
Table job_step_rank_memory_table(const JobStepRun& run);
// The optimizer on the host (offload_optimizer): its memory a GPU and a node, and its step's parts,
// one line; then the activations on the host (offload_activations), one line; empty without them.
std::string job_step_host_line(const JobStepRun& run);
Table job_step_critical_table(const std::vector<CriticalShare>& shares);
// One layer's forward and backward on one GPU for one micro-batch, in ms, by kind of kernel (GEMMs,
// attention, memory-bound; a recurrent mixer's scan with attention) and, where any, the host's
// waits and the collectives inside the pass.
Table job_step_layer_table(const JobModel& m, const JobStepResult& r);
// cp > 1: the causal attention pairs per CP rank, balanced (chunks i and 2cp-1-i) and contiguous.
CaptionedTable job_step_cp_table(const JobStepRun& run);
// reshard_tp: the model's gate projection saved at the layout's tp and loaded at reshard_tp.
CaptionedTable job_step_reshard_table(const JobStepRun& run);

// `compare`: one row per run (the base first), its step against the first's, throughput, MFU,
// the most loaded rank's memory against capacity, bubble and exposed communication.
Table job_step_compare_table(const std::vector<std::pair<std::string, const JobStepRun*>>& runs);

// What limits each of them: its critical path's share per kind of op (a column per kind any names;
// "-" where a run has none of it).
Table job_step_limits_table(const std::vector<std::pair<std::string, const JobStepRun*>>& runs);

std::string job_step_text(const std::string& name, const JobStepRun& run);
nlohmann::ordered_json job_step_json(const std::string& name, const JobStepRun& run);
// One process, a track per resource of the simulated pipeline, a slice per op that takes time.
void job_step_trace(TraceWriter& out, const JobStepRun& run);

}  // namespace stepsim::cli
