#include "schedules/lowering/search/layout_search.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <string_view>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/checkpoint.hpp"
#include "models/deadline.hpp"
#include "models/layout.hpp"
#include "schedules/lowering/spec_error.hpp"
#include "schedules/pipeline/registry.hpp"
#include "sim/checked.hpp"
#include "sim/parallel_for.hpp"

namespace stepsim {

const char* search_rank_name(SearchRank r) {
  switch (r) {
    case SearchRank::Step: return "time";
    case SearchRank::Cost: return "cost";
    case SearchRank::Days: return "days";
  }
  return "?";
}

namespace {

// Candidates simulated between two updates of the bound threshold (fixed, so that the set of
// simulated layouts does not depend on the thread count).
constexpr std::size_t kBatch = 16;

}  // namespace

std::optional<std::string> schedule_problem(const JobLayout& l) {
  const ScheduleFamily* f = find_schedule(l.schedule);
  if (!f) return fmt::format("unknown schedule '{}'", l.schedule);
  if (l.zero >= 3) return std::nullopt;  // FSDP runs without a pipeline schedule
  if (!f->takes_virtual_stages && l.vpp > 1) return fmt::format("{} runs one chunk per device", f->name);
  ScheduleRequest req;
  req.devices = l.pp;
  req.microbatches = static_cast<int>(l.microbatches());
  req.virtual_stages = f->takes_virtual_stages ? l.vpp : 0;
  if (f->check)
    if (auto why = f->check(req)) return why;
  return std::nullopt;
}

Time compute_bound(const JobStepSpec& s) {
  const JobLayout& l = s.layout;
  const auto chunks = chunk_costs(s.model, l, s.cluster);
  const std::int64_t m = l.microbatches();
  // A schedule that splits the backward runs its input gradients without the TP collectives'
  // contention (LayerPasses::deferred_weight_grad): the less of the two bounds its compute.
  const ScheduleFamily* family = find_schedule(l.schedule);
  const bool split = l.zero < 3 && family && family->split_backward;
  Time best = 0;
  for (const auto& held : device_chunks(l)) {
    Time per_micro = 0;
    for (int k : held) {
      const auto& ch = chunks[static_cast<std::size_t>(k)];
      const PassSeconds input = split ? ch.backward_input + ch.deferred_weight_grad : ch.backward_input;
      per_micro += phase_ns(ch.forward.compute()) + phase_ns(input.compute()) + phase_ns(ch.backward_weight.compute());
    }
    const Time opt = phase_ns(optimizer_seconds(l, s.cluster, held_parameters(held, chunks)));
    // DualPipe holds each stage twice and runs half of the micro-batches through each copy.
    best = std::max(best, per_micro * m / l.stage_copies() + opt);
  }
  // The lowering rounds per op (and, for FSDP, per layer): allow for rounding of the sums.
  return static_cast<Time>(static_cast<double>(best) * 0.999);
}

namespace {

Bytes checkpoint_bytes(const SearchSpec& spec) {
  return spec.task.checkpoint_bytes.value_or(checkpoint_state_bytes(spec.model, spec.base));
}

CheckpointCost task_checkpoint_cost(const SearchSpec& spec) {
  const SearchTask& k = spec.task;
  CheckpointCost cost;
  cost.save = k.storage_bandwidth > 0 ? transfer_time(checkpoint_bytes(spec), k.storage_bandwidth) : 0;
  cost.restore = k.restore;
  return cost;
}

Interruptions task_interruptions(const SearchSpec& spec, std::int64_t cards) {
  Interruptions job;
  job.card_mtbf = spec.task.card_mtbf;
  job.cards = static_cast<int>(cards);
  return job;
}

// The interval between saves: the task's, else Young's optimum; 0 (no saves) with neither
// failures nor an interval given.
Time checkpoint_interval(const SearchTask& k, const CheckpointCost& cost, const Interruptions& job) {
  if (k.card_mtbf <= 0 && !k.interval) return 0;
  return k.interval.value_or(optimal_checkpoint_interval(cost, job));
}

struct TaskTerms {
  std::int64_t steps = 0;
  double overhead = 0;
};

TaskTerms task_terms(const SearchSpec& spec, std::int64_t cards, std::int64_t global_batch) {
  TaskTerms t;
  const SearchTask& k = spec.task;
  t.steps = steps_for(k.tokens, global_batch * spec.model.seq);
  const CheckpointCost cost = task_checkpoint_cost(spec);
  const Interruptions job = task_interruptions(spec, cards);
  const Time interval = checkpoint_interval(spec.task, cost, job);
  // Free saves (no storage bandwidth given) with failures: Young's interval is 0, yet each
  // failure still pays its restore, r / M (the planner's figure); interval 0 counts no saves.
  t.overhead = interval < std::numeric_limits<Time>::max() ? checkpoint_overhead(cost, interval, job).total() : 0;
  return t;
}

}  // namespace

Time task_checkpoint_interval(const SearchSpec& spec, std::int64_t cards) {
  return checkpoint_interval(spec.task, task_checkpoint_cost(spec), task_interruptions(spec, cards));
}

void apply_task(const SearchSpec& spec, Evaluated& e) {
  if (spec.task.tokens <= 0) return;
  const TaskTerms t = task_terms(spec, e.c.cards, e.c.layout.global_batch);
  e.overhead = t.overhead;
  e.completion = completion_time(spec.task.reserved, t.steps, e.step, t.overhead);
}

Time step_budget_at(const SearchSpec& spec, std::int64_t cards, std::int64_t global_batch) {
  if (spec.task.tokens <= 0 || spec.task.deadline <= 0) return 0;
  const TaskTerms t = task_terms(spec, cards, global_batch > 0 ? global_batch : spec.base.global_batch);
  return step_budget(spec.task.deadline, spec.task.reserved, t.steps, t.overhead);
}

bool by_time(const Evaluated& a, const Evaluated& b) {
  // As fast: the one that leaves more memory free first (zero 2 before zero 1 at the same step).
  if (a.step != b.step) return a.step < b.step;
  if (a.memory.total() != b.memory.total()) return a.memory.total() < b.memory.total();
  return a.c.index < b.c.index;
}

bool ranks_before(const SearchSpec& spec, const Evaluated& a, const Evaluated& b) {
  switch (spec.rank) {
    case SearchRank::Step: break;
    case SearchRank::Cost: {
      // cards x step, exactly (128-bit).
      const __int128 ca = static_cast<__int128>(a.c.cards) * a.step, cb = static_cast<__int128>(b.c.cards) * b.step;
      if (ca != cb) return ca < cb;
      break;
    }
    case SearchRank::Days:
      if (a.completion != b.completion) return a.completion < b.completion;
      break;
  }
  return by_time(a, b);
}

std::string layout_label(const Candidate& c, int layers) {
  const JobLayout& l = c.layout;
  std::string s = fmt::format("{} cards: tp {} pp {}", c.cards, l.tp, l.pp);
  if (l.vpp > 1) s += fmt::format(" v {}", l.vpp);
  if (l.first_chunk_layers >= 0 || l.last_chunk_layers >= 0) {
    // The pipeline's ends set: the layers the first and last chunks hold, as the table's `ends`
    // column gives them (an end left unset holds the middle chunks' share).
    const std::vector<int> n = chunk_layer_counts(layers, l);
    if (n.size() > 1) s += fmt::format(" (ends {}/{})", n.front(), n.back());
  }
  s += fmt::format(" dp {}", l.dp);
  if (l.cp > 1) s += fmt::format(" cp {}", l.cp);
  if (l.cp > 1 && l.cp_comm != CpComm::P2p) s += fmt::format(" ({})", cp_comm_name(l.cp_comm));
  if (l.ep > 1) s += fmt::format(" ep {}", l.ep);
  if (l.folded()) s += fmt::format(" (expert tp {})", l.etp());
  s += l.zero >= 3 ? " fsdp" : fmt::format(" zero {}", l.zero);
  if (l.dp_replicate > 1) s += fmt::format(" x{}", l.dp_replicate);  // HSDP's replicas
  if (l.zero >= 3 && l.keep_gathered) s += " (weights kept gathered)";
  if (l.offload_optimizer) s += " (" + offload_words(l) + ")";
  if (l.pp > 1) s += " " + l.schedule;
  s += fmt::format(", mbs {}, recompute {}{}", l.micro_batch, recompute_name(l.recompute), recomputed_layers_note(l));
  if (l.sequence_parallel) s += ", sp";
  if (l.offload_activations > 0) s += fmt::format(", activations of {} layers on the host", l.offload_activations);
  return s;
}

namespace {

double gib(Bytes b) { return static_cast<double>(b) / (1024.0 * 1024 * 1024); }

JobStepSpec step_spec(const SearchSpec& spec, const Candidate& c) {
  JobStepSpec s;
  s.model = spec.model;
  s.cluster = spec.cluster;
  s.layout = c.layout;
  s.input_wait = spec.input_wait;
  return s;
}

Evaluated simulate(const SearchSpec& spec, const Evaluated& in) {
  Evaluated e = in;
  const JobStepRun run = run_job_step(step_spec(spec, e.c));
  // `recompute_layers: auto` may take more layers once simulated (run_job_step): the layout run.
  if (run.spec.layout.recompute_layers != e.c.layout.recompute_layers) {
    e.c.layout = run.spec.layout;
    e.analytic_memory = job_memory(spec.model, e.c.layout, chunk_costs(spec.model, e.c.layout, spec.cluster)).total();
  }
  const JobStepResult& r = run.result;
  e.step = r.step_time;
  e.mfu = r.mfu;
  e.bubble = r.bubble;
  e.memory = r.memory;
  e.exposed_tp = r.exposed_tp;
  e.exposed_pp = r.exposed_pp;
  e.exposed_dp = r.exposed_dp;
  e.exposed_cp = r.exposed_cp;
  e.exposed_ep = r.exposed_ep;
  if (!r.critical_by_kind.empty()) {
    e.limit = r.critical_by_kind.front().what;
    e.limit_share = r.critical_by_kind.front().share;
  }
  apply_task(spec, e);
  return e;
}

// The N-th best step time among `done` (max when fewer than N).
Time nth_best(std::vector<Time>& best, int n) {
  if (static_cast<int>(best.size()) < n) return std::numeric_limits<Time>::max();
  std::nth_element(best.begin(), best.begin() + (n - 1), best.end());
  return best[static_cast<std::size_t>(n - 1)];
}

}  // namespace

namespace {

// What the pre-simulation pass leaves: the queue to simulate and what explains empty answers.
struct Prefiltered {
  std::vector<Evaluated> queue;
  std::map<std::string, std::int64_t> div_keys;
  std::optional<Evaluated> smallest;  // the smallest memory seen (for "nothing fits")
  // Layouts whose offloaded optimizers their node's host memory cannot hold, and the least host
  // memory one of them needs (for "nothing fits").
  std::int64_t over_host = 0;
  Bytes smallest_host = -1;
  struct CardsNote {
    std::string first_problem;
    Bytes smallest_memory = -1;
    bool queued = false;
  };
  std::map<std::int64_t, CardsNote> notes;
};

// Enumerates and prunes by divisibility, schedule and memory; the survivors get their bound.
Prefiltered prefilter(const SearchSpec& spec, const SearchOptions& opt, SearchCounts& n) {
  Prefiltered f;
  const Bytes cap = spec.cluster.accelerator.usable_memory;
  std::map<std::tuple<std::string, int, std::int64_t, int, int>, std::optional<std::string>> sched_cache;
  enumerate_layouts(spec, [&](const Candidate& c) {
    if (static_cast<std::size_t>(c.index) % opt.shard_count != opt.shard_index) return;
    ++n.considered;
    const JobLayout& l = c.layout;
    if (l.dp <= 0) {
      ++n.divisibility;
      ++f.div_keys["dp"];
      return;
    }
    if (const auto p = check_layout(spec.model, l, c.cards)) {
      ++n.divisibility;
      ++f.div_keys[p->key];
      auto& note = f.notes[c.cards];
      if (note.first_problem.empty()) note.first_problem = fmt::format("layout.{}: {}", p->key, p->message);
      return;
    }
    const auto key = std::make_tuple(l.schedule, l.pp, l.microbatches(), l.vpp, l.zero >= 3 ? 1 : 0);
    auto it = sched_cache.find(key);
    if (it == sched_cache.end()) it = sched_cache.emplace(key, schedule_problem(l)).first;
    if (it->second) {
      ++n.schedule;
      return;
    }
    Evaluated e;
    e.c = c;
    const JobStepSpec s = step_spec(spec, c);
    const std::vector<JobMemory> ranks = job_memory_by_rank(s.model, l, chunk_costs(s.model, l, s.cluster));
    e.analytic_memory = most_loaded(ranks).total();
    // An offloaded optimizer over its host's memory does not fit either (counted with memory).
    if (const Bytes host =
            l.offload_optimizer || l.offload_activations > 0 ? host_memory_per_node(ranks, s.cluster, c.cards) : 0;
        host > s.cluster.node.host_memory) {
      ++n.memory;
      ++f.over_host;
      if (f.smallest_host < 0 || host < f.smallest_host) f.smallest_host = host;
      return;
    }
    if (e.analytic_memory > cap) {
      ++n.memory;
      auto& note = f.notes[c.cards];
      if (note.smallest_memory < 0 || e.analytic_memory < note.smallest_memory)
        note.smallest_memory = e.analytic_memory;
      if (!f.smallest || e.analytic_memory < f.smallest->analytic_memory) f.smallest = e;
      return;
    }
    e.bound = compute_bound(s);
    f.notes[c.cards].queued = true;
    f.queue.push_back(std::move(e));
  });
  return f;
}

// Simulates `in` on up to `jobs` threads; results in input order, nullopt for a layout the job
// step refuses (SpecError: with blocking pipeline sends the schedule's order deadlocks, which only
// running it shows): the family cannot run it, as the schedule rule says of the others.
std::vector<std::optional<Evaluated>> simulate_batch(const SearchSpec& spec, const Evaluated* in, std::size_t count,
                                                     int jobs, const std::function<void()>& one_done) {
  std::vector<std::optional<Evaluated>> out(count);
  // A layout that throws otherwise (a time past the limit) must not end a worker thread: parallel_for
  // rethrows the error of the first such layout in input order, the same whatever the thread count.
  parallel_for(count, static_cast<unsigned>(std::max(1, jobs)), [&](std::size_t j) {
    try {
      out[j] = simulate(spec, in[j]);
    } catch (const SpecError&) {  // refused: out[j] stays empty
    } catch (...) {
      one_done();
      throw;
    }
    one_done();
  });
  return out;
}

// One (card count, global batch)'s queue [i, end), in bound order, in batches (see the header).
void simulate_cards(const SearchSpec& spec, const SearchOptions& opt, std::vector<Evaluated>& queue, std::size_t i,
                    std::size_t end, SearchResult& res, std::optional<Evaluated>& smallest,
                    const std::function<void(std::size_t)>& advance) {
  // Below the step searched around, every layout is simulated: those faster than it are counted.
  const Time keep_below =
      res.around && res.around->memory.total() <= spec.cluster.accelerator.usable_memory ? res.around->step : 0;
  SearchCounts& n = res.counts;
  const Bytes cap = spec.cluster.accelerator.usable_memory;
  std::vector<Time> best;  // step times of this card count's simulated layouts that fit
  std::size_t k = i;
  while (k < end) {
    const Time threshold = opt.prune_bound ? std::max(nth_best(best, std::max(1, spec.top)), keep_below)
                                           : std::numeric_limits<Time>::max();
    const std::size_t stop = std::min(end, k + kBatch);
    std::size_t cut = k;
    while (cut < stop && queue[cut].bound <= threshold) ++cut;
    if (cut == k) {  // sorted by bound: everything after is slower than the threshold too
      n.bound += static_cast<std::int64_t>(end - k);
      advance(end - k);
      return;
    }
    auto out = simulate_batch(spec, &queue[k], cut - k, std::max(1, opt.jobs), [&] { advance(1); });
    for (auto& run : out) {
      if (!run) {  // refused by the job step: counted with the schedule rule, not simulated
        ++n.schedule;
        continue;
      }
      Evaluated& e = *run;
      ++n.simulated;
      if (e.memory.total() > cap) {
        ++n.over_memory_simulated;
        if (!smallest || e.memory.total() < smallest->analytic_memory) {
          smallest = e;
          smallest->analytic_memory = e.memory.total();
        }
        continue;
      }
      best.push_back(e.step);
      res.simulated.push_back(std::move(e));
    }
    k = cut;
  }
}

// The most layouts the second search of a nearest miss may walk (opened_left_out).
constexpr std::int64_t kMaxOpened = 4096;

void open_key(SearchAxes& a, std::string_view key) {
  if (key == "tp") a.tp.clear();
  if (key == "pp") a.pp.clear();
  if (key == "zero") a.zero.clear();
  if (key == "recompute") a.recompute.clear();
  if (key == "sequence_parallel") a.sequence_parallel.clear();
  if (key == "ep") a.ep.clear();
  if (key == "cp") a.cp.clear();
}

// Every key of the space held at `at`'s value (one layout), for opening some of them again.
void pin_axes(SearchAxes& a, const Candidate& at) {
  const JobLayout& l = at.layout;
  a.cards = {at.cards};
  a.tp = {l.tp};
  a.pp = {l.pp};
  a.vpp = {l.vpp};
  a.cp = {l.cp};
  a.cp_comm = {l.cp_comm};
  a.ep = {l.ep};
  a.micro_batch = {l.micro_batch};
  a.zero = {l.zero};
  a.recompute = {l.recompute};
  a.sequence_parallel = {l.sequence_parallel ? 1 : 0};
  a.expert_tp = {l.expert_tp};
  a.schedule = {l.schedule};
  a.default_schedule = false;
  a.global_batch = {l.global_batch};
  if (a.dp_listed) a.dp = {l.dp};
}

// When nothing fits or runs, the layout that would if the keys the file leaves out (fixed at
// job_step's default) were searched: the search again, every key held at `at` (the layout that
// came closest) but those, `auto`, taken in kOpenableKeys order, each if the space the
// enumeration then walks stays within kMaxOpened layouts, whatever the file's own space.
// Nothing when opening them does not help either.
std::optional<std::string> opened_left_out(const SearchSpec& spec, const SearchOptions& opt, const Candidate& at) {
  SearchSpec open = spec;
  pin_axes(open.axes, at);
  std::vector<std::string> opened;
  for (const std::string& k : spec.axes.left_out) {
    const SearchAxes before = open.axes;
    open_key(open.axes, k);
    std::int64_t layouts = 0;
    enumerate_layouts(open, [&layouts](const Candidate&) { ++layouts; });
    if (layouts > kMaxOpened) {
      open.axes = before;
      continue;
    }
    opened.push_back(k);
  }
  if (opened.empty()) return std::nullopt;
  open.axes.left_out.clear();
  open.top = 1;
  SearchOptions o;
  o.jobs = opt.jobs;
  const SearchResult r = run_search(open, o);
  if (r.top.empty()) return std::nullopt;  // opening them does not help: nothing to say
  const Evaluated& e = r.top.front();
  return fmt::format(
      "search the layout keys this file leaves out ({}: each is fixed at job_step's default; `auto` searches "
      "one): with them searched and the rest as in the nearest miss, the fastest layout that fits is {}, step "
      "{:.3f} s, {:.1f} GiB per GPU",
      fmt::join(opened, ", "), layout_label(e.c, spec.model.shape.layers), to_s(e.step), gib(e.memory.total()));
}

NearestMiss nothing_fits(const SearchSpec& spec, const SearchOptions& opt, const Evaluated& s) {
  const Bytes cap = spec.cluster.accelerator.usable_memory;
  NearestMiss miss;
  miss.what = fmt::format(
      "no layout fits in memory: the smallest, {}, needs {:.1f} GiB per GPU and {} has {:.1f} GiB usable "
      "({:.1f} GiB over)",
      layout_label(s.c, spec.model.shape.layers), gib(s.analytic_memory), spec.cluster.accelerator.name, gib(cap),
      gib(s.analytic_memory - cap));
  if (auto opened = opened_left_out(spec, opt, s.c)) miss.changes.push_back(std::move(*opened));
  miss.changes.push_back(fmt::format("an accelerator with at least {:.1f} GiB usable per GPU", gib(s.analytic_memory)));
  // More cards, f times as many, until a layout fits: the same one with f times the
  // data-parallel ranks (ZeRO shards over them: ZeRO-3 without a pipeline, else ZeRO-1), or
  // without its pipeline, whose ranks go to tensor or to data parallelism (ZeRO-3 needs pp 1,
  // and shards the weights and gradients that ZeRO-1 under a pipeline does not).
  const JobLayout& l = s.c.layout;
  for (int f = 2; f <= 1024; f *= 2) {
    std::vector<JobLayout> tries(1, l);
    tries[0].dp = l.dp * f;
    tries[0].zero = l.pp == 1 ? 3 : std::max(1, l.zero);
    if (l.pp > 1) {
      JobLayout flat = l;
      flat.pp = flat.vpp = 1;
      flat.first_chunk_layers = flat.last_chunk_layers = -1;  // one chunk: the whole model
      flat.schedule = "1f1b";
      flat.zero = 3;
      flat.tp = l.tp * l.pp;
      flat.dp = l.dp * f;
      tries.push_back(flat);
      flat.tp = l.tp;
      flat.dp = l.dp * l.pp * f;
      tries.push_back(flat);
    }
    for (JobLayout& g : tries) {
      g.global_batch = std::max<std::int64_t>(l.global_batch, static_cast<std::int64_t>(g.dp) * g.micro_batch);
      if (check_layout(spec.model, g, 0)) continue;
      const Bytes need = job_memory(spec.model, g, chunk_costs(spec.model, g, spec.cluster)).total();
      if (need > cap) continue;
      const std::string shape = g.pp == l.pp ? "" : fmt::format("tp {} pp 1, ", g.tp);
      miss.changes.push_back(fmt::format(
          "{} cards ({}dp {}, zero {}{}): {:.1f} GiB per GPU", s.c.cards * f, shape, g.dp, g.zero,
          g.global_batch != l.global_batch ? fmt::format(", global batch {}", g.global_batch) : "", gib(need)));
      return miss;
    }
  }
  return miss;
}

// The layout searched around, simulated as a candidate is.
Evaluated simulate_around(const SearchSpec& spec) {
  Evaluated e;
  e.c = *spec.around;
  return simulate(spec, e);
}

}  // namespace

SearchResult run_search(const SearchSpec& spec, const SearchOptions& opt) {
  SearchResult res;
  if (spec.around) res.around = simulate_around(spec);
  SearchCounts& n = res.counts;
  Prefiltered f = prefilter(spec, opt, n);
  if (!f.div_keys.empty())
    res.divisibility_example = std::max_element(f.div_keys.begin(), f.div_keys.end(), [](const auto& a, const auto& b) {
                                 return a.second < b.second;
                               })->first;
  for (const auto& [cards, note] : f.notes) {
    if (note.queued) continue;
    if (note.smallest_memory >= 0)
      res.none_why[cards] =
          fmt::format("no layout fits in memory: the smallest needs {:.1f} GiB per GPU, {:.1f} GiB usable",
                      gib(note.smallest_memory), gib(spec.cluster.accelerator.usable_memory));
    else if (!note.first_problem.empty())
      res.none_why[cards] = "no layout divides: e.g. " + note.first_problem;
  }
  // Per card count and global batch (within which step, cost and days order layouts alike: the
  // batch sets the steps to finish), in bound order.
  auto& queue = f.queue;
  std::sort(queue.begin(), queue.end(), [](const Evaluated& a, const Evaluated& b) {
    return std::tie(a.c.cards, a.c.layout.global_batch, a.bound, a.c.index) <
           std::tie(b.c.cards, b.c.layout.global_batch, b.bound, b.c.index);
  });
  std::mutex progress_mutex;
  std::size_t done = 0;
  auto advance = [&](std::size_t k) {
    if (!opt.progress) return;
    std::lock_guard<std::mutex> g(progress_mutex);
    done += k;
    opt.progress(done, queue.size());
  };
  for (std::size_t i = 0; i < queue.size();) {
    std::size_t end = i;
    while (end < queue.size() && queue[end].c.cards == queue[i].c.cards &&
           queue[end].c.layout.global_batch == queue[i].c.layout.global_batch)
      ++end;
    simulate_cards(spec, opt, queue, i, end, res, f.smallest, advance);
    i = end;
  }
  if (res.simulated.empty() && f.smallest) {
    res.miss = nothing_fits(spec, opt, *f.smallest);
  } else if (res.simulated.empty() && n.considered > 0) {
    NearestMiss miss;
    const std::int64_t cards = spec.axes.cards.front();
    const auto note = f.notes.find(cards);
    if (n.considered == 1 && note != f.notes.end() && !note->second.first_problem.empty())
      miss.what = "the one layout considered cannot run: " + note->second.first_problem;
    else
      miss.what = fmt::format(
          "none of the {} layouts considered can run: {} do not divide the model, cluster or batch "
          "(most often at layout.{}), {} the schedule cannot run{}",
          n.considered, n.divisibility, res.divisibility_example.empty() ? "?" : res.divisibility_example, n.schedule,
          f.over_host > 0 ? fmt::format(", {} offload more optimizer state than a node's host memory holds (the "
                                        "least {:.1f} GiB a node; {:.1f} GiB)",
                                        f.over_host, gib(f.smallest_host), gib(spec.cluster.node.host_memory))
                          : "");
    if (f.over_host > 0)
      miss.changes.push_back(
          fmt::format("a host memory of at least {:.1f} GiB a node (hardware.node.host_memory), or the optimizer "
                      "on the GPUs (offload_optimizer: false or auto)",
                      gib(f.smallest_host)));
    if (n.considered == 1 && opt.shard_count == 1) {  // the file's one layout, some of its keys opened again
      Candidate only;
      enumerate_layouts(spec, [&only](const Candidate& c) { only = c; });
      if (auto opened = opened_left_out(spec, opt, only)) miss.changes.push_back(std::move(*opened));
    }
    miss.changes.push_back("open more values (tp, pp, micro_batch, cards) or change the global batch");
    res.miss = miss;
  }
  finish_search(spec, res);
  return res;
}

namespace {

// Whether the card count's best layout meets the deadline, and why (or why it has none).
void judge(const SearchSpec& spec, const SearchResult& r, PerCards& p) {
  p.budget = step_budget_at(spec, p.cards, p.best ? p.best->c.layout.global_batch : 0);
  if (!p.best) {
    const auto w = r.none_why.find(p.cards);
    p.why = w != r.none_why.end() ? w->second : "no layout fits in memory at its simulated peak";
    return;
  }
  const Evaluated& b = *p.best;
  p.meets = b.completion <= spec.task.deadline;
  const double days = to_s(b.completion) / 86400.0, dl = to_s(spec.task.deadline) / 86400.0;
  if (p.meets) {
    p.why = fmt::format("meets: {:.1f} of {:.0f} days, step {:.1f} s within the {:.1f} s budget ({:.1f} s to spare)",
                        days, dl, to_s(b.step), to_s(p.budget), to_s(p.budget - b.step));
    return;
  }
  // How much faster the step would have to be; compute alone at the best layout.
  const double need = to_s(b.step) / std::max(1e-9, to_s(p.budget));
  p.why = fmt::format(
      "misses: {:.1f} of {:.0f} days; the fastest layout's step is {:.1f} s, the budget {:.1f} s: "
      "{:.0f}% faster needed, and its compute alone takes {:.1f} s",
      days, dl, to_s(b.step), to_s(p.budget), (need - 1) * 100, to_s(b.bound) / 0.999);
}

// No card count meets the deadline: the nearest miss and what would have to change.
NearestMiss deadline_miss(const SearchSpec& spec, const PerCards& nearest) {
  const Evaluated& b = *nearest.best;
  NearestMiss miss;
  const double days = to_s(b.completion) / 86400.0, dl = to_s(spec.task.deadline) / 86400.0;
  miss.what = fmt::format(
      "no card count meets the {:.0f}-day deadline; nearest: {}, {:.1f} days ({:.1f} over), step {:.1f} s "
      "vs a {:.1f} s budget",
      dl, layout_label(b.c, spec.model.shape.layers), days, days - dl, to_s(b.step), to_s(nearest.budget));
  const double ratio = to_s(b.step) / std::max(1e-9, to_s(nearest.budget));
  miss.changes.push_back(fmt::format("a step {:.0f}% faster at {} cards (efficiency x {:.2f}, or faster cards)",
                                     (ratio - 1) * 100, b.c.cards, ratio));
  // Cards: strong scaling at best linear; rounded up to whole nodes whose data-parallel count
  // can split the global batch.
  const int node = std::max(1, spec.cluster.node.gpus);
  const std::int64_t gb = b.c.layout.global_batch;
  const std::int64_t mp = static_cast<std::int64_t>(b.c.layout.tp) * b.c.layout.pp * b.c.layout.cp;
  std::int64_t need = static_cast<std::int64_t>(std::ceil(static_cast<double>(b.c.cards) * ratio / node)) * node;
  while (need <= gb * mp && (need % mp != 0 || gb % (need / mp) != 0)) need += node;
  if (need <= gb * mp)
    miss.changes.push_back(
        fmt::format("at least {} cards (whole {}-card hosts whose dp {} splits the {} sequences; if the step "
                    "shrank in proportion: search them to check)",
                    need, node, need / mp, gb));
  else
    miss.changes.push_back(
        fmt::format("more cards than the {} sequences per step can keep busy: a larger global batch", gb));
  const double train_now = to_s(b.completion - spec.task.reserved);
  const double train_max = to_s(spec.task.deadline - spec.task.reserved);
  miss.changes.push_back(fmt::format("a deadline of at least {:.1f} days, or {:.0f}% fewer tokens", days,
                                     (1 - train_max / std::max(1e-9, train_now)) * 100));
  return miss;
}

}  // namespace

void restore_layouts(const SearchSpec& spec, std::vector<Evaluated>& evaluated) {
  std::map<std::int64_t, std::vector<Evaluated*>> by_index;
  for (Evaluated& e : evaluated) by_index[e.c.index].push_back(&e);
  if (by_index.empty()) return;
  const std::int64_t last = by_index.rbegin()->first;
  enumerate_layouts(spec, [&](const Candidate& c) {
    if (c.index > last) return;  // (the enumeration runs on; nothing more to find)
    const auto it = by_index.find(c.index);
    if (it == by_index.end()) return;
    for (Evaluated* e : it->second) {
      Candidate whole = c, named = c;  // named: as the JSON names it (no `auto` flag)
      whole.layout.recompute_layers = named.layout.recompute_layers = e->c.layout.recompute_layers;
      named.layout.fewest_recompute = e->c.layout.fewest_recompute;
      // The label names the ends' layers, not whether each was set: compare those keys too.
      const int layers = spec.model.shape.layers;
      if (layout_label(named, layers) != layout_label(e->c, layers) ||
          named.layout.first_chunk_layers != e->c.layout.first_chunk_layers ||
          named.layout.last_chunk_layers != e->c.layout.last_chunk_layers)
        throw std::runtime_error(fmt::format("layout {} is {} in the shard but {} in the scenario now", c.index,
                                             layout_label(e->c, layers), layout_label(whole, layers)));
      e->c = whole;
    }
    by_index.erase(it);
  });
  if (!by_index.empty())
    throw std::runtime_error(fmt::format("layout {} of the shard is not in the scenario now", by_index.begin()->first));
}

void finish_search(const SearchSpec& spec, SearchResult& r) {
  std::sort(r.simulated.begin(), r.simulated.end(), by_time);
  if (spec.around) {
    if (!r.around) r.around = simulate_around(spec);  // merged shards: each simulated it, none kept it
    r.ranked_before_around = std::count_if(r.simulated.begin(), r.simulated.end(),
                                           [&](const Evaluated& e) { return ranks_before(spec, e, *r.around); });
  }
  r.top = r.simulated;
  std::sort(r.top.begin(), r.top.end(),
            [&](const Evaluated& a, const Evaluated& b) { return ranks_before(spec, a, b); });
  if (static_cast<int>(r.top.size()) > spec.top) r.top.resize(static_cast<std::size_t>(std::max(0, spec.top)));

  // Per card count: the best, the soonest to finish with a task (global batches differ in their
  // steps to finish), else the fastest; with one global batch both are the fastest.
  std::map<std::int64_t, PerCards> per;
  const auto sooner = [&](const Evaluated& a, const Evaluated& b) {
    if (spec.task.tokens > 0 && a.completion != b.completion) return a.completion < b.completion;
    return by_time(a, b);
  };
  for (const std::int64_t c : spec.axes.cards) per[c].cards = c;
  for (const auto& e : r.simulated) {
    PerCards& p = per[e.c.cards];
    p.cards = e.c.cards;
    if (!p.best || sooner(e, *p.best)) p.best = e;
  }
  const bool timed = spec.task.tokens > 0 && spec.task.deadline > 0;
  r.per_cards.clear();
  for (auto& [cards, p] : per) {
    if (timed) judge(spec, r, p);
    r.per_cards.push_back(p);
  }
  // Pareto front of (cards, days): a card count is on it if no smaller count finishes as soon.
  r.front.clear();
  Time best_so_far = std::numeric_limits<Time>::max();
  for (const auto& p : r.per_cards) {
    if (!p.best) continue;
    const Time key = spec.task.tokens > 0 ? p.best->completion : p.best->step;
    if (key < best_so_far) {
      r.front.push_back(p.cards);
      best_so_far = key;
    }
  }
  if (!timed || r.simulated.empty()) return;
  const PerCards* nearest = nullptr;
  for (const auto& p : r.per_cards) {
    if (p.meets) return;
    if (p.best && (!nearest || p.best->completion < nearest->best->completion)) nearest = &p;
  }
  if (nearest) r.miss = deadline_miss(spec, *nearest);
}

}  // namespace stepsim
