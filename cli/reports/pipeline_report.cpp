#include "cli/reports/pipeline_report.hpp"
#include "cli/reports/quantities.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "cli/reports/table.hpp"
#include "cli/reports/text_cursor.hpp"
#include "models/units.hpp"

namespace stepsim::cli {

// Literals appended as string_views: their length is known at compile time (no strlen per
// append; the trace appends a dozen per op).
using namespace std::string_view_literals;

namespace {
// Rounded for stable, readable JSON: 3 decimals of ms is a microsecond.
double round4(double x) { return std::round(x * 10000.0) / 10000.0; }

Bytes max_peak(const PipelineRun& run) {
  Bytes peak = 0;
  for (const auto& d : run.stats.devices) peak = std::max(peak, d.peak_memory);
  return peak;
}

Time mean_idle(const PipelineRun& run) {
  Time sum = 0;
  for (const auto& d : run.stats.devices) sum += d.idle;
  return run.stats.devices.empty() ? 0 : sum / static_cast<Time>(run.stats.devices.size());
}

std::string fmt_ms(Time t) { return fmt::format("{:.3f}", to_ms(t)); }
std::string fmt_mib(Bytes b) { return fmt::format("{:.1f}", mib(b)); }
std::string fmt_copies(double c) { return fmt::format("{:g}", std::round(c * 100.0) / 100.0); }

// Model chunks per device (virtual stages per device), from the plan the schedule built.
int chunks_per_device(const PipelineRun& run) {
  return run.plan.devices > 0 ? std::max(1, run.plan.stages / run.plan.devices) : 1;
}

double max_parameter_copies(const PipelineRun& run) {
  double c = 0;
  for (const auto& d : run.stats.devices) c = std::max(c, d.parameter_copies);
  return c;
}

}  // namespace

std::vector<std::vector<int>> pipeline_chunks(const PipelineRun& run) {
  const PipelinePlan& plan = run.plan;
  std::vector<std::vector<int>> chunks(plan.devices, std::vector<int>(plan.stages, -1));
  std::vector<std::vector<bool>> holds(plan.devices, std::vector<bool>(plan.stages, false));
  for (const auto& route : plan.routes)  // the stages each device runs on some route
    for (int s = 0; s < plan.stages; ++s) holds[route[s]][s] = true;
  for (int d = 0; d < plan.devices; ++d) {
    if (std::count(holds[d].begin(), holds[d].end(), true) < 2) continue;
    int next = 0;
    for (int s = 0; s < plan.stages; ++s)
      if (holds[d][s]) chunks[d][s] = next++;
  }
  return chunks;
}

namespace {
// The chunk that device holds stage as, or -1 where it holds only one.
int chunk_of(const std::vector<std::vector<int>>& chunks, int device, int stage) {
  if (device < 0 || device >= static_cast<int>(chunks.size()) || stage < 0 ||
      stage >= static_cast<int>(chunks[device].size()))
    return -1;
  return std::max(-1, chunks[device][stage]);
}
}  // namespace

std::string chunk_suffix(const std::vector<std::vector<int>>& chunks, int device, int stage) {
  const int chunk = chunk_of(chunks, device, stage);
  return chunk < 0 ? std::string() : fmt::format(" c{}", chunk);
}

namespace {

// The schedule's name, with its chunk count where the scenario chooses it (interleaved-1f1b).
std::string schedule_label(const PipelineRun& run) {
  const ScheduleFamily* f = find_schedule(run.schedule);
  return f && f->takes_virtual_stages ? fmt::format("{} v={}", run.schedule, chunks_per_device(run)) : run.schedule;
}
}  // namespace

bool fits_capacity(const PipelineRun& run, const PipelineSpec& spec) {
  return !spec.capacity || max_peak(run) <= *spec.capacity;
}

Json pipeline_summary_json(const PipelineRun& run, const PipelineSpec& spec) {
  Json j;
  j["schedule"] = run.schedule;
  j["stages"] = spec.stages;
  j["microbatches"] = spec.microbatches;
  j["virtual_stages"] = chunks_per_device(run);
  j["step_time_ms"] = round3(to_ms(run.stats.step_time));
  j["idle_ms_per_device"] = round3(to_ms(mean_idle(run)));
  j["bubble_fraction"] = round4(run.stats.bubble_fraction);
  j["messages"] = {{"forward", run.stats.forward_messages}, {"backward", run.stats.backward_messages}};
  j["peak_memory_mib"] = round3(mib(max_peak(run)));
  j["parameter_copies"] = round3(max_parameter_copies(run));
  if (spec.capacity) {
    j["capacity_mib"] = round3(mib(*spec.capacity));
    j["fits"] = fits_capacity(run, spec);
  }
  Json devices = Json::array();
  for (const auto& d : run.stats.devices) {
    devices.push_back({{"id", d.id},
                       {"busy_ms", round3(to_ms(d.busy))},
                       {"idle_ms", round3(to_ms(d.idle))},
                       {"peak_resident_microbatches", d.peak_resident},
                       {"peak_memory_mib", round3(mib(d.peak_memory))},
                       {"peak_memory_at_ms", round3(to_ms(d.peak_memory_time))},
                       {"parameter_copies", round3(d.parameter_copies)},
                       {"stages_held", d.stage_copies}});
  }
  j["devices"] = devices;
  return j;
}

std::string pipeline_schedule_label(const PipelineRun& run) { return schedule_label(run); }

std::string pipeline_run_title(const PipelineRun& run, const PipelineSpec& spec) {
  const int v = chunks_per_device(run);
  return fmt::format("schedule {}: {} stages, {} micro-batches{}", run.schedule, spec.stages, spec.microbatches,
                     v > 1 ? fmt::format(", {} model chunks per device", v) : "");
}

std::string pipeline_run_times(const PipelineRun& run) {
  return fmt::format("step time {} ms, idle per device {} ms, bubble {:.1f}% of the step", fmt_ms(run.stats.step_time),
                     fmt_ms(mean_idle(run)), 100.0 * run.stats.bubble_fraction);
}

std::string pipeline_run_messages(const PipelineRun& run) {
  return fmt::format("messages per step: {} forward, {} backward", run.stats.forward_messages,
                     run.stats.backward_messages);
}

std::string pipeline_capacity_verdict(const PipelineRun& run, const PipelineSpec& spec) {
  if (!spec.capacity) return "";
  return fmt::format(
      "capacity {} MiB per device: {}", fmt_mib(*spec.capacity),
      fits_capacity(run, spec) ? "fits" : fmt::format("does not fit (peak {} MiB)", fmt_mib(max_peak(run))));
}

Table pipeline_device_table(const PipelineRun& run) {
  Table t({{"device"},
           {"busy (ms)"},
           {"idle (ms)"},
           {"peak memory (MiB)"},
           {"at (ms)"},
           {"peak resident mb"},
           {"param copies"}});
  for (const auto& d : run.stats.devices)
    t.add_row({std::to_string(d.id), fmt_ms(d.busy), fmt_ms(d.idle), fmt_mib(d.peak_memory), fmt_ms(d.peak_memory_time),
               std::to_string(d.peak_resident), fmt_copies(d.parameter_copies)});
  return t;
}

std::string pipeline_run_text(const PipelineRun& run, const PipelineSpec& spec) {
  std::string out =
      fmt::format("{}\n{}\n{}\n\n", pipeline_run_title(run, spec), pipeline_run_times(run), pipeline_run_messages(run));
  out += pipeline_device_table(run).render();
  if (spec.capacity) out += fmt::format("\n{}\n", pipeline_capacity_verdict(run, spec));
  return out;
}

Table pipeline_compare_table(const std::vector<const PipelineRun*>& runs, const PipelineSpec& spec) {
  std::vector<const PipelineRun*> order = runs;
  // With a capacity, the book's order of questions: first drop what does not fit, then compare
  // time. Schedules that fit come first, fastest first; then those that do not, fastest first.
  if (spec.capacity)
    std::stable_sort(order.begin(), order.end(), [&](const PipelineRun* a, const PipelineRun* b) {
      const bool fa = fits_capacity(*a, spec), fb = fits_capacity(*b, spec);
      if (fa != fb) return fa;
      return a->stats.step_time < b->stats.step_time;
    });
  std::vector<Table::Column> cols = {{"schedule", false},
                                     {"step (ms)"},
                                     {"idle/device (ms)"},
                                     {"bubble"},
                                     {"stage 0 peak (MiB)"},
                                     {"max peak (MiB)"},
                                     {"resident mb per stage", false},
                                     {"fwd/bwd msgs"},
                                     {"param copies"}};
  if (spec.capacity) cols.push_back({"fits", false});
  Table t(cols);
  for (const PipelineRun* r : order) {
    const auto& devs = r->stats.devices;
    Bytes peak = 0;
    int peak_dev = 0;
    std::string resident;
    for (const auto& d : devs) {
      if (d.peak_memory > peak) {
        peak = d.peak_memory;
        peak_dev = d.id;
      }
      if (!resident.empty()) resident += ' ';
      resident += std::to_string(d.peak_resident);
    }
    std::vector<std::string> row = {schedule_label(*r),
                                    fmt_ms(r->stats.step_time),
                                    fmt_ms(mean_idle(*r)),
                                    fmt::format("{:.1f}%", 100.0 * r->stats.bubble_fraction),
                                    fmt_mib(devs.empty() ? 0 : devs[0].peak_memory),
                                    fmt::format("{} (d{})", fmt_mib(peak), peak_dev),
                                    resident,
                                    fmt::format("{}/{}", r->stats.forward_messages, r->stats.backward_messages),
                                    fmt_copies(max_parameter_copies(*r))};
    if (spec.capacity)
      row.push_back(fits_capacity(*r, spec) ? "yes" : fmt::format("no (+{} MiB)", fmt_mib(peak - *spec.capacity)));
    t.add_row(std::move(row));
  }
  return t;
}

std::string pipeline_compare_title(const PipelineSpec& spec) {
  std::string out = fmt::format("{} stages, {} micro-batches", spec.stages, spec.microbatches);
  if (spec.capacity)
    out += fmt::format(", capacity {} MiB per device (schedules that fit first)", fmt_mib(*spec.capacity));
  return out;
}

std::string pipeline_compare_text(const std::vector<const PipelineRun*>& runs, const PipelineSpec& spec) {
  return fmt::format("{}\n\n{}", pipeline_compare_title(spec), pipeline_compare_table(runs, spec).render());
}

namespace {
// One trace slice's name, written through a cursor into a fixed buffer (a few numbers and
// words), and its args.
struct SliceText {
  char name[160];
  std::size_t name_size = 0;
  TraceArgs args;
  char opname[kPipeOpNameMax];
  char letter[2] = {0, 0};
  std::string_view name_view() const { return {name, name_size}; }
};

void micro_and_chunk(TextCursor& c, std::int64_t micro, int chunk) {
  c.integer(micro);
  if (chunk >= 0) {
    c << " c";
    c.integer(chunk);
  }
}

// Fills `t` with op's slice name and args; returns its category (which may point into `t`).
// The chunk is named where the device holds several ("F mb0 c1"); sends carry the sender's.
std::string_view pipeline_slice(SliceText& t, const OpGraph& g, const Timeline& tl, const PipeOpInfo& x, OpId op,
                                const std::vector<std::vector<int>>& chunks) {
  std::string_view cat;
  const int chunk = x.kind == PipeOp::Update ? -1 : chunk_of(chunks, x.device, x.stage);
  TextCursor n(t.name);
  switch (x.kind) {
    case PipeOp::Update:
      n << "update";
      cat = "update";
      break;
    case PipeOp::SendForward:
    case PipeOp::SendBackward:
      n << (x.kind == PipeOp::SendForward ? std::string_view("send F mb") : std::string_view("send B mb"));
      micro_and_chunk(n, x.micro, chunk);
      cat = "send";
      break;
    case PipeOp::Overlap:
      n << "F mb";
      micro_and_chunk(n, x.micro, chunk);
      n << " + B mb";
      micro_and_chunk(n, x.micro2, chunk_of(chunks, x.device, x.stage2()));
      cat = "overlap";
      break;
    default:
      t.letter[0] = pipe_op_letter(x.kind);
      n << t.letter[0] << " mb";
      micro_and_chunk(n, x.micro, chunk);
      cat = std::string_view(t.letter, 1);
      break;
  }
  t.name_size = n.written_since(t.name);
  const std::string_view opname(t.opname, static_cast<std::size_t>(write_pipe_op_name(t.opname, x) - t.opname));
  TraceArgs& a = t.args;
  a.clear();
  a.text("op", opname).integer("stage", x.stage).integer("microbatch", x.micro);
  a.slice_time("start_ms", tl.start[op]).slice_time("end_ms", tl.done(g, op));
  if (chunk >= 0) a.integer("chunk", chunk);
  if (x.kind == PipeOp::Overlap) {
    a.integer("backward_stage", x.stage2()).integer("backward_microbatch", x.micro2);
    if (chunk >= 0) a.integer("backward_chunk", chunks[x.device][x.stage2()]);
  }
  if (x.kind == PipeOp::SendForward || x.kind == PipeOp::SendBackward)
    a.integer("from_device", x.device).integer("to_device", x.peer()).millis("latency_ms", g.op_latency(op));
  return cat;
}

}  // namespace

void pipeline_trace(TraceWriter& tr, const PipelineRun& run) {
  const PipelineProgram& prog = *run.program;
  const OpGraph& g = prog.graph;
  const Timeline& tl = run.timeline;
  const auto pid_of = [](int device) { return device + 1; };
  constexpr int kComputeTid = 1;
  // Link tracks live in the sending device's process, one thread per destination. Indexed by
  // resource (every op looks its track up).
  std::vector<std::pair<int, int>> track(g.resource_count(), {0, 0});  // resource -> (pid, tid)
  for (int d = 0; d < prog.devices; ++d) {
    tr.process(pid_of(d), fmt::format("device {}", d), d);
    tr.thread(pid_of(d), kComputeTid, "compute", 0);
    track[prog.compute[d]] = {pid_of(d), kComputeTid};
  }
  for (const auto& [r, ends] : prog.link_ends) {
    const auto [src, dst] = ends;
    const int tid = 100 + dst;
    tr.thread(pid_of(src), tid, fmt::format("link to device {}", dst), 1 + dst);
    track[r] = {pid_of(src), tid};
  }
  const std::vector<std::vector<int>> chunks = pipeline_chunks(run);
  // One slice per op, its name and args made in reused room (pipeline_slice): this loop is the
  // trace's bytes, and formatting it with format strings cost 3/4 of the export.
  // A send starts its message's arrow: ids 1, 2, ... in send order, as the arrows below.
  SliceText text;
  std::uint64_t next_arrow = 1;
  const auto sends_end = static_cast<OpId>(std::min(g.op_count(), prog.info.size()));
  for (OpId op = 0; op < g.op_count(); ++op) {
    const auto [pid, tid] = track[g.op_resource(op)];
    const std::string_view cat = pipeline_slice(text, g, tl, prog.info[op], op, chunks);
    const Time done = tl.done(g, op);
    const bool send = op >= prog.first_send && op < sends_end && PipelineProgram::is_send(prog.info.kind(op));
    tr.slice(pid, tid, text.name_view(), cat, tl.start[op], done - tl.start[op], text.args, send ? next_arrow++ : 0);
  }
  // Sends come after the compute ops; their consumers are scattered among those: a consumer's
  // record and start are prefetched 16 sends ahead, so that the cache misses overlap.
  std::uint64_t flow_id = 1;
  for (OpId send = prog.first_send; send < sends_end; ++send) {
    if (!PipelineProgram::is_send(prog.info.kind(send))) continue;
    if (send + 16 < sends_end && PipelineProgram::is_send(prog.info.kind(send + 16))) {
      const OpId ahead = prog.consumer_of(send + 16);
      __builtin_prefetch(&g.records()[ahead]);
      __builtin_prefetch(&tl.start[ahead]);
    }
    const OpId consumer = prog.consumer_of(send);
    const auto [spid, stid] = track[g.op_resource(send)];
    const auto [cpid, ctid] = track[g.op_resource(consumer)];
    tr.flow(flow_id++, "message", spid, stid, tl.start[send], cpid, ctid, tl.start[consumer]);
  }
  std::vector<LevelCurve> computed;
  const std::vector<LevelCurve>& memory = memory_curves(run, computed);
  for (int d = 0; d < prog.devices; ++d)
    for (const auto& [t, level] : memory[d].steps) tr.counter(pid_of(d), "memory", t, "MiB", mib(level));
}

}  // namespace stepsim::cli
