// Layout searches on random small spaces (dense, GQA and MoE models, a Mamba-2 hybrid; A100, H100 and RTX 4090
// clusters with shrunken memories; random lists per layout key, card counts, global batches, a
// third with the pipeline's ends searched (half of those on a model of 7 layers),
// tasks with and without failures; ranked by time, cost or days), each checked against a brute
// force oracle: the same axes enumerated here in the documented order (docs/search.md), every
// layout check_layout takes run through run_job_step, kept when it fits analytically and at its
// simulated peak. Against the oracle: the counts, every simulated step, the top N (with and
// without the bound, one and two threads), the per-card-count best, the Pareto front, the
// deadline verdicts; shards merged against the whole; a second run and two threads against the
// first, byte for byte. Days are the oracle's own arithmetic (ceil, Young's interval, L).
// Then the regressions those checks found, each on one fixed space: a schedule that deadlocks
// with blocking sends, a global batch opened under a task, free saves with failures, repeated
// list values and SP without TP.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "cli/input/job_step_input.hpp"
#include "cli/input/job_step_yaml.hpp"
#include "cli/input/search_input.hpp"
#include "cli/reports/search_report.hpp"
#include "models/layout.hpp"
#include "schedules/lowering/search/layout_search.hpp"
#include "schedules/lowering/spec_error.hpp"
#include "schedules/pipeline/registry.hpp"

using namespace stepsim;

namespace {

JobModel small_model(int kind) {
  JobModel m;
  if (kind == 0) {  // GPT-shaped: GeLU, tied embeddings, multi-head attention
    m.shape = {"gpt-8l", 8, 1024, 4096, 16, 16, 64, 32000, true, false};
    m.gated_mlp = false;
  } else if (kind == 1) {  // Llama-shaped: GQA, SwiGLU
    m.shape = {"gqa-6l", 6, 1024, 2816, 8, 4, 128, 32000, false, false};
  } else if (kind == 2) {  // MoE: 4 experts, top 2
    m.shape = {"moe-4l", 4, 512, 1408, 8, 8, 64, 32000, false, false};
    m.experts = 4;
    m.top_k = 2;
    m.expert_ffn = 704;
  } else {  // a Mamba-2 hybrid: Mamba-2, attention and squared-ReLU MLP layers, a block each
    m.shape = {"mamba-6l", 6, 1024, 4096, 8, 4, 128, 32000, false, false};
    m.gated_mlp = false;
    m.squared_relu = true;
    m.mamba = {16, 64, 64, 4, 4};
    m.hybrid_pattern = "M-*-M-";
  }
  m.seq = 1024;
  return m;
}

std::uint64_t below(std::mt19937_64& rng, std::size_t n) { return rng() % n; }

template <class T>
T pick(std::mt19937_64& rng, std::initializer_list<T> xs) {
  return *(xs.begin() + static_cast<std::ptrdiff_t>(below(rng, xs.size())));
}

// A non-empty random subset of `xs`, in a random order (the enumeration follows the list's order).
template <class T>
std::vector<T> subset(std::mt19937_64& rng, std::vector<T> xs, std::size_t most) {
  std::shuffle(xs.begin(), xs.end(), rng);
  xs.resize(1 + below(rng, std::min(most, xs.size())));
  return xs;
}

// Canonical names, as the reader gives them (aliases are the reader's to resolve).
std::vector<std::string> family_names() {
  std::vector<std::string> out;
  for (const auto& f : schedule_families()) out.push_back(f.name);
  return out;
}

std::size_t space_size(const SearchAxes& a, std::size_t schedules) {
  return a.cards.size() * a.tp.size() * a.cp.size() * a.cp_comm.size() * a.pp.size() * a.vpp.size() * schedules *
         a.zero.size() * a.micro_batch.size() * a.recompute.size() * a.sequence_parallel.size() * a.ep.size() *
         a.expert_tp.size() * a.global_batch.size() * a.dp_replicate.size();
}

// A random search, its space at most ~800 layouts; the deadline is set once the oracle has run.
SearchSpec random_search(std::mt19937_64& rng) {
  SearchSpec s;
  const int kind = static_cast<int>(below(rng, 4));
  s.model = small_model(kind);
  s.cluster = *find_cluster_preset(pick<const char*>(rng, {"a100-sxm-80gb", "h100-sxm", "rtx4090"}));
  // Tight memories, so that the memory rule prunes some layouts and spares others.
  s.cluster.accelerator.usable_memory = pick<Bytes>(rng, {2, 3, 4, 80}) << 30;
  JobLayout& b = s.base;
  b.attention = pick(rng, {AttentionKernel::Flash, AttentionKernel::Unfused});
  b.overlap_pp = below(rng, 3) != 0;
  b.grad_bytes = pick(rng, {2, 4});
  SearchAxes& a = s.axes;
  do {
    a.cards = subset<std::int64_t>(rng, {1, 2, 4, 6, 8, 12, 16}, 3);
    std::sort(a.cards.begin(), a.cards.end());  // as the reader gives them
    a.tp = subset<int>(rng, {1, 2, 4}, 3);
    a.pp = subset<int>(rng, {1, 2, 4}, 3);
    a.vpp = subset<int>(rng, {1, 2}, 2);
    a.cp = below(rng, 4) == 0 ? std::vector<int>{1, 2} : std::vector<int>{1};
    a.cp_comm = a.cp.size() > 1 ? subset<CpComm>(rng, {CpComm::P2p, CpComm::AllGather, CpComm::AllToAll}, 2)
                                : std::vector<CpComm>{CpComm::P2p};
    a.ep = kind == 2 ? subset<int>(rng, {1, 2, 4}, 2) : std::vector<int>{1};
    a.expert_tp = kind == 2 && below(rng, 2) == 0 ? subset<int>(rng, {1, 2}, 2) : std::vector<int>{0};
    a.zero = subset<int>(rng, {0, 1, 2, 3}, 3);
    a.micro_batch = subset<int>(rng, {1, 2, 4}, 2);
    a.recompute = subset<JobRecompute>(rng, {JobRecompute::None, JobRecompute::Selective, JobRecompute::Full}, 2);
    a.sequence_parallel = below(rng, 3) == 0 ? std::vector<int>{0, 1} : std::vector<int>{0};
    a.global_batch = subset<std::int64_t>(rng, {8, 16, 24, 32}, 2);
    a.schedule.clear();
    a.default_schedule = false;
    const int how = static_cast<int>(below(rng, 3));  // 0: listed, 1: auto, 2: the default
    if (how == 0) a.schedule = subset(rng, family_names(), 3);
    a.default_schedule = how == 2;
    a.dp_replicate = {1};
  } while (space_size(a, a.schedule.empty() ? 3 : a.schedule.size()) > 800);
  // HSDP's replicas, drawn apart from `rng` so that the other keys' draws stay as they were: a
  // third of the spaces also try 2 or 4 replicas (at most 1,600 layouts).
  std::mt19937_64 side(space_size(a, 1) * 31 + static_cast<std::size_t>(a.cards.back()));
  if (below(side, 3) == 0) a.dp_replicate.push_back(pick(side, {2, 4}));
  // Partial recompute, from a generator of its own for the same reason: where full recompute is
  // tried, a third of the spaces ask for the fewest layers that fit (`auto`), a sixth list counts.
  // ZeRO-3's weights kept gathered: a third of the spaces try both (auto, `{}`), a sixth only kept.
  std::mt19937_64 kept_side(space_size(a, 1) * 41 + static_cast<std::size_t>(a.cards.size()));
  const auto kept = below(kept_side, 6);
  a.keep_gathered = kept < 2 ? std::vector<int>{} : kept == 2 ? std::vector<int>{1} : std::vector<int>{0};
  std::mt19937_64 layers_side(space_size(a, 1) * 37 + static_cast<std::size_t>(a.cards.front()));
  a.recompute_layers = {-1};
  if (std::find(a.recompute.begin(), a.recompute.end(), JobRecompute::Full) != a.recompute.end()) {
    const auto how = below(layers_side, 6);
    if (how < 2) a.recompute_layers.clear();
    if (how == 2) a.recompute_layers = subset<int>(layers_side, {-1, 0, 1, 2}, 2);  // -1: every layer (`all`)
  }
  // The pipeline's ends searched (auto) in a third of the spaces, from a generator of its own.
  std::mt19937_64 ends_side(space_size(a, 1) * 43 + static_cast<std::size_t>(a.tp.front()));
  a.chunk_ends = below(ends_side, 3) == 0;
  // Seven layers where the ends are searched: 7 + 1 divides 2, 4 and 8 chunks (one end one fewer,
  // either); six: 6 + 2 divides 4 and 8 (both).
  if (a.chunk_ends && below(ends_side, 2) == 0) {
    s.model.shape.layers = 7, s.model.shape.name = "layers-7";
    if (!s.model.hybrid_pattern.empty()) s.model.hybrid_pattern += "M";  // a symbol a layer
  }
  b.global_batch = a.global_batch.front();
  if (below(rng, 4) != 0) {  // a run to finish
    s.task.tokens = pick<std::int64_t>(rng, {1'000'000'000, 3'000'000'000});
    s.task.reserved = pick<Time>(rng, {0, kSecond * 3600});
    if (below(rng, 2) == 0) {
      s.task.card_mtbf = pick<Time>(rng, {kSecond * 86400, kSecond * 86400 * 30});
      s.task.restore = pick<Time>(rng, {0, 120 * kSecond});
      s.task.storage_bandwidth = pick<std::int64_t>(rng, {0, 2'000'000'000});
      if (below(rng, 3) == 0) s.task.interval = 1800 * kSecond;
    }
  }
  s.rank = s.task.tokens > 0 ? pick(rng, {SearchRank::Step, SearchRank::Cost, SearchRank::Days})
                             : pick(rng, {SearchRank::Step, SearchRank::Cost});
  s.top = static_cast<int>(1 + below(rng, 4));
  return s;
}

// What the oracle knows of one layout of the space.
struct Point {
  std::int64_t index = 0, cards = 0;
  JobLayout layout;
  Time step = 0;
  double days_s = 0;  // completion, seconds (0 without a task)
  Bytes memory = 0;   // per GPU at the simulated peak
};

struct Oracle {
  std::int64_t considered = 0, divisibility = 0, refused = 0;  // refused: by the job step when run
  std::vector<Point> fits;                                     // every layout that runs and fits, in enumeration order
};

// The schedules the space holds for pp stages and v chunks (docs/search.md: `auto` is every
// family whose placement matches the chunk count; one stage or the default: 1f1b / interleaved).
std::vector<std::string> schedules_of(const SearchAxes& a, int pp, int v) {
  if (!a.schedule.empty()) return a.schedule;
  if (pp == 1 || a.default_schedule) return {v > 1 ? "interleaved-1f1b" : "1f1b"};
  std::vector<std::string> out;
  for (const auto& f : schedule_families())
    if (f.takes_virtual_stages == (v > 1)) out.push_back(f.name);
  return out;
}

// Completion in seconds from the task's own terms: steps = ceil(tokens / (gb seq)), L = c / tau +
// (tau / 2 + r) / M with M = MTBF / cards and tau Young's sqrt(2 c M) unless given.
double completion_s(const SearchSpec& s, std::int64_t cards, std::int64_t gb, Time step) {
  const SearchTask& k = s.task;
  if (k.tokens <= 0) return 0;
  const std::int64_t per_step = gb * s.model.seq;
  const double steps = static_cast<double>((k.tokens + per_step - 1) / per_step);
  double overhead = 0;
  if (k.card_mtbf > 0) {
    const double bytes = 14.0 * static_cast<double>(total_parameters(s.model));
    const double c = k.storage_bandwidth > 0 ? bytes / static_cast<double>(k.storage_bandwidth) : 0;
    const double mtbf = to_s(k.card_mtbf) / static_cast<double>(cards);
    const double tau = k.interval ? to_s(*k.interval) : std::sqrt(2 * c * mtbf);
    overhead = (tau > 0 ? c / tau : 0) + (tau / 2 + to_s(k.restore)) / mtbf;
  } else if (k.interval && k.storage_bandwidth > 0) {
    overhead = 14.0 * static_cast<double>(total_parameters(s.model)) / static_cast<double>(k.storage_bandwidth) /
               to_s(*k.interval);
  }
  return to_s(k.reserved) + steps * to_s(step) * (1 + overhead);
}

// The candidate at `index` run through the job step: kept when it can run and fits. Returns
// whether it ran over the memory at its simulated peak (it fitted analytically).
bool try_point(const SearchSpec& s, Oracle& o, std::int64_t index, std::int64_t cards, const JobLayout& l) {
  if (check_layout(s.model, l, cards)) {
    ++o.divisibility;
    return false;
  }
  const Bytes cap = s.cluster.accelerator.usable_memory;
  if (job_memory(s.model, l, chunk_costs(s.model, l, s.cluster)).total() > cap) return false;
  JobStepSpec js;
  js.model = s.model;
  js.cluster = s.cluster;
  js.layout = l;
  js.input_wait = s.input_wait;
  JobStepRun run;
  try {
    run = run_job_step(js);
  } catch (const SpecError& e) {  // an order that cannot run (blocking sends): refused at a layout key
    CHECK(e.key().rfind("layout", 0) == 0);
    ++o.refused;
    return false;
  }
  CHECK(compute_bound(js) <= run.result.step_time);  // the bound the search prunes by is a lower bound
  // What recomputes_of leaves out repeats this layout: selective recompute of the attention core
  // under FlashAttention runs the same step in the same memory.
  if (l.recompute == JobRecompute::None && l.attention == AttentionKernel::Flash &&
      l.recompute_modules == kRecomputeCoreAttn) {
    JobStepSpec selective = js;
    selective.layout.recompute = JobRecompute::Selective;
    const JobStepRun again = run_job_step(selective);
    CHECK(again.result.step_time == run.result.step_time);
    CHECK(again.result.memory.total() == run.result.memory.total());
  }
  if (run.result.memory.total() > cap) return true;
  Point p{index, cards, l, run.result.step_time, 0, run.result.memory.total()};
  p.days_s = completion_s(s, cards, l.global_batch, p.step);
  o.fits.push_back(std::move(p));
  return false;
}

// The recompute values tried: the list, less selective where none is listed too and selective
// reruns only the attention core under FlashAttention (the same layout as none).
std::vector<JobRecompute> recomputes_of(const SearchSpec& s) {
  const auto& listed = s.axes.recompute;
  const bool has_none = std::count(listed.begin(), listed.end(), JobRecompute::None) > 0;
  if (!has_none || s.base.attention != AttentionKernel::Flash || s.base.recompute_modules != kRecomputeCoreAttn)
    return listed;
  std::vector<JobRecompute> out;
  for (const JobRecompute rc : listed)
    if (rc != JobRecompute::Selective) out.push_back(rc);
  return out;
}

// The most layers a chunk of `l` holds, by its own terms (0: a layout refused anyway).
int largest_chunk(const SearchSpec& s, const JobLayout& l) {
  if (l.dp <= 0 || check_layout(s.model, l, 0)) return 0;
  int most = 0;
  for (const int n : chunk_layer_counts(s.model.shape.layers, l)) most = std::max(most, n);
  return most;
}

// `recompute_layers: auto` by its own terms, without the search's bisection: the first count from
// 0 up to the largest chunk's layers less one whose analytic memory fits, else every layer.
int fewest_fitting_layers(const SearchSpec& s, JobLayout l, std::int64_t cards) {
  l.recompute = JobRecompute::Full;
  l.recompute_layers = -1;
  if (l.dp <= 0 || check_layout(s.model, l, cards)) return -1;
  for (int n = 0; n < largest_chunk(s, l); ++n) {
    l.recompute_layers = n;
    if (job_memory(s.model, l, chunk_costs(s.model, l, s.cluster)).total() <= s.cluster.accelerator.usable_memory)
      return n;
  }
  return -1;
}

// The partial-recompute counts a layout takes (docs/search.md): every layer unless it recomputes
// fully; the counts listed, those at or past the largest chunk's layers as every layer, each once;
// or `auto`'s one (none where it is 0 and `none` is tried: that is the layout with none).
std::vector<int> recompute_layers_of(const SearchSpec& s, const JobLayout& l, std::int64_t cards) {
  if (l.recompute != JobRecompute::Full) return {-1};
  if (s.axes.recompute_layers.empty()) {
    const int n = fewest_fitting_layers(s, l, cards);
    const auto tried = recomputes_of(s);
    if (n == 0 && std::find(tried.begin(), tried.end(), JobRecompute::None) != tried.end()) return {};
    return {n};
  }
  const int most = largest_chunk(s, l);
  std::vector<int> out;
  for (int n : s.axes.recompute_layers) {
    if (most > 0 && n >= most) n = -1;
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  return out;
}

// One candidate, and under `auto` a layer more of each chunk while its simulated peak is over.
void try_layers(const SearchSpec& s, Oracle& o, std::int64_t index, std::int64_t cards, JobLayout l) {
  while (try_point(s, o, index, cards, l) && s.axes.recompute_layers.empty() && l.partial_recompute()) {
    const int n = l.recompute_layers + 1;
    l.recompute_layers = n >= largest_chunk(s, l) ? -1 : n;
  }
}

// The pipeline's ends a layout takes (docs/search.md), by their own terms: the base's unless
// searched; searched, every chunk of the others' share ceil(layers / chunks) but the ends, which
// hold the layers over fewer: all at the first end, split evenly (the first end, then the last,
// one fewer more), all at the last; none below no layers, each way of dealing them once; none:
// the base's. One chunk: an equal share.
std::vector<std::pair<int, int>> ends_of(const SearchSpec& s, int pp, int v, const std::string& sched) {
  const std::pair<int, int> base{s.base.first_chunk_layers, s.base.last_chunk_layers};
  if (!s.axes.chunk_ends) return {base};
  const int chunks = pp * (sched == "dualpipe-v" ? 2 : v), layers = s.model.shape.layers;
  if (chunks == 1) return {{-1, -1}};
  int share = 0;
  while (share * chunks < layers) ++share;
  std::vector<std::pair<int, int>> out;
  std::vector<std::vector<int>> dealt;
  // The share that holds the layers, and where it divides them one more a chunk, the ends
  // `chunks` lighter between them.
  for (const int each : {share, share + 1}) {
    const int over = each * chunks - layers;
    if (each > share && over != chunks) break;
    const std::pair<int, int> ways[] = {{over, 0}, {over - over / 2, over / 2}, {over / 2, over - over / 2}, {0, over}};
    for (const auto& [first_fewer, last_fewer] : ways) {
      if (first_fewer > each || last_fewer > each) continue;
      std::vector<int> sizes(static_cast<std::size_t>(chunks), each);
      sizes.front() -= first_fewer;
      sizes.back() -= last_fewer;
      if (std::find(dealt.begin(), dealt.end(), sizes) != dealt.end()) continue;
      dealt.push_back(sizes);
      out.emplace_back(first_fewer > 0 ? each - first_fewer : -1, last_fewer > 0 ? each - last_fewer : -1);
    }
  }
  return out.empty() ? std::vector<std::pair<int, int>>{base} : out;
}

// Brute force: every layout of the space, in the documented order (cards, tp, cp, CP exchange,
// pp, [dp], v, schedule, pipeline ends, zero, HSDP replicas, kept weights, micro-batch, recompute,
// SP, ep, expert TP, global batch, recompute layers); SP only with TP, the CP exchange only with
// CP (else the first listed), replicas only with ZeRO (else 1), kept weights only with ZeRO-3
// (else not); expert TP tp is written 0.
Oracle brute_force(const SearchSpec& s) {
  Oracle o;
  const SearchAxes& a = s.axes;
  for (const std::int64_t cards : a.cards)
    for (const int tp : a.tp)
      for (const int cp : a.cp)
        for (const CpComm comm : cp > 1 ? a.cp_comm : std::vector<CpComm>{a.cp_comm.front()})
          for (const int pp : a.pp)
            for (const int v : a.vpp)
              for (const auto& sched : schedules_of(a, pp, v))
                for (const auto& [first_end, last_end] : ends_of(s, pp, v, sched))
                  for (const int zero : a.zero)
                    for (const int r : zero > 0 ? a.dp_replicate : std::vector<int>{1})
                      for (const int kept : zero < 3                  ? std::vector<int>{0}
                                            : a.keep_gathered.empty() ? std::vector<int>{0, 1}
                                                                      : a.keep_gathered)
                        for (const int mb : a.micro_batch)
                          for (const JobRecompute rc : recomputes_of(s))
                            for (const int sp : tp > 1 ? a.sequence_parallel : std::vector<int>{0})
                              for (const int ep : a.ep)
                                for (const int etp : a.expert_tp)
                                  for (const std::int64_t gb : a.global_batch) {
                                    JobLayout l = s.base;
                                    const std::int64_t mp = std::int64_t{tp} * cp * pp;
                                    l.tp = tp, l.cp = cp, l.cp_comm = comm, l.pp = pp;
                                    l.dp = cards % mp == 0 ? static_cast<int>(cards / mp) : 0;
                                    l.vpp = v, l.schedule = sched, l.zero = zero, l.micro_batch = mb, l.recompute = rc;
                                    l.first_chunk_layers = first_end, l.last_chunk_layers = last_end;
                                    l.sequence_parallel = sp != 0 && tp > 1, l.ep = ep, l.global_batch = gb;
                                    l.expert_tp = etp == tp ? 0 : etp;
                                    l.dp_replicate = r;
                                    l.keep_gathered = kept != 0;
                                    for (const int n : recompute_layers_of(s, l, cards)) {
                                      const std::int64_t index = o.considered++;
                                      if (l.dp == 0) {
                                        ++o.divisibility;
                                        continue;
                                      }
                                      l.recompute_layers = n;
                                      try_layers(s, o, index, cards, l);
                                    }
                                  }
  return o;
}

// The ranking key the spec asks for, then step time, memory per GPU and enumeration index.
bool oracle_before(const SearchSpec& s, const Point& a, const Point& b) {
  if (s.rank == SearchRank::Cost && a.cards * a.step != b.cards * b.step) return a.cards * a.step < b.cards * b.step;
  if (s.rank == SearchRank::Days && a.days_s != b.days_s) return a.days_s < b.days_s;
  return std::tie(a.step, a.memory, a.index) < std::tie(b.step, b.memory, b.index);
}

// Per card count, the figure the front and the deadline judge (days with a task, else the step).
std::map<std::int64_t, double> best_key_per_cards(const SearchSpec& s, const Oracle& o) {
  std::map<std::int64_t, double> best;
  for (const Point& p : o.fits) {
    const double key = s.task.tokens > 0 ? p.days_s : to_s(p.step);
    const auto it = best.find(p.cards);
    if (it == best.end() || key < it->second) best[p.cards] = key;
  }
  return best;
}

const Point* point_at(const Oracle& o, std::int64_t index) {
  for (const Point& p : o.fits)
    if (p.index == index) return &p;
  return nullptr;
}

void check_counts(const Oracle& o, const SearchResult& r, bool pruned) {
  const SearchCounts& n = r.counts;
  CHECK(n.considered == o.considered);
  CHECK(n.divisibility == o.divisibility);
  CHECK(n.considered == n.divisibility + n.schedule + n.memory + n.bound + n.simulated);
  CHECK(n.simulated - n.over_memory_simulated == static_cast<std::int64_t>(r.simulated.size()));
  if (!pruned) {
    CHECK(n.bound == 0);
    CHECK(r.simulated.size() == o.fits.size());  // nothing that runs and fits is left out
  }
}

bool same_layout(const Candidate& x, const Candidate& y) {
  const JobLayout &a = x.layout, &b = y.layout;
  return x.cards == y.cards && a.tp == b.tp && a.pp == b.pp && a.vpp == b.vpp && a.dp == b.dp && a.cp == b.cp &&
         a.ep == b.ep && a.schedule == b.schedule && a.zero == b.zero && a.micro_batch == b.micro_batch &&
         a.recompute == b.recompute && a.sequence_parallel == b.sequence_parallel && a.global_batch == b.global_batch &&
         a.cp_comm == b.cp_comm && a.expert_tp == b.expert_tp && a.dp_replicate == b.dp_replicate &&
         a.recompute_layers == b.recompute_layers && a.keep_gathered == b.keep_gathered &&
         a.first_chunk_layers == b.first_chunk_layers && a.last_chunk_layers == b.last_chunk_layers;
}

// Every layout the search ranked is one the oracle ran, at the same step, divides its cards, and
// is listed once.
void check_simulated(const SearchSpec& s, const Oracle& o, const SearchResult& r) {
  for (std::size_t i = 0; i < r.simulated.size(); ++i) {
    const Evaluated& e = r.simulated[i];
    const Point* p = point_at(o, e.c.index);
    REQUIRE(p != nullptr);
    CHECK(e.c.cards == p->cards);
    CHECK(e.c.layout.ranks() == e.c.cards);
    CHECK_FALSE(check_layout(s.model, e.c.layout, e.c.cards));
    CHECK(e.step == p->step);
    if (s.task.tokens > 0) CHECK(to_s(e.completion) == Approx(p->days_s).epsilon(1e-9));
    CHECK(e.memory.total() == p->memory);
    if (i > 0) {
      const Evaluated& before = r.simulated[i - 1];
      CHECK(std::make_tuple(before.step, before.memory.total(), before.c.index) <
            std::make_tuple(e.step, e.memory.total(), e.c.index));
    }
    for (std::size_t k = 0; k < i; ++k) CHECK_FALSE(same_layout(r.simulated[k].c, e.c));
  }
}

// The top N is the oracle's best N, in order; nothing better was pruned.
void check_top(const SearchSpec& s, const Oracle& o, const SearchResult& r) {
  std::vector<Point> ranked = o.fits;
  std::sort(ranked.begin(), ranked.end(), [&](const Point& a, const Point& b) { return oracle_before(s, a, b); });
  REQUIRE(r.top.size() == std::min<std::size_t>(ranked.size(), static_cast<std::size_t>(s.top)));
  for (std::size_t i = 0; i < r.top.size(); ++i) {
    INFO("rank " << i + 1 << ": search " << layout_label(r.top[i].c, s.model.shape.layers) << ", oracle index " << ranked[i].index);
    CHECK(r.top[i].c.index == ranked[i].index);
    CHECK(r.top[i].step == ranked[i].step);
  }
}

// Per card count: the best against the oracle's; the front non-dominated and complete; with a
// deadline, a card count meets it when its soonest layout does, and the miss when none does.
void check_cards(const SearchSpec& s, const Oracle& o, const SearchResult& r) {
  const auto best = best_key_per_cards(s, o);
  const bool task = s.task.tokens > 0;
  REQUIRE(r.per_cards.size() == s.axes.cards.size());
  std::vector<std::int64_t> front;
  double so_far = std::numeric_limits<double>::infinity();
  bool any_meets = false;
  for (std::size_t i = 0; i < r.per_cards.size(); ++i) {
    const PerCards& pc = r.per_cards[i];
    CHECK(pc.cards == s.axes.cards[i]);
    const auto it = best.find(pc.cards);
    REQUIRE(pc.best.has_value() == (it != best.end()));
    if (!pc.best) continue;
    INFO(pc.cards << " cards: search's best " << layout_label(pc.best->c, s.model.shape.layers));
    const double key = task ? to_s(pc.best->completion) : to_s(pc.best->step);
    CHECK(key == Approx(it->second).epsilon(1e-9));
    if (it->second < so_far * (1 - 1e-12)) front.push_back(pc.cards);
    so_far = std::min(so_far, it->second);
    if (task && s.task.deadline > 0) {
      const bool meets = it->second <= to_s(s.task.deadline);
      CHECK(pc.meets == meets);
      // The budget is the longest step that meets it, for the best layout's batch.
      CHECK(pc.meets == (pc.best->step <= pc.budget));
      any_meets = any_meets || meets;
    }
  }
  CHECK(r.front == front);
  if (task && s.task.deadline > 0 && !o.fits.empty()) CHECK(r.miss.has_value() == !any_meets);
}

// A deadline between two card counts' soonest completions (or past or before them all).
void set_deadline(std::mt19937_64& rng, SearchSpec& s, const Oracle& o) {
  if (s.task.tokens <= 0) return;
  const auto best = best_key_per_cards(s, o);
  if (best.empty() || below(rng, 5) == 0) {
    s.task.deadline = s.task.reserved + kSecond * 86400 * 365;
    return;
  }
  auto it = best.begin();
  std::advance(it, static_cast<std::ptrdiff_t>(below(rng, best.size())));
  // That card count just meets it (1 ms to spare for the rounding of the search's completion).
  s.task.deadline = static_cast<Time>(std::ceil(it->second * 1e9)) + kSecond / 1000;
}

SearchResult merged_shards(const SearchSpec& s, std::size_t count) {
  SearchResult merged;
  for (std::size_t i = 0; i < count; ++i) {
    SearchOptions o;
    o.shard_index = i;
    o.shard_count = count;
    SearchResult part = run_search(s, o);
    for (auto& e : part.simulated) merged.simulated.push_back(std::move(e));
    merged.counts.considered += part.counts.considered;
    merged.counts.divisibility += part.counts.divisibility;
    for (const auto& [k, v] : part.none_why) merged.none_why.emplace(k, v);
  }
  finish_search(s, merged);
  return merged;
}

std::string json_of(const SearchSpec& s, const SearchResult& r) {
  return cli::search_json({"random", "", "random.yaml"}, s, r).dump();
}

std::vector<std::string> cp_comm_names(const std::vector<CpComm>& xs) {
  std::vector<std::string> out;
  for (const CpComm c : xs) out.emplace_back(cp_comm_name(c));
  return out;
}

std::string describe(const SearchSpec& s) {
  const SearchAxes& a = s.axes;
  return fmt::format(
      "{} on {} ({} GiB), cards [{}], tp [{}] pp [{}] v [{}] cp [{}] cp_comm [{}] ep [{}] expert_tp [{}] sched [{}]{} "
      "zero [{}] mbs [{}] recompute_layers [{}] sp [{}] gb [{}], tokens {} mtbf {} rank {} top {}",
      s.model.shape.name, s.cluster.accelerator.name, s.cluster.accelerator.usable_memory >> 30,
      fmt::join(a.cards, ","), fmt::join(a.tp, ","), fmt::join(a.pp, ","), fmt::join(a.vpp, ","), fmt::join(a.cp, ","),
      fmt::join(cp_comm_names(a.cp_comm), ","), fmt::join(a.ep, ","), fmt::join(a.expert_tp, ","),
      fmt::join(a.schedule, ","), a.default_schedule ? " (default)" : "", fmt::join(a.zero, ","),
      fmt::join(a.micro_batch, ","),
      a.recompute_layers.empty() ? "auto" : fmt::format("{}", fmt::join(a.recompute_layers, ",")),
      fmt::join(a.sequence_parallel, ","), fmt::join(a.global_batch, ","), s.task.tokens, to_s(s.task.card_mtbf),
      search_rank_name(s.rank), s.top);
}

}  // namespace

TEST_CASE("layout searches on random spaces agree with a brute force over the same space",
          "[search][search_properties]") {
  std::mt19937_64 rng(20261202);
  int searched = 0, ranked = 0, with_deadline = 0, bound_pruned = 0, refused = 0, batches = 0, replicated = 0;
  int partial = 0, fewest = 0, kept = 0;
  for (int trial = 0; trial < 200; ++trial) {
    SearchSpec spec = random_search(rng);
    const Oracle o = brute_force(spec);
    set_deadline(rng, spec, o);
    INFO("trial " << trial << ": " << describe(spec) << ", deadline " << to_s(spec.task.deadline));
    SearchOptions one, two, nobound;
    two.jobs = 2;
    nobound.prune_bound = false;
    const SearchResult r = run_search(spec, one);
    ++searched;
    ranked += !r.top.empty();
    with_deadline += spec.task.deadline > 0;
    bound_pruned += r.counts.bound > 0;
    refused += o.refused > 0;
    batches += spec.task.deadline > 0 && spec.axes.global_batch.size() > 1;
    replicated += std::any_of(r.simulated.begin(), r.simulated.end(),
                              [](const Evaluated& e) { return e.c.layout.dp_replicate > 1; });
    const bool some_partial = std::any_of(r.simulated.begin(), r.simulated.end(),
                                          [](const Evaluated& e) { return e.c.layout.partial_recompute(); });
    partial += some_partial;
    fewest += some_partial && spec.axes.recompute_layers.empty();
    kept += std::any_of(r.simulated.begin(), r.simulated.end(),
                        [](const Evaluated& e) { return e.c.layout.zero >= 3 && e.c.layout.keep_gathered; });
    check_counts(o, r, true);
    check_simulated(spec, o, r);
    check_top(spec, o, r);
    check_cards(spec, o, r);
    const SearchResult u = run_search(spec, nobound);
    check_counts(o, u, false);
    check_top(spec, o, u);
    check_cards(spec, o, u);
    // The bound only moves layouts from simulated (or refused when run) to pruned.
    CHECK(u.counts.memory == r.counts.memory);
    CHECK(u.counts.simulated + u.counts.schedule == r.counts.simulated + r.counts.schedule + r.counts.bound);
    // Byte-identical whatever the thread count, and run again.
    const std::string j = json_of(spec, r);
    CHECK(json_of(spec, run_search(spec, two)) == j);
    CHECK(json_of(spec, run_search(spec, one)) == j);
    // Every simulated layout written as YAML reads back to itself (search --export), and read
    // back from the JSON a shard writes it is restored whole (search merge --export).
    std::vector<Evaluated> from_json;
    const nlohmann::json whole = nlohmann::json::parse(json_of(spec, r));
    for (const auto& e : whole.at("simulated")) from_json.push_back(cli::evaluated_from_json(e));
    restore_layouts(spec, from_json);
    REQUIRE(from_json.size() == r.simulated.size());
    for (std::size_t i = 0; i < r.simulated.size(); ++i) {
      JobLayout want = r.simulated[i].c.layout;
      CHECK(from_json[i].c.layout == want);
      want.fewest_recompute = false;  // written as the count it took
      const auto src = cli::Source::parse(cli::format_layout_yaml(want), "layout.yaml");
      CHECK(cli::read_layout(cli::Reader(src, src->root, "layout")) == want);
      // ... and written over the first as a variant (search --export --pick 1,2,...), laid over it.
      JobLayout first = r.simulated.front().c.layout;
      first.fewest_recompute = false;
      YAML::Emitter over;
      over << cli::laid_over(YAML::Load(cli::format_layout_yaml(first)),
                             YAML::Load(cli::format_layout_yaml_over(want, first)));
      const auto variant = cli::Source::parse(over.c_str(), "variant.yaml");
      CHECK(cli::read_layout(cli::Reader(variant, variant->root, "layout")) == want);
    }
    // Shards merged rank as the whole.
    const SearchResult m = merged_shards(spec, 2 + static_cast<std::size_t>(trial % 2));
    CHECK(m.counts.considered == o.considered);
    check_top(spec, o, m);
    check_cards(spec, o, m);
  }
  CHECK(searched == 200);
  CHECK(ranked > 120);         // most spaces hold a layout that runs and fits
  CHECK(replicated > 10);      // HSDP layouts among those run
  CHECK(partial > 10);         // and layouts that recompute only their chunks' first layers,
  CHECK(fewest > 5);           // as few as fit (`auto`)
  CHECK(kept > 5);             // and ZeRO-3 layouts that keep their gathered weights
  CHECK(with_deadline > 100);  // and most have a deadline to judge
  CHECK(bound_pruned > 20);    // the bound does prune
  CHECK(refused > 5);          // blocking sends deadlock some orders
  CHECK(batches > 20);         // deadlines with the global batch opened
}

namespace {

// One layout per key for the regression cases below: the lists given, the rest one value each.
SearchSpec fixed_search(int kind, const char* preset, std::vector<std::int64_t> cards) {
  SearchSpec s;
  s.model = small_model(kind);
  s.cluster = *find_cluster_preset(preset);
  s.axes.cards = std::move(cards);
  s.axes.tp = s.axes.pp = s.axes.vpp = s.axes.cp = s.axes.ep = s.axes.micro_batch = {1};
  s.axes.zero = {1};
  s.axes.recompute = {JobRecompute::None};
  s.axes.sequence_parallel = {0};
  s.axes.cp_comm = {CpComm::P2p};
  s.axes.expert_tp = {0};
  s.axes.dp_replicate = {1};
  s.axes.recompute_layers = {-1};
  s.axes.keep_gathered = {0};
  s.axes.default_schedule = true;
  s.base.global_batch = 8;
  s.axes.global_batch = {8};
  return s;
}

}  // namespace

TEST_CASE("search: a schedule that deadlocks with blocking sends is refused, not the whole search",
          "[search][search_properties]") {
  SearchSpec s = fixed_search(0, "rtx4090", {16});
  s.base.overlap_pp = false;  // Megatron's blocking sends
  s.axes.tp = {2};
  s.axes.pp = {4};
  s.axes.micro_batch = {2};
  s.base.global_batch = 32;  // 8 micro-batches: as many as DualPipe needs (2 pp)
  s.axes.global_batch = {32};
  s.axes.schedule = {"1f1b", "dualpipe"};
  s.axes.default_schedule = false;
  // DualPipe's order cannot run with blocking sends: its own check lets the layout through, the
  // job step refuses it.
  Candidate dual;
  enumerate_layouts(s, [&](const Candidate& c) {
    if (c.layout.schedule == "dualpipe") dual = c;
  });
  JobStepSpec js;
  js.model = s.model;
  js.cluster = s.cluster;
  js.layout = dual.layout;
  CHECK_FALSE(schedule_problem(dual.layout));
  CHECK_THROWS_AS(run_job_step(js), SpecError);
  const SearchResult r = run_search(s);
  CHECK(r.counts.considered == 2);
  CHECK(r.counts.schedule == 1);
  REQUIRE(r.simulated.size() == 1);
  CHECK(r.simulated.front().c.layout.schedule == "1f1b");
}

TEST_CASE(
    "search: with the global batch opened, a card count's best is the soonest to finish, and the bound "
    "keeps it",
    "[search][search_properties]") {
  SearchSpec s = fixed_search(0, "a100-sxm-80gb", {8});
  s.axes.global_batch = {8, 64};
  s.task.tokens = 1'000'000'000;
  s.task.deadline = 1000 * 86400 * kSecond;
  s.rank = SearchRank::Days;
  s.top = 1;
  SearchOptions nobound;
  nobound.prune_bound = false;
  const SearchResult all = run_search(s, nobound);
  REQUIRE(all.simulated.size() == 2);
  const Evaluated& small = all.simulated[0].c.layout.global_batch == 8 ? all.simulated[0] : all.simulated[1];
  const Evaluated& large = all.simulated[0].c.layout.global_batch == 8 ? all.simulated[1] : all.simulated[0];
  // The case: the smaller batch steps faster, the larger finishes sooner (fewer, fuller steps).
  REQUIRE(small.step < large.step);
  REQUIRE(large.completion < small.completion);
  for (const SearchResult& r : {all, run_search(s)}) {
    REQUIRE(r.top.size() == 1);
    CHECK(r.top.front().c.index == large.c.index);
    REQUIRE(r.per_cards.size() == 1);
    REQUIRE(r.per_cards.front().best);
    CHECK(r.per_cards.front().best->c.index == large.c.index);
  }
}

TEST_CASE("search: free saves with failures still pay each failure's restore", "[search][search_properties]") {
  SearchSpec s = fixed_search(0, "a100-sxm-80gb", {8});
  s.task.tokens = 1'000'000'000;
  s.task.card_mtbf = 30 * 86400 * kSecond;
  s.task.restore = 600 * kSecond;  // no storage bandwidth: saves cost nothing, Young's interval is 0
  Evaluated e;
  e.c.cards = 8;
  e.c.layout.global_batch = 8;
  e.step = kSecond;
  apply_task(s, e);
  // L = r / M with M = 30 days / 8 cards: 600 / 324,000.
  CHECK(e.overhead == Approx(600.0 / 324000.0).epsilon(1e-9));
}

TEST_CASE("search: a list's repeated values and SP without TP are searched once", "[search][search_properties]") {
  const auto sc = cli::parse_search(
      "search:\n  model: qwen3-8b\n  hardware: {preset: a100-sxm-80gb, gpus: 8}\n"
      "  layout: {tp: [1, 2], sequence_parallel: [false, true, true], global_batch: [16, 16, 32]}\n",
      "dups.yaml");
  CHECK(sc.spec.axes.sequence_parallel == std::vector<int>{0, 1});
  CHECK(sc.spec.axes.global_batch == std::vector<std::int64_t>{16, 32});
  std::vector<Candidate> all;
  enumerate_layouts(sc.spec, [&](const Candidate& c) { all.push_back(c); });
  CHECK(all.size() == 6);  // tp 1: SP off; tp 2: SP off and on; each at two global batches
  for (std::size_t i = 0; i < all.size(); ++i)
    for (std::size_t k = 0; k < i; ++k) CHECK_FALSE(same_layout(all[k], all[i]));
}

TEST_CASE("search: the pipeline's ends, auto: the layers over dealt to the ends",
          "[search][search_properties][chunk_ends]") {
  using Ends = std::vector<std::pair<int, int>>;
  JobLayout l;
  const auto ends = [&](int layers, int pp, int v) {
    l.pp = pp;
    l.vpp = v;
    l.schedule = v > 1 ? "interleaved-1f1b" : "1f1b";
    return auto_chunk_ends(layers, l);
  };
  // Qwen3-235B's 94 layers on 4 stages: 24 each but the ends, 2 fewer between them: all at the
  // first, one each (Megatron-Core's embedding and loss counted as layers), all at the last.
  CHECK(ends(94, 4, 1) == Ends{{22, -1}, {23, 23}, {-1, 22}});
  CHECK(ends(94, 8, 1) == Ends{{10, -1}, {11, 11}, {-1, 10}});
  // Where the share divides the layers: even, and the others one more, the ends as many chunks
  // fewer between them (a lighter last stage for the LM head): 47 each, or 46 / 48 and 48 / 46;
  // Llama 3 70B's 80 on 4 stages 20 each, or 17 / 21 / 21 / 21, 19 / 21 / 21 / 19, 21 / 21 / 21 / 17.
  CHECK(ends(94, 2, 1) == Ends{{-1, -1}, {46, -1}, {-1, 46}});
  CHECK(ends(80, 4, 1) == Ends{{-1, -1}, {17, -1}, {19, 19}, {-1, 17}});
  CHECK(ends(94, 5, 1) == Ends{{18, -1}, {-1, 18}});                 // one fewer: at either end
  CHECK(ends(94, 7, 1) == Ends{{10, -1}, {12, 12}, {-1, 10}});       // 14 each, 4 fewer: evenly 2 + 2
  CHECK(ends(61, 16, 1) == Ends{{1, -1}, {2, 3}, {3, 2}, {-1, 1}});  // DeepSeek-V3: 4 each, 3 fewer
  // Llama 3 405B's 126 layers on 16 stages of 8 chunks (paper sec. 3.3.2): one a chunk, the ends
  // none; an end never holds fewer than none (128 chunks: 2 over, not both at one end).
  CHECK(ends(126, 16, 8) == Ends{{0, 0}});
  CHECK(ends(126, 1, 1) == Ends{{-1, -1}});
  CHECK(ends(5, 8, 1).empty());
  // A layout's line names both ends' layers, as the table's `ends` column does, one end set or two.
  Candidate one;
  one.cards = 8;
  one.layout.dp = 1;
  one.layout.schedule = "1f1b";
  one.layout.pp = 8;
  one.layout.first_chunk_layers = 10;
  CHECK_THAT(layout_label(one, 94), Catch::Contains("tp 1 pp 8 (ends 10/12) dp 1"));
  one.layout.first_chunk_layers = -1;
  one.layout.last_chunk_layers = 10;
  CHECK_THAT(layout_label(one, 94), Catch::Contains("tp 1 pp 8 (ends 12/10) dp 1"));
  one.layout.first_chunk_layers = 11;
  one.layout.last_chunk_layers = 11;
  CHECK_THAT(layout_label(one, 94), Catch::Contains("tp 1 pp 8 (ends 11/11) dp 1"));  // 8 chunks of 1 would leave 3 over: more than the ends hold
  // auto pp: without the ends searched, the divisors of the layers; with them, every pp some
  // split takes at 1 to 8 virtual stages (not 18: 6 a stage leaves 14 over, more than two ends of 6
  // hold; nor 18 x v for any v).
  JobModel m;
  m.shape = {"m-94l", 94, 4096, 12288, 64, 4, 128, 151936, false, false};
  m.seq = 4096;
  const JobLayout base;
  CHECK(auto_pp(m, base) == std::vector<int>{1, 2, 47, 94});
  CHECK(auto_pp(m, base, true) == std::vector<int>{1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                                   16, 17, 19, 20, 24, 25, 32, 33, 47, 48, 49, 94, 95, 96});
  // Read and enumerated: each pp with its splits.
  const std::string head =
      "search:\n  model: {name: m, layers: 94, hidden: 1024, ffn: 4096, heads: 8, vocab: 32000, seq: 1024}\n"
      "  hardware: {preset: h100-sxm, gpus: 64}\n";
  const auto sc = cli::parse_search(
      head + "  layout: {pp: [2, 4, 5, 8], first_chunk_layers: auto, last_chunk_layers: auto, global_batch: 64}\n",
      "ends.yaml");
  CHECK(sc.spec.axes.chunk_ends);
  std::vector<std::tuple<int, int, int>> seen;
  enumerate_layouts(sc.spec, [&](const Candidate& c) {
    seen.emplace_back(c.layout.pp, c.layout.first_chunk_layers, c.layout.last_chunk_layers);
  });
  CHECK(seen == std::vector<std::tuple<int, int, int>>{{2, -1, -1},
                                                       {2, 46, -1},
                                                       {2, -1, 46},
                                                       {4, 22, -1},
                                                       {4, 23, 23},
                                                       {4, -1, 22},
                                                       {5, 18, -1},
                                                       {5, -1, 18},
                                                       {8, 10, -1},
                                                       {8, 11, 11},
                                                       {8, -1, 10}});
  const auto refused = [&](const std::string& layout) -> std::string {
    try {
      cli::parse_search(head + layout, "ends.yaml");
    } catch (const cli::InputError& e) { return e.what(); }
    return "";
  };
  CHECK(refused("  layout: {pp: 4, first_chunk_layers: auto, last_chunk_layers: 23, global_batch: 64}\n") ==
        "ends.yaml:4: search.layout.last_chunk_layers: auto searches both ends together: make this one auto too, or "
        "leave it out");
  CHECK(refused("  layout: {pp: 4, first_chunk_layers: [1, 2], global_batch: 64}\n") ==
        "ends.yaml:4: search.layout.first_chunk_layers: a count of layers, even, or auto (the ends searched "
        "together); not a list");
}
