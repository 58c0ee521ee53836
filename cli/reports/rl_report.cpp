#include "cli/reports/rl_report.hpp"
#include "cli/reports/quantities.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli/reports/table.hpp"

namespace stepsim::cli {

namespace {
using Json = nlohmann::ordered_json;

double round4(double x) { return std::round(x * 10000.0) / 10000.0; }
std::string seconds3(Time t) { return fmt::format("{:.3f}", to_s(t)); }
std::string gib1(Bytes b) { return fmt::format("{:.1f}", gib(b)); }

std::string mode_text(const RlLoopSpec& s) {
  std::string out = s.mode == RlMode::Synchronous ? "synchronous" : fmt::format("async <={}", s.max_staleness);
  if (s.updates == WeightUpdates::InFlight)
    out += s.interrupted == Interrupted::Discard ? ", in flight, discard" : ", in flight, resume";
  return out;
}

std::string workers_text(const RlLoopSpec& s) {
  return fmt::format("{}/{}/{}", s.generation.workers, s.verification.present() ? s.verification.workers : 0,
                     s.learning.workers);
}

std::string staleness_text(const RlLoopStats& st) {
  std::string out;
  for (const auto& [age, count] : st.staleness) out += fmt::format("{}{}:{}", out.empty() ? "" : " ", age, count);
  return out.empty() ? "-" : out;
}

std::string busy_text(const RlLoopStats& st) {
  std::string cells[3] = {"-", "-", "-"};
  for (const auto& u : st.stages) cells[u.stage] = percent(u.utilization, 0);
  return fmt::format("{}/{}/{}", cells[0], cells[1], cells[2]);
}

// The first synchronous and first asynchronous variant with the same stage times, if any.
std::optional<std::pair<const RlLoopSpec*, const RlLoopSpec*>> sync_async_pair(const RlSpec& sc) {
  const RlLoopSpec *sync = nullptr, *async = nullptr;
  for (const auto& l : sc.loops) {
    if (l.mode == RlMode::Synchronous && !sync) sync = &l;
    if (l.mode == RlMode::Asynchronous && !async) async = &l;
  }
  if (!sync || !async) return std::nullopt;
  return std::make_pair(sync, async);
}

Json loop_json(const RlLoopRun& run) {
  const RlLoopSpec& s = run.spec;
  const RlLoopStats& st = run.stats;
  Json j;
  j["name"] = s.name;
  j["mode"] = s.mode == RlMode::Synchronous ? "synchronous" : "asynchronous";
  if (s.mode == RlMode::Asynchronous) j["max_staleness"] = s.max_staleness;
  j["weight_updates"] = s.updates == WeightUpdates::InFlight ? "in_flight" : "between_batches";
  if (s.updates == WeightUpdates::InFlight)
    j["interrupted"] = s.interrupted == Interrupted::Discard ? "discard" : "resume";
  j["batches"] = s.batches;
  j["batch_size"] = s.batch_size;
  j["kept"] = round4(static_cast<double>(s.kept_ppm) / kPpm);
  j["workers"] = {{"generation", s.generation.workers},
                  {"verification", s.verification.present() ? s.verification.workers : 0},
                  {"learning", s.learning.workers}};
  j["sync_s"] = round3(to_s(s.sync));
  j["period_s"] = round3(to_s(st.period));
  j["learner_rate_per_s"] = round4(st.learner_rate);
  j["window_batches"] = {st.window_from + 1, st.window_to};
  Json model;
  model["period_s"] = round3(to_s(model_period(s)));
  model["learner_rate_per_s"] = round4(model_learner_rate(s));
  if (const auto fb = flow_bound(s)) {
    model["flow_bound_per_s"] = round4(fb->learner_rate);
    model["flow_bottleneck"] = stage_name(fb->bottleneck);
  }
  j["model"] = model;
  j["bottleneck"] = stage_name(st.bottleneck);
  Json util;
  for (const auto& u : st.stages) util[stage_name(u.stage)] = round4(u.utilization);
  j["utilization"] = util;
  Json stale = Json::object();
  for (const auto& [age, count] : st.staleness) stale[std::to_string(age)] = count;
  j["staleness"] = stale;
  j["trajectories"] = {{"generated", st.generated},
                       {"verified_kept", st.verified_kept},
                       {"interrupted", st.interrupted},
                       {"discarded_interrupted", st.discarded_interrupted},
                       {"learned", st.learned},
                       {"mean_length_generated_s", round3(st.mean_length_generated_s)},
                       {"mean_length_learned_s", round3(st.mean_length_learned_s)}};
  j["update_rate_per_s"] = round4(st.update_rate_per_s);
  if (!st.survival.empty()) {
    Json bins = Json::array();
    for (const auto& b : st.survival)
      bins.push_back({{"from_s", round3(to_s(b.lo))},
                      {"to_s", b.hi < 0 ? Json(nullptr) : Json(round3(to_s(b.hi)))},
                      {"generated", b.generated},
                      {"survived", b.survived},
                      {"model", round4(b.model)}});
    j["survival"] = bins;
  }
  j["peak_queue"] = {{"verification", st.peak_verification_queue}, {"learning", st.peak_learning_queue}};
  j["makespan_s"] = round3(to_s(st.makespan));
  return j;
}

}  // namespace

Json rl_summary_json(const RlRun& run, const RlSpec& scenario) {
  Json j;
  j["kind"] = "rl";
  if (!run.loops.empty()) {
    Json loops = Json::array();
    for (const auto& l : run.loops) loops.push_back(loop_json(l));
    j["loops"] = loops;
    if (const auto pair = sync_async_pair(scenario)) {
      const Time ps = model_period(*pair->first), pa = model_period(*pair->second);
      const Fraction q = async_break_even(ps, pa);
      j["async_break_even_kept"] = {
          {"num", q.num}, {"den", q.den}, {"value", round4(static_cast<double>(q.num) / q.den)}};
    }
  }
  if (scenario.colocate) {
    Json c;
    c["capacity_gib"] = round3(gib(scenario.colocate->capacity));
    Json orders = Json::array();
    for (const auto& o : run.colocate)
      orders.push_back({{"order", o.order},
                        {"training_alone_gib", round3(gib(o.before))},
                        {"generation_alone_gib", round3(gib(o.after))},
                        {"peak_gib", round3(gib(o.peak))},
                        {"peak_at_s", round3(to_s(o.peak_time))},
                        {"peak_step", o.peak_step},
                        {"fits", o.fits}});
    c["orders"] = orders;
    if (run.colocate.size() >= 2) {
      const auto [lo, hi] =
          std::minmax_element(run.colocate.begin(), run.colocate.end(),
                              [](const ColocateRun& a, const ColocateRun& b) { return a.peak < b.peak; });
      c["peak_difference_gib"] = round3(gib(hi->peak - lo->peak));
    }
    j["colocate"] = c;
  }
  if (scenario.weight_transfer) {
    const auto& w = *scenario.weight_transfer;
    Json t;
    t["size_gib"] = round3(gib(w.size));
    t["receivers"] = w.receivers;
    t["senders"] = w.senders;
    Json modes = Json::array();
    for (const auto& r : run.weight_transfer)
      modes.push_back({{"distribution", distribution_name(r.mode)},
                       {"per_receiver_gib", round3(gib(*std::max_element(r.received.begin(), r.received.end())))},
                       {"total_traffic_gib", round3(gib(r.total))},
                       {"time_s", round3(to_s(r.time))}});
    t["distributions"] = modes;
    j["weight_transfer"] = t;
  }
  return j;
}

namespace {

std::string rl_in_flight_text(const RlRun& run) {
  std::string out = "\nweight updates in flight (lengths are generation times)\n\n";
  Table f({{"variant", false},
           {"generated"},
           {"interrupted"},
           {"learned"},
           {"updates/s"},
           {"mean length (s)"},
           {"mean learned length (s)"}});
  for (const auto& l : run.loops) {
    if (l.spec.updates != WeightUpdates::InFlight) continue;
    const auto& st = l.stats;
    f.add_row({l.spec.name, std::to_string(st.generated), std::to_string(st.interrupted), std::to_string(st.learned),
               fmt::format("{:.4f}", st.update_rate_per_s), fmt::format("{:.3f}", st.mean_length_generated_s),
               fmt::format("{:.3f}", st.mean_length_learned_s)});
  }
  out += f.render();
  for (const auto& l : run.loops) {
    if (l.spec.updates != WeightUpdates::InFlight) continue;
    out += fmt::format("\n{}: survival without an update by length, against e^(-lambda t), lambda = {:.4f}/s\n\n",
                       l.spec.name, l.stats.update_rate_per_s);
    Table b({{"length (s)", false}, {"generated"}, {"survived"}, {"model"}});
    for (const auto& bin : l.stats.survival)
      b.add_row({bin.hi < 0 ? fmt::format(">= {}", seconds3(bin.lo))
                            : fmt::format("{} - {}", seconds3(bin.lo), seconds3(bin.hi)),
                 std::to_string(bin.generated),
                 bin.generated ? percent(static_cast<double>(bin.survived) / bin.generated, 0) : "-",
                 bin.generated ? percent(bin.model, 0) : "-"});
    out += b.render();
  }
  return out;
}

std::string rl_loops_text(const RlRun& run, const RlSpec& scenario) {
  std::string out =
      "RL loop (busy and workers: generation/verification/learning; steady state = second half of the batches)\n\n";
  Table t({{"variant", false},
           {"mode", false},
           {"workers", false},
           {"s/batch"},
           {"model s/batch"},
           {"learned/s"},
           {"model/s"},
           {"bottleneck", false},
           {"busy", false},
           {"staleness (age:count)", false}});
  for (const auto& l : run.loops) {
    const auto& s = l.spec;
    const auto& st = l.stats;
    t.add_row({s.name, mode_text(s), workers_text(s), seconds3(st.period), seconds3(model_period(s)),
               fmt::format("{:.3f}", st.learner_rate), fmt::format("{:.3f}", model_learner_rate(s)),
               stage_name(st.bottleneck), busy_text(st), staleness_text(st)});
  }
  out += t.render();
  if (const auto pair = sync_async_pair(scenario)) {
    const Time ps = model_period(*pair->first), pa = model_period(*pair->second);
    const Fraction q = async_break_even(ps, pa);
    out += fmt::format(
        "\nmodel: synchronous {} s, asynchronous {} s per batch: asynchronous learns more per second "
        "when its kept fraction exceeds {}/{} = {:.1f}%\n",
        seconds3(ps), seconds3(pa), q.num, q.den, 100.0 * q.num / q.den);
  }
  bool any_flight = false;
  for (const auto& l : run.loops) any_flight |= l.spec.updates == WeightUpdates::InFlight;
  if (any_flight) out += rl_in_flight_text(run);
  return out;
}

std::string rl_colocate_text(const RlRun& run, const ColocateSpec& c) {
  std::string out = fmt::format("shared card: capacity {} GiB; training alone {} GiB, generation alone {} GiB\n\n",
                                gib1(c.capacity), gib1(run.colocate.front().before), gib1(run.colocate.front().after));
  Table t({{"switch order", false}, {"steps", false}, {"peak (GiB)"}, {"during", false}, {"at (s)"}, {"fits", false}});
  for (std::size_t i = 0; i < run.colocate.size(); ++i) {
    const auto& o = run.colocate[i];
    std::string steps;
    for (const auto& st : c.orders[i].steps)
      steps += fmt::format("{}{}{}", steps.empty() ? "" : " ", st.load ? '+' : '-', st.state);
    t.add_row({o.order, steps, gib1(o.peak), o.peak_step, seconds3(o.peak_time),
               o.fits ? "yes" : fmt::format("no (+{} GiB)", gib1(o.peak - c.capacity))});
  }
  out += t.render();
  if (run.colocate.size() >= 2) {
    const auto [lo, hi] =
        std::minmax_element(run.colocate.begin(), run.colocate.end(),
                            [](const ColocateRun& a, const ColocateRun& b) { return a.peak < b.peak; });
    out += fmt::format("peaks differ by {} GiB ({} vs {})\n", gib1(hi->peak - lo->peak), hi->order, lo->order);
  }
  return out;
}

std::string rl_weight_transfer_text(const RlRun& run, const WeightTransferSpec& w) {
  std::string out =
      fmt::format("weight distribution: {} GiB to {} receivers from {} sender(s), {:.1f} GB/s per sender link\n\n",
                  gib1(w.size), w.receivers, w.senders, static_cast<double>(w.bandwidth) / 1e9);
  Table t({{"distribution", false}, {"per receiver (GiB)"}, {"total traffic (GiB)"}, {"time (s)"}});
  for (const auto& r : run.weight_transfer)
    t.add_row({distribution_name(r.mode),
               fmt::format("{:.2f}", gib(*std::max_element(r.received.begin(), r.received.end()))),
               fmt::format("{:.1f}", gib(r.total)), seconds3(r.time)});
  out += t.render();
  return out;
}

}  // namespace

std::string rl_run_text(const RlRun& run, const RlSpec& scenario) {
  std::string out;
  if (!run.loops.empty()) out += rl_loops_text(run, scenario);
  if (scenario.colocate && !run.colocate.empty()) {
    if (!out.empty()) out += "\n";
    out += rl_colocate_text(run, *scenario.colocate);
  }
  if (scenario.weight_transfer && !run.weight_transfer.empty()) {
    if (!out.empty()) out += "\n";
    out += rl_weight_transfer_text(run, *scenario.weight_transfer);
  }
  return out;
}

namespace {

// Trajectories: one slice per stretch generated with one policy version (the number of syncs its
// generator finished before the chunk started, as in RlTrajectory).
void trace_trajectories(TraceWriter& tr, const RlLoopRun& l, int gen_pid) {
  const Timeline& tl = l.timeline;
  for (const GenerationStretch& g : generation_stretches(l)) {
    const RlTrajectory& t = *g.trajectory;
    TraceArgs args;
    args.integer("trajectory", t.id).integer("batch", t.batch).integer("version", g.version);
    args.boolean("learned", t.learned).boolean("interrupted", t.interrupted).integer("staleness", t.staleness);
    tr.slice(gen_pid, t.generator + 1, fmt::format("traj {} v{}", t.id, g.version), "generate", tl.start[g.first_op],
             tl.end(l.program->graph, g.last_op) - tl.start[g.first_op], args);
  }
}

// Every op but generation chunks (drawn per trajectory) as a slice on its worker.
void trace_loop_ops(TraceWriter& tr, const RlLoopRun& l, int gen_pid) {
  const RlLoopProgram& p = *l.program;
  const Timeline& tl = l.timeline;
  const int ver_pid = gen_pid + 1, learn_pid = gen_pid + 2, weights_pid = gen_pid + 3;
  for (OpId op = 0; op < p.graph.op_count(); ++op) {
    const RlOpInfo& x = p.info[op];
    switch (x.kind) {
      case RlOpKind::Generate: break;
      case RlOpKind::Verify: {
        const RlTrajectory& t = p.trajectories[x.sample];
        tr.slice(ver_pid, x.worker + 1, fmt::format("verify {}", x.sample), "verify", tl.start[op],
                 p.graph.op_duration(op), TraceArgs().integer("trajectory", x.sample).boolean("kept", t.verified_kept));
        break;
      }
      case RlOpKind::Learn: {
        int learned = 0;
        for (int id : p.batch_learned_ids[x.batch])
          if (p.trajectories[id].learner == x.worker && p.trajectories[id].learned) ++learned;
        tr.slice(learn_pid, x.worker + 1, fmt::format("learn batch {} (v{})", x.batch, x.batch), "learn", tl.start[op],
                 p.graph.op_duration(op), TraceArgs().integer("batch", x.batch).integer("trajectories", learned));
        break;
      }
      case RlOpKind::Publish:
        tr.slice(weights_pid, 1, fmt::format("publish v{}", x.batch + 1), "publish", tl.start[op], 0,
                 TraceArgs().integer("version", x.batch + 1));
        break;
      case RlOpKind::Sync: {
        const int owner = x.stage == 0 ? gen_pid : learn_pid;
        tr.slice(owner, x.worker + 1, fmt::format("sync v{}", x.batch + 1), "sync", tl.start[op],
                 p.graph.op_duration(op), TraceArgs().integer("version", x.batch + 1));
        break;
      }
    }
  }
}

// One loop as four processes (generation, verification, learning, weights) from `pid` on.
void trace_loop(TraceWriter& tr, const RlLoopRun& l, int pid, const std::string& prefix) {
  const RlLoopProgram& p = *l.program;
  const int gen_pid = pid, ver_pid = pid + 1, learn_pid = pid + 2, weights_pid = pid + 3;
  tr.process(gen_pid, prefix + "generation", gen_pid);
  if (!p.verifiers.empty()) tr.process(ver_pid, prefix + "verification", ver_pid);
  tr.process(learn_pid, prefix + "learning", learn_pid);
  tr.process(weights_pid, prefix + "weights", weights_pid);
  for (std::size_t w = 0; w < p.generators.size(); ++w)
    tr.thread(gen_pid, static_cast<int>(w) + 1, fmt::format("generator {}", w), static_cast<int>(w));
  for (std::size_t w = 0; w < p.verifiers.size(); ++w)
    tr.thread(ver_pid, static_cast<int>(w) + 1, fmt::format("verifier {}", w), static_cast<int>(w));
  for (std::size_t w = 0; w < p.learners.size(); ++w)
    tr.thread(learn_pid, static_cast<int>(w) + 1, fmt::format("learner {}", w), static_cast<int>(w));
  tr.thread(weights_pid, 1, "publish", 0);
  trace_trajectories(tr, l, gen_pid);
  trace_loop_ops(tr, l, gen_pid);
  for (const auto& [t, level] : l.queues[RlLoopProgram::kVerificationQueue].steps)
    tr.counter(ver_pid, "verification queue", t, "trajectories", static_cast<double>(level));
  for (const auto& [t, level] : l.queues[RlLoopProgram::kLearningQueue].steps)
    tr.counter(learn_pid, "learning queue", t, "trajectories", static_cast<double>(level));
}

}  // namespace

void rl_trace(TraceWriter& tr, const RlRun& run) {
  int pid = 1;
  for (const auto& l : run.loops) {
    trace_loop(tr, l, pid, run.loops.size() > 1 ? l.spec.name + ": " : "");
    pid += 4;
  }
  for (const auto& o : run.colocate) {
    tr.process(pid, "shared card: " + o.order, pid);
    tr.thread(pid, 1, "card", 0);
    for (OpId op = 0; op < o.graph.op_count(); ++op)
      tr.slice(pid, 1, o.step[op], "card", o.timeline.start[op], o.graph.op_duration(op), {});
    for (const auto& [t, level] : o.memory.steps) tr.counter(pid, "memory", t, "GiB", gib(level));
    ++pid;
  }
  for (const auto& r : run.weight_transfer) {
    tr.process(pid, std::string("weights ") + distribution_name(r.mode), pid);
    for (std::size_t s = 0; s < r.links.size(); ++s)
      tr.thread(pid, static_cast<int>(s) + 1, fmt::format("sender {} link", s), static_cast<int>(s));
    for (const auto& send : r.sends)
      tr.slice(pid, send.sender + 1, fmt::format("to receiver {}", send.receiver), "send", r.timeline.start[send.op],
               r.graph.op_duration(send.op),
               TraceArgs().integer("receiver", send.receiver).real4("gib", gib(send.bytes)));
    ++pid;
  }
}

}  // namespace stepsim::cli
