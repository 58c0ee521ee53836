#pragma once
// Layout search (docs/search.md): every parallel layout of a job (model + cluster) over lists of
// values per layout key and a range of card counts, pruned before simulation, the survivors
// simulated on the engine (schedules/lowering/job/job_step.hpp), ranked.
//
//   1. enumerate: cards x tp x cp x CP exchange x pp x dp x virtual stages x schedule x
//      pipeline ends x zero x
//      HSDP replicas x kept weights x micro-batch x recompute x sequence parallelism x ep x
//      expert TP x global batch x recomputed layers, in that
//      (fixed) order (layout_space.cpp); dp is what the cards leave (cards / (tp pp cp)) unless
//      listed;
//   2. prune, in this order, each rule counted: divisibility (models/layout.hpp check_layout),
//      schedule (the family cannot run pp stages with m micro-batches and v chunks), memory
//      (the analytic per-GPU peak, job_memory, over the usable memory), bound (the busiest
//      device's compute alone, a lower bound on the step, is slower than the N-th best step
//      found so far at the same card count and global batch); a layout the job step refuses
//      when run (blocking sends that deadlock the schedule's order) counts as a schedule prune;
//   3. simulate the rest, in parallel, deterministically: candidates sorted by (cards, global
//      batch, bound, enumeration index) are simulated in fixed batches; the bound threshold only changes
//      between batches, so which layouts are simulated does not depend on the thread count.
//      Results are sorted by the ranking key with a total-order tie rule (step time, then
//      enumeration index).
//
// Ranking keys: step time; cost = cards x step time; days = reserved + steps x step x (1 + L),
// with L the checkpoint save / redo / restore overhead (models/checkpoint.hpp, Young 1974).
// Within one card count and global batch all three order layouts the same way (by step time), so
// keeping the best N of each is exact for every key and for the Pareto front of cards vs days.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schedules/lowering/job/job_step.hpp"

namespace stepsim {

// Values to try per layout key. Empty: the key's `auto` domain (see expand_axes).
struct SearchAxes {
  std::vector<std::int64_t> cards;  // never empty after reading
  std::vector<int> tp, pp, vpp, cp, ep, micro_batch, zero, dp;
  bool dp_listed = false;             // dp given: only these; else cards / (tp pp cp)
  std::vector<std::string> schedule;  // empty: every family that can run the layout
  bool default_schedule = false;      // not given: 1f1b, or interleaved-1f1b with v > 1
  std::vector<JobRecompute> recompute;
  std::vector<int> sequence_parallel;  // 0 / 1
  std::vector<int> expert_tp;          // 0 or tp: not folded
  std::vector<CpComm> cp_comm;
  // HSDP's replicas of the sharded state; empty (`auto`): 1 and, under ZeRO, one shard group per
  // node (dp_replicate_per_node).
  std::vector<int> dp_replicate;
  // ZeRO-3 keeping each layer's gathered weights from its forward to its backward (0 / 1); empty
  // (`auto`): both, under ZeRO-3 (zero 0-2 have nothing to keep: 0).
  std::vector<int> keep_gathered;
  // The optimizer on the host (0 / 1; by default off, as a file that leaves it out); empty
  // (`auto`): both, under ZeRO 1-3 (zero 0 has no shard to step there: 0).
  std::vector<int> offload_optimizer = {0};
  // The pipeline's ends searched (first_chunk_layers and last_chunk_layers `auto`): each split
  // auto_chunk_ends finds; false: the base layout's.
  bool chunk_ends = false;
  // Partial recompute, of the layouts that recompute fully: the first N layers of each chunk
  // (-1: every layer); empty (`auto`): the fewest that fit (models/job_memory.hpp fewest_recomputed_layers).
  std::vector<int> recompute_layers;
  // Activations of the first N layers on the host, of the layouts Megatron-Core offloads (no
  // pipeline, no recompute; the others 0): counts (by default 0, as a file that leaves it out);
  // empty (`auto`): the fewest that fit (models/job_memory.hpp fewest_offloaded_layers).
  std::vector<int> offload_activations = {0};
  std::vector<std::int64_t> global_batch;
  // Which keys were `auto` (domain depends on other keys), for the report.
  std::vector<std::string> auto_keys;
  // The keys searched, `auto` or a list of more than one value, in the reader's order (the report
  // of a search around a job step names them).
  std::vector<std::string> opened;
  // Of kOpenableKeys, those the file leaves out (each fixed at job_step's default), in that order.
  std::vector<std::string> left_out;
};

// The layout keys that change what fits in memory, in the order a search that finds nothing
// fitting opens the ones left out (as far as the opened space stays small) to say whether opening
// them would help: a file that leaves out tp and pp searches tp 1 pp 1 only.
inline constexpr const char* kOpenableKeys[] = {"tp", "pp", "zero", "recompute", "sequence_parallel", "ep", "cp"};

// A run to finish: days per layout and the deadline (the planner's formulas, models/plan.hpp).
struct SearchTask {
  std::int64_t tokens = 0;  // 0: no days, no deadline
  Time deadline = 0, reserved = 0;
  std::optional<Bytes> checkpoint_bytes;  // default: recoverable state, 14 B per parameter
  std::int64_t storage_bandwidth = 0;     // 0: saves cost nothing
  Time restore = 0;
  std::optional<Time> interval;  // default: Young's optimum sqrt(2 c M)
  Time card_mtbf = 0;            // 0: no failures
};

enum class SearchRank { Step, Cost, Days };  // Step: by step time
const char* search_rank_name(SearchRank r);

struct Candidate {
  std::int64_t index = 0;  // enumeration order (the final tie rule)
  std::int64_t cards = 0;
  JobLayout layout;
};

struct SearchSpec {
  JobModel model;
  ClusterSpec cluster;
  JobLayout base;  // fixed keys (attention, overlap, fp8, grad_bytes, ...)
  Time input_wait = 0;
  SearchAxes axes;
  SearchTask task;
  SearchRank rank = SearchRank::Step;
  int top = 10;
  // A layout searched around (a job step's own, docs/search.md "Around a job step"): simulated
  // beside the space, and every layout whose compute alone is faster than its step simulated
  // too (the bound prunes only what is slower than both), so that the layouts faster than it are
  // counted exactly.
  std::optional<Candidate> around;
};

struct SearchOptions {
  int jobs = 1;
  std::size_t shard_index = 0, shard_count = 1;  // candidates with index % count == index
  bool prune_bound = true;
  std::function<void(std::size_t done, std::size_t total)> progress;  // from worker threads, serialized
};

struct Evaluated {
  Candidate c;
  Time bound = 0;  // compute-only lower bound on the step
  Bytes analytic_memory = 0;
  // From the simulation:
  Time step = 0;
  double mfu = 0, bubble = 0;
  JobMemory memory;
  Time exposed_tp = 0, exposed_pp = 0, exposed_dp = 0, exposed_cp = 0, exposed_ep = 0;
  std::string limit;  // the kind of op with the largest share of the critical path
  double limit_share = 0;
  // From the task (0 without one):
  Time completion = 0;  // reserved + steps x step x (1 + L)
  double overhead = 0;  // L
  Time exposed() const { return exposed_tp + exposed_pp + exposed_dp + exposed_cp + exposed_ep; }
  double cost() const { return static_cast<double>(c.cards) * to_s(step); }  // card-seconds per step
};

struct SearchCounts {
  std::int64_t considered = 0, divisibility = 0, schedule = 0, memory = 0, bound = 0, simulated = 0;
  std::int64_t over_memory_simulated = 0;  // fit analytically, over capacity at the simulated peak
};

// The layout that came closest when nothing qualifies, and what would have to change.
struct NearestMiss {
  std::string what;                  // one line: the layout and by how much it misses
  std::vector<std::string> changes;  // one line each
};

struct PerCards {  // the best layout at one card count: soonest to finish, else fastest (the front's candidates)
  std::int64_t cards = 0;
  std::optional<Evaluated> best;
  Time budget = 0;  // longest step that meets the deadline at this card count
  bool meets = false;
  std::string why;
};

struct SearchResult {
  SearchCounts counts;
  std::vector<Evaluated> simulated;  // every simulated layout that fits, by step time, then index
  std::vector<Evaluated> top;        // by the ranking key, at most spec.top
  std::vector<PerCards> per_cards;   // every card count searched, ascending
  std::vector<std::int64_t> front;   // cards of the Pareto front of (cards, days) (or step time)
  std::optional<NearestMiss> miss;   // set when no layout fits, or none meets the deadline
  std::string divisibility_example;  // the most frequent divisibility message key, for "why none"
  // Per card count with no layout left before simulation: why (the first divisibility problem,
  // or the smallest memory need).
  std::map<std::int64_t, std::string> none_why;
  // spec.around simulated, and how many layouts that fit rank before it (ranks_before).
  std::optional<Evaluated> around;
  std::int64_t ranked_before_around = 0;
};

// The values each key takes (auto domains filled in for this model and cluster).
std::vector<int> auto_tp(const ClusterSpec& c);
// pp and virtual stages that split the layers: evenly, or, where the base layout sets the first
// or last chunk's layers, with an equal share for the other chunks (check_layer_split); with the
// ends searched, by one of auto_chunk_ends' splits.
std::vector<int> auto_pp(const JobModel& m, const JobLayout& base, bool ends_searched = false);
std::vector<int> auto_vpp(const JobModel& m, const JobLayout& base, int pp, bool ends_searched = false);
// The pipeline ends (first_chunk_layers, last_chunk_layers; -1: the others' share) that split
// `layers` over l's c chunks: every chunk ceil(layers / c) but the two ends, which hold the
// d = c ceil(layers / c) - layers layers over between them fewer: all at the first end, as evenly
// as possible (the first end, then the last, one fewer more), all at the last end, each split
// once (d = 0: an equal share). Where d is 1 or 2, as evenly is Megatron-Core's
// --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split (the embedding
// and the loss counted as layers); the others its --decoder-first/last-pipeline-num-layers.
// An end holds no fewer than none. One chunk: an equal share.
std::vector<std::pair<int, int>> auto_chunk_ends(int layers, const JobLayout& l);

// Every candidate of the space in enumeration order (no pruning).
void enumerate_layouts(const SearchSpec& spec, const std::function<void(const Candidate&)>& visit);

// The compute-only lower bound on the step (busiest device: m x its chunks' F + B + W, plus its
// optimizer step), as the lowering rounds each pass.
Time compute_bound(const JobStepSpec& s);

// Why the schedule family cannot run the layout, or nullopt.
std::optional<std::string> schedule_problem(const JobLayout& l);

// The interval between the task's saves at `cards`, as its completion counts them: the task's,
// else Young's optimum; 0 (no saves) with neither failures nor an interval given.
Time task_checkpoint_interval(const SearchSpec& spec, std::int64_t cards);

// Completion and overhead for a step at `cards` (spec.task.tokens > 0).
void apply_task(const SearchSpec& spec, Evaluated& e);
// The budget at `global_batch` sequences per step (0: the base layout's).
Time step_budget_at(const SearchSpec& spec, std::int64_t cards, std::int64_t global_batch = 0);

SearchResult run_search(const SearchSpec& spec, const SearchOptions& opt = {});

// The ranking and summaries from a set of simulated layouts (used by run_search and by merging
// shards): sorts `r.simulated`, fills top, per_cards, front and miss.
void finish_search(const SearchSpec& spec, SearchResult& r);

// Layouts read back from a shard's JSON carry the searched keys only: each of `evaluated` is given
// its whole candidate layout again (the base's keys and what the searched ones set with them),
// found by its enumeration index, keeping the recompute_layers its run took. Throws
// std::runtime_error where a candidate is not the one the shard named (the scenario changed).
void restore_layouts(const SearchSpec& spec, std::vector<Evaluated>& evaluated);

// Ranking order (total): the key, then by_time: step time, then memory per GPU at the simulated
// peak (less first), then enumeration index.
bool by_time(const Evaluated& a, const Evaluated& b);
bool ranks_before(const SearchSpec& spec, const Evaluated& a, const Evaluated& b);

// A layout in one line ("512 cards: tp 8 pp 4 v 2 (ends 12/10) dp 16 zero 1 ..."); `layers`, the
// model's, gives the layers of a pipeline's ends where they are set.
std::string layout_label(const Candidate& c, int layers);

}  // namespace stepsim
