#include "cli/reports/job_step_report.hpp"

#include <fmt/format.h>

#include "cli/reports/chrome_trace.hpp"
#include "cli/reports/table.hpp"

namespace stepsim::cli {

namespace {
double gib(Bytes b) { return static_cast<double>(b) / (1024.0 * 1024 * 1024); }
std::string pct(double x) { return fmt::format("{:.1f}%", 100 * x); }
std::string secs(Time t) {
  return t >= kSecond ? fmt::format("{:.3f} s", to_s(t)) : fmt::format("{:.2f} ms", to_ms(t));
}

std::string layout_line(const JobStepSpec& s) {
  const JobLayout& l = s.layout;
  std::string out = fmt::format("tp {} pp {}", l.tp, l.pp);
  if (l.vpp > 1) out += fmt::format(" (v {})", l.vpp);
  out += fmt::format(" dp {}", l.dp);
  if (l.cp > 1) out += fmt::format(" cp {}", l.cp);
  if (l.ep > 1) out += fmt::format(" ep {}", l.ep);
  out +=
      fmt::format(", zero {}, {}, micro-batch {}, global batch {}, recompute {}{}", l.zero, l.schedule, l.micro_batch,
                  l.global_batch, recompute_name(l.recompute), l.sequence_parallel ? ", sequence parallel" : "");
  return out;
}
}  // namespace

std::string job_step_text(const std::string& name, const JobStepRun& run) {
  const JobStepResult& r = run.result;
  const JobStepSpec& s = run.spec;
  std::string out =
      fmt::format("{}\n{} ({} layers, h {}, seq {}) on {} x {}: {}\n", name, s.model.shape.name, s.model.shape.layers,
                  s.model.shape.hidden, s.model.seq, r.gpus, s.cluster.accelerator.name, layout_line(s));
  out += fmt::format("simulated {} device(s) of one pipeline, {} ops, {} micro-batches per pipeline\n\n",
                     r.simulated_devices, r.ops, r.microbatches);
  Table t({{"", false}, {"value"}});
  t.add_row({"step time", secs(r.step_time)});
  t.add_row({"tokens/s per GPU", fmt::format("{:.0f}", r.tokens_per_s_per_gpu)});
  t.add_row({"model TFLOP/s per GPU", fmt::format("{:.1f}", r.model_tflops_per_gpu)});
  t.add_row({"hardware TFLOP/s per GPU", fmt::format("{:.1f}", r.hardware_tflops_per_gpu)});
  t.add_row({"MFU", pct(r.mfu)});
  t.add_row({"HFU", pct(r.hfu)});
  t.add_row({"bubble (compute idle)", pct(r.bubble)});
  t.add_row({"exposed TP", secs(r.exposed_tp)});
  t.add_row({"exposed PP", secs(r.exposed_pp)});
  t.add_row({"exposed DP/ZeRO", secs(r.exposed_dp)});
  t.add_row({"exposed CP", secs(r.exposed_cp)});
  t.add_row({"exposed EP", secs(r.exposed_ep)});
  out += t.render();
  out += "\nmemory per GPU (most loaded pipeline rank)\n";
  Table m({{"", false}, {"GiB"}});
  m.add_row({"weights", fmt::format("{:.2f}", gib(r.memory.weights))});
  m.add_row({"gradients", fmt::format("{:.2f}", gib(r.memory.gradients))});
  m.add_row({"optimizer state", fmt::format("{:.2f}", gib(r.memory.optimizer))});
  m.add_row({"activations (peak)", fmt::format("{:.2f}", gib(r.memory.activations))});
  m.add_row({"buffers", fmt::format("{:.2f}", gib(r.memory.buffers))});
  m.add_row({"total", fmt::format("{:.2f}", gib(r.memory.total()))});
  m.add_row(
      {"usable", fmt::format("{:.2f}{}", gib(r.capacity), r.memory.total() > r.capacity ? "  (does not fit)" : "")});
  out += m.render();
  out += "\nwhat limits the step: critical path by kind of op\n";
  Table c({{"", false}, {"time"}, {"share"}});
  for (const auto& x : r.critical_by_kind) c.add_row({x.what, secs(x.time), pct(x.share)});
  out += c.render();
  out += "\ncritical path by resource\n";
  Table cr({{"", false}, {"time"}, {"share"}});
  for (const auto& x : r.critical_by_resource) cr.add_row({x.what, secs(x.time), pct(x.share)});
  out += cr.render();
  return out;
}

nlohmann::ordered_json job_step_json(const std::string& name, const JobStepRun& run) {
  const JobStepResult& r = run.result;
  const JobLayout& l = run.spec.layout;
  nlohmann::ordered_json j;
  j["scenario"] = name;
  j["model"] = run.spec.model.shape.name;
  j["accelerator"] = run.spec.cluster.accelerator.name;
  j["gpus"] = r.gpus;
  j["layout"] = {{"tp", l.tp},
                 {"pp", l.pp},
                 {"virtual_stages", l.vpp},
                 {"dp", l.dp},
                 {"cp", l.cp},
                 {"ep", l.ep},
                 {"zero", l.zero},
                 {"schedule", l.schedule},
                 {"micro_batch", l.micro_batch},
                 {"global_batch", l.global_batch},
                 {"recompute", recompute_name(l.recompute)},
                 {"sequence_parallel", l.sequence_parallel}};
  j["step_time_ns"] = r.step_time;
  j["step_time_s"] = to_s(r.step_time);
  j["microbatches"] = r.microbatches;
  j["simulated_devices"] = r.simulated_devices;
  j["ops"] = r.ops;
  j["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
  j["model_tflops_per_gpu"] = r.model_tflops_per_gpu;
  j["hardware_tflops_per_gpu"] = r.hardware_tflops_per_gpu;
  j["mfu"] = r.mfu;
  j["hfu"] = r.hfu;
  j["bubble"] = r.bubble;
  j["exposed_ns"] = {
      {"tp", r.exposed_tp}, {"pp", r.exposed_pp}, {"dp", r.exposed_dp}, {"cp", r.exposed_cp}, {"ep", r.exposed_ep}};
  j["memory_bytes"] = {{"weights", r.memory.weights},     {"gradients", r.memory.gradients},
                       {"optimizer", r.memory.optimizer}, {"activations", r.memory.activations},
                       {"buffers", r.memory.buffers},     {"total", r.memory.total()},
                       {"capacity", r.capacity},          {"fits", r.memory.total() <= r.capacity}};
  auto shares = [](const std::vector<CriticalShare>& v) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& x : v) a.push_back({{"what", x.what}, {"ns", x.time}, {"share", x.share}});
    return a;
  };
  j["critical_path"] = {{"by_kind", shares(r.critical_by_kind)}, {"by_resource", shares(r.critical_by_resource)}};
  j["layer_forward_ms"] = r.layer_forward_s * 1e3;
  j["layer_backward_ms"] = r.layer_backward_s * 1e3;
  return j;
}

std::string job_step_trace(const JobStepRun& run) {
  const OpGraph& g = run.graph();
  const Timeline& t = run.timeline;
  ChromeTrace tr;
  tr.process(1, "job step (one pipeline; DP/CP/TP peers folded)", 0);
  for (ResourceId r = 0; r < g.resource_count(); ++r)
    tr.thread(1, static_cast<int>(r), g.resource(r).name, static_cast<int>(r));
  for (OpId op = 0; op < g.op_count(); ++op) {
    if (g.op_duration(op) == 0) continue;
    tr.slice(1, static_cast<int>(g.op_resource(op)), g.op_name(op), job_op_kind_name(run.kinds[op]), t.start[op],
             g.op_duration(op), "");
  }
  return tr.finish();
}

}  // namespace stepsim::cli
