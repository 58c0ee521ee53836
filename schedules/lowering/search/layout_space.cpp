// The space a search walks (layout_search.hpp): each key's values, listed or its `auto` domain for
// this model and cluster, and the enumeration, the product of the keys in one fixed order.
#include <algorithm>
#include <functional>
#include <memory>
#include <utility>

#include "models/job_memory.hpp"
#include "models/layout.hpp"
#include "schedules/lowering/search/layout_search.hpp"
#include "schedules/pipeline/registry.hpp"

namespace stepsim {

namespace {

// Largest virtual-stage count `auto` tries: SC21 Table 1 uses up to 3; more chunks cost more
// pipeline messages than they save in bubble on the presets' links.
constexpr int kMaxAutoVpp = 8;
// Micro-batch sizes `auto` tries.
const std::vector<int> kAutoMicroBatch = {1, 2, 4, 8, 16};
// CP exchanges `auto` tries (where cp > 1).
const std::vector<CpComm> kAutoCpComm = {CpComm::P2p, CpComm::AllGather, CpComm::AllToAll};

bool sets_ends(const JobLayout& l) { return l.first_chunk_layers >= 0 || l.last_chunk_layers >= 0; }
// Whether pp stages of v chunks split the layers: with the base's ends, or (ends searched) with
// one of auto_chunk_ends' splits.
bool splits(const JobModel& m, JobLayout l, int pp, int v, bool ends_searched) {
  l.pp = pp;
  l.vpp = v;
  l.schedule = v > 1 ? "interleaved-1f1b" : "1f1b";
  return ends_searched ? !auto_chunk_ends(m.shape.layers, l).empty() : !check_layer_split(m.shape.layers, l);
}

}  // namespace

std::vector<int> auto_tp(const ClusterSpec& c) { return divisors(c.node.gpus); }

std::vector<int> auto_pp(const JobModel& m, const JobLayout& base, bool ends_searched) {
  if (!sets_ends(base) && !ends_searched) return divisors(m.shape.layers);
  std::vector<int> out;
  for (int pp = ends_searched ? 1 : 2; pp <= m.shape.layers + 2; ++pp)
    if (!auto_vpp(m, base, pp, ends_searched).empty()) out.push_back(pp);
  return out;
}

std::vector<int> auto_vpp(const JobModel& m, const JobLayout& base, int pp, bool ends_searched) {
  if (!sets_ends(base) && !ends_searched)
    return pp <= 1 ? std::vector<int>{1} : divisors(m.shape.layers / pp, kMaxAutoVpp);
  std::vector<int> out;
  for (int v = 1; v <= (pp == 1 ? 1 : kMaxAutoVpp); ++v)
    if (splits(m, base, pp, v, ends_searched)) out.push_back(v);
  return out;
}

std::vector<std::pair<int, int>> auto_chunk_ends(int layers, const JobLayout& l) {
  const std::int64_t chunks = std::int64_t{l.pp} * l.chunks_per_device();
  if (layers < 1) return {};
  if (chunks < 2) return {{-1, -1}};
  std::vector<std::pair<int, int>> out;
  std::vector<std::vector<int>> seen;  // each split's chunk sizes: two spellings of one split count once
  // The others `share` layers each, the two ends d fewer between them: all at the first end, as
  // evenly as possible (the first, then the last, one more), all at the last. d of 1 or 2 as
  // evenly are Megatron-Core's --account-for-embedding-in-pipeline-split and
  // --account-for-loss-in-pipeline-split; the others its --decoder-first/last-pipeline-num-layers.
  const auto deal = [&](std::int64_t share, std::int64_t d) {
    using Deficit = std::pair<std::int64_t, std::int64_t>;
    const std::vector<Deficit> dealt =
        d == 0 ? std::vector<Deficit>{{0, 0}}
               : std::vector<Deficit>{{d, 0}, {(d + 1) / 2, d / 2}, {d / 2, (d + 1) / 2}, {0, d}};
    for (const auto& [first, last] : dealt) {
      if (first > share || last > share) continue;  // an end cannot hold fewer than none
      JobLayout x = l;
      x.first_chunk_layers = first > 0 ? static_cast<int>(share - first) : -1;
      x.last_chunk_layers = last > 0 ? static_cast<int>(share - last) : -1;
      if (check_layer_split(layers, x)) continue;
      std::vector<int> sizes = chunk_layer_counts(layers, x);
      if (std::find(seen.begin(), seen.end(), sizes) != seen.end()) continue;
      seen.push_back(std::move(sizes));
      out.emplace_back(x.first_chunk_layers, x.last_chunk_layers);
    }
  };
  // The smallest share that holds the layers; where it divides them, also one layer more a chunk,
  // the ends a chunk count lighter between them (a stage holding the LM head, or layers kept in
  // BF16, offered fewer layers).
  const std::int64_t share = (layers + chunks - 1) / chunks, d = share * chunks - layers;
  deal(share, d);
  if (d == 0) deal(share + 1, chunks);
  return out;
}

namespace {

// One key of the space: the values it takes once the keys before it are set, and how a
// candidate takes one of them.
class Axis {
 public:
  virtual ~Axis() = default;
  // The key's values for the candidate as the keys before it set it; how many there are.
  virtual std::size_t open(const Candidate& c) = 0;
  virtual void take(Candidate& c, std::size_t k) const = 0;
};

template <class T>
class KeyAxis final : public Axis {
 public:
  using Values = std::function<std::vector<T>(const Candidate&)>;
  using Take = std::function<void(Candidate&, const T&)>;
  KeyAxis(std::vector<T> fixed, Values values, Take take)
      : fixed_(std::move(fixed)), values_(std::move(values)), take_(std::move(take)) {}
  std::size_t open(const Candidate& c) override {
    if (!values_) return fixed_.size();
    now_ = values_(c);
    return now_.size();
  }
  void take(Candidate& c, std::size_t k) const override { take_(c, values_ ? now_[k] : fixed_[k]); }

 private:
  std::vector<T> fixed_, now_;
  Values values_;  // empty: the values are `fixed_`, whatever the keys before
  Take take_;
};

// A key whose values do not depend on the keys before it.
template <class T>
std::unique_ptr<Axis> fixed_key(std::vector<T> values, typename KeyAxis<T>::Take take) {
  return std::make_unique<KeyAxis<T>>(std::move(values), nullptr, std::move(take));
}
// A key whose values do.
template <class T>
std::unique_ptr<Axis> dependent_key(typename KeyAxis<T>::Values values, typename KeyAxis<T>::Take take) {
  return std::make_unique<KeyAxis<T>>(std::vector<T>{}, std::move(values), std::move(take));
}

template <class T>
std::vector<T> listed_or(const std::vector<T>& listed, std::vector<T> auto_domain) {
  return listed.empty() ? std::move(auto_domain) : listed;
}

// Schedules: with one stage the order is the same whatever the family (one is tried); else
// every family whose placement matches the chunk count.
std::vector<std::string> schedules_for(const SearchAxes& a, const JobLayout& l) {
  if (!a.schedule.empty()) return a.schedule;
  if (l.pp == 1 || a.default_schedule) return {l.vpp > 1 ? "interleaved-1f1b" : "1f1b"};
  std::vector<std::string> out;
  for (const auto& f : schedule_families())
    if (f.takes_virtual_stages == (l.vpp > 1)) out.push_back(f.name);
  return out;
}

// Selective recompute of the attention core alone (the default module) changes nothing under
// FlashAttention, which never keeps the scores and recomputes them in its own backward
// (models/layer_costs.cpp): beside `none` it would repeat that layout, so it is tried only alone.
std::vector<JobRecompute> recompute_values(const SearchAxes& a, const JobLayout& base) {
  std::vector<JobRecompute> v =
      listed_or(a.recompute, {JobRecompute::None, JobRecompute::Selective, JobRecompute::Full});
  const bool same_as_none = fused(base.attention) && base.recompute_modules == kRecomputeCoreAttn;
  if (same_as_none && std::find(v.begin(), v.end(), JobRecompute::None) != v.end())
    v.erase(std::remove(v.begin(), v.end(), JobRecompute::Selective), v.end());
  return v;
}

// Partial recompute, the last key: `auto` asks the memory of the whole layout. Counts at or past
// a chunk's layers recompute it whole: past every chunk's they are one layout, every layer (-1).
// Where no layer need be recomputed and `none` is tried too, that is the layout with none: the
// full-recompute one is not tried again.
std::unique_ptr<Axis> recompute_layers_axis(const SearchSpec& spec) {
  const auto values = recompute_values(spec.axes, spec.base);
  const bool tries_none = std::find(values.begin(), values.end(), JobRecompute::None) != values.end();
  return dependent_key<int>(
      [&spec, tries_none](const Candidate& c) {
        if (c.layout.recompute != JobRecompute::Full) return std::vector<int>{-1};
        if (spec.axes.recompute_layers.empty()) {
          const int n = fewest_recomputed_layers(spec.model, c.layout, spec.cluster, c.cards);
          return n == 0 && tries_none ? std::vector<int>{} : std::vector<int>{n};
        }
        const int most = most_chunk_layers(spec.model, c.layout);
        std::vector<int> out;
        for (const int n : spec.axes.recompute_layers) {
          const int v = most > 0 && n >= most ? -1 : n;
          if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
        }
        return out;
      },
      [&spec](Candidate& c, int v) {
        c.layout.recompute_layers = v;
        c.layout.fewest_recompute = spec.axes.recompute_layers.empty() && c.layout.recompute == JobRecompute::Full;
      });
}

// Activations on the host, the last key (`auto` asks the memory of the whole layout): only where
// Megatron-Core offloads them, without a pipeline or recompute; 0 elsewhere.
std::unique_ptr<Axis> offload_activations_axis(const SearchSpec& spec) {
  return dependent_key<int>(
      [&spec](const Candidate& c) {
        if (c.layout.pp > 1 || c.layout.recompute != JobRecompute::None) return std::vector<int>{0};
        if (spec.axes.offload_activations.empty())
          return std::vector<int>{fewest_offloaded_layers(spec.model, c.layout, spec.cluster, c.cards)};
        return spec.axes.offload_activations;
      },
      [](Candidate& c, int v) { c.layout.offload_activations = v; });
}

// The pipeline's ends: the base's, or (searched) each split auto_chunk_ends finds for the
// candidate's chunks; none: the base's, for check_layout to name the problem.
std::unique_ptr<Axis> chunk_ends_axis(const SearchSpec& spec) {
  return dependent_key<std::pair<int, int>>(
      [&spec](const Candidate& c) {
        const std::pair<int, int> fixed{spec.base.first_chunk_layers, spec.base.last_chunk_layers};
        if (!spec.axes.chunk_ends) return std::vector<std::pair<int, int>>{fixed};
        auto v = auto_chunk_ends(spec.model.shape.layers, c.layout);
        return v.empty() ? std::vector<std::pair<int, int>>{fixed} : v;
      },
      [](Candidate& c, const std::pair<int, int>& v) {
        c.layout.first_chunk_layers = v.first;
        c.layout.last_chunk_layers = v.second;
      });
}

// ZeRO's stage and what depends on it: HSDP's replicas, ZeRO-3's weights kept gathered, the
// optimizer on the host.
void push_zero_axes(const SearchSpec& spec, std::vector<std::unique_ptr<Axis>>& axes) {
  const SearchAxes& a = spec.axes;
  axes.push_back(fixed_key<int>(listed_or(a.zero, {0, 1, 2, 3}), [](Candidate& c, int v) { c.layout.zero = v; }));
  // HSDP: without ZeRO there is nothing to replicate (one layout); `auto` adds a shard group per node.
  axes.push_back(dependent_key<int>(
      [&](const Candidate& c) {
        if (c.layout.zero == 0) return std::vector<int>{1};
        if (!a.dp_replicate.empty()) return a.dp_replicate;
        std::vector<int> v = {1};
        if (const int r = dp_replicate_per_node(c.layout, spec.cluster.node.gpus); r > 1) v.push_back(r);
        return v;
      },
      [](Candidate& c, int v) { c.layout.dp_replicate = v; }));
  // Weights kept gathered: only ZeRO-3 gathers them (one layout below it).
  axes.push_back(dependent_key<int>(
      [&a](const Candidate& c) {
        if (c.layout.zero < 3) return std::vector<int>{0};
        return listed_or(a.keep_gathered, {0, 1});
      },
      [](Candidate& c, int v) { c.layout.keep_gathered = v != 0; }));
  // The optimizer on the host: a shard to step there from ZeRO 1 on, with the master in it. Below
  // that, off where off is searched; `true` alone stays, for check_layout to refuse.
  axes.push_back(dependent_key<int>(
      [&a](const Candidate& c) {
        std::vector<int> v = listed_or(a.offload_optimizer, {0, 1});
        const bool no_shard = c.layout.zero < 1 || c.layout.master_weights == MasterWeights::Model;
        if (no_shard && std::find(v.begin(), v.end(), 0) != v.end()) v = {0};
        return v;
      },
      [](Candidate& c, int v) { c.layout.offload_optimizer = v != 0; }));
}

// The keys in enumeration order (layout_search.hpp).
std::vector<std::unique_ptr<Axis>> layout_axes(const SearchSpec& spec) {
  const SearchAxes& a = spec.axes;
  const JobModel& m = spec.model;
  const JobLayout& base = spec.base;
  std::vector<std::unique_ptr<Axis>> axes;
  axes.push_back(fixed_key<std::int64_t>(a.cards, [](Candidate& c, std::int64_t v) { c.cards = v; }));
  axes.push_back(fixed_key<int>(listed_or(a.tp, auto_tp(spec.cluster)), [](Candidate& c, int v) { c.layout.tp = v; }));
  axes.push_back(
      fixed_key<int>(listed_or(a.cp, divisors(spec.cluster.node.gpus)), [](Candidate& c, int v) { c.layout.cp = v; }));
  // Without CP the exchange does not matter: one layout (the first value), not one per value.
  axes.push_back(dependent_key<CpComm>(
      [&a](const Candidate& c) {
        const auto all = listed_or(a.cp_comm, kAutoCpComm);
        return c.layout.cp > 1 ? all : std::vector<CpComm>{all.front()};
      },
      [](Candidate& c, CpComm v) { c.layout.cp_comm = v; }));
  axes.push_back(
      fixed_key<int>(listed_or(a.pp, auto_pp(m, base, a.chunk_ends)), [](Candidate& c, int v) { c.layout.pp = v; }));
  // dp: what the cards leave (0 when they do not divide: check_layout names the problem).
  axes.push_back(dependent_key<int>(
      [&a](const Candidate& c) {
        if (a.dp_listed) return a.dp;
        const JobLayout& l = c.layout;
        const std::int64_t mp = static_cast<std::int64_t>(l.tp) * l.cp * l.pp;
        return std::vector<int>{c.cards % mp == 0 ? static_cast<int>(c.cards / mp) : 0};
      },
      [](Candidate& c, int v) { c.layout.dp = v; }));
  axes.push_back(dependent_key<int>(
      [&](const Candidate& c) { return listed_or(a.vpp, auto_vpp(m, base, c.layout.pp, a.chunk_ends)); },
      [](Candidate& c, int v) { c.layout.vpp = v; }));
  axes.push_back(dependent_key<std::string>([&a](const Candidate& c) { return schedules_for(a, c.layout); },
                                            [](Candidate& c, const std::string& v) { c.layout.schedule = v; }));
  axes.push_back(chunk_ends_axis(spec));
  push_zero_axes(spec, axes);
  axes.push_back(
      fixed_key<int>(listed_or(a.micro_batch, kAutoMicroBatch), [](Candidate& c, int v) { c.layout.micro_batch = v; }));
  axes.push_back(
      fixed_key<JobRecompute>(recompute_values(a, base), [](Candidate& c, JobRecompute v) { c.layout.recompute = v; }));
  // Sequence parallelism splits the TP group's work: without TP there is one layout (off),
  // whatever the list says (else each listed value would repeat the same layout).
  axes.push_back(dependent_key<int>(
      [&a](const Candidate& c) {
        return c.layout.tp == 1 ? std::vector<int>{0} : listed_or(a.sequence_parallel, {0, 1});
      },
      [&base](Candidate& c, int v) {
        c.layout.sequence_parallel = v != 0 && c.layout.tp > 1;
        c.layout.overlap_tp = base.overlap_tp && c.layout.sequence_parallel;  // needs sp
      }));
  axes.push_back(fixed_key<int>(listed_or(a.ep, m.experts > 0 ? divisors(m.experts) : std::vector<int>{1}),
                                [](Candidate& c, int v) { c.layout.ep = v; }));
  // Expert TP: `auto` the divisors of tp (MoE only); tp itself is the unfolded layout (0).
  axes.push_back(dependent_key<int>(
      [&](const Candidate& c) {
        return listed_or(a.expert_tp, m.experts > 0 ? divisors(c.layout.tp) : std::vector<int>{0});
      },
      [](Candidate& c, int v) { c.layout.expert_tp = v == c.layout.tp ? 0 : v; }));
  axes.push_back(fixed_key<std::int64_t>(listed_or(a.global_batch, {base.global_batch}),
                                         [](Candidate& c, std::int64_t v) { c.layout.global_batch = v; }));
  axes.push_back(recompute_layers_axis(spec));
  axes.push_back(offload_activations_axis(spec));
  return axes;
}

}  // namespace

// An odometer over the keys: the last turns fastest; a key's values are asked for each time the
// keys before it move.
void enumerate_layouts(const SearchSpec& spec, const std::function<void(const Candidate&)>& visit) {
  const auto axes = layout_axes(spec);
  const std::size_t n = axes.size();
  std::vector<std::size_t> at(n, 0), count(n, 0);
  Candidate c;
  c.layout = spec.base;
  std::size_t k = 0;
  count[0] = axes[0]->open(c);
  for (;;) {
    if (at[k] == count[k]) {  // this key's values are done: the key before moves on
      if (k == 0) return;
      ++at[--k];
      continue;
    }
    axes[k]->take(c, at[k]);
    if (k + 1 < n) {
      ++k;
      at[k] = 0;
      count[k] = axes[k]->open(c);
      continue;
    }
    visit(c);
    ++c.index;
    ++at[k];
  }
}

}  // namespace stepsim
