#include "cli/reports/search_export.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "cli/input/job_step_yaml.hpp"

namespace stepsim::cli {

namespace {

namespace fs = std::filesystem;

// A relative `file:` of the scenario `from` as a path from the folder of `to` (absolute where no
// relative path joins them).
std::string rebased_path(const std::string& value, const std::string& from, const std::string& to) {
  const fs::path p(value);
  if (p.is_absolute()) return value;
  const auto folder = [](const std::string& file) {
    const fs::path parent = fs::path(file).parent_path();
    return fs::absolute(parent.empty() ? fs::path(".") : parent).lexically_normal();
  };
  const fs::path target = (folder(from) / p).lexically_normal();
  const fs::path rel = target.lexically_relative(folder(to));
  return rel.empty() ? target.string() : rel.generic_string();
}

// A copy of the search's `key` map (or a built-in model's name), its `file:` rebased.
YAML::Node section_copy(const SearchScenario& sc, const char* key, const std::string& out_path) {
  YAML::Node n = YAML::Clone(sc.source->root["search"][key]);
  if (n.IsMap() && n["file"] && n["file"].IsScalar()) n["file"] = rebased_path(n["file"].Scalar(), sc.file, out_path);
  return n;
}

// The search's task as a `job:` section of the layout's whole runs: its tokens, deadline and
// reserved days, failures, and saves at the interval the search charged (the task's, else
// `young`: Young's optimum at each layout's cards), or free ones after every step where it
// charged none.
void emit_job(YAML::Emitter& out, const SearchSpec& spec, std::int64_t cards) {
  const SearchTask& k = spec.task;
  out << YAML::Key << "job" << YAML::Value << YAML::Block << YAML::BeginMap;
  out << YAML::Key << "tokens" << YAML::Value << k.tokens;
  if (k.deadline > 0) out << YAML::Key << "deadline" << YAML::Value << exact_duration(k.deadline);
  if (k.reserved > 0) out << YAML::Key << "reserved" << YAML::Value << exact_duration(k.reserved);
  if (k.card_mtbf > 0) {
    out << YAML::Key << "card_mtbf" << YAML::Value << exact_duration(k.card_mtbf);
    out << YAML::Key << "restore" << YAML::Value << exact_duration(k.restore);
  }
  if (const Time every = task_checkpoint_interval(spec, cards); every > 0 && k.storage_bandwidth > 0) {
    out << YAML::Key << "checkpoint" << YAML::Value << YAML::Flow << YAML::BeginMap;
    // The task's interval, else Young's optimum, which the job works out for each layout's cards.
    out << YAML::Key << "every" << YAML::Value << (k.interval ? exact_duration(every) : "young");
    out << YAML::Key << "storage" << YAML::Value << bandwidth(k.storage_bandwidth);
    if (k.checkpoint_bytes) out << YAML::Key << "size" << YAML::Value << fmt::format("{}B", *k.checkpoint_bytes);
    out << YAML::EndMap;
  } else if (k.card_mtbf > 0 && k.storage_bandwidth <= 0) {
    // The search's saves cost nothing (no bandwidth given), so a failure loses no work: an empty
    // snapshot after every step (the storage's rate then moves nothing), not a restart from step 0.
    out << YAML::Key << "checkpoint" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "every_steps" << YAML::Value << 1;
    out << YAML::Key << "size" << YAML::Value << "0B";
    out << YAML::Key << "storage" << YAML::Value << "1GB/s";
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

// A layout `choice` names in `r`, the header's words for it and its name in the scenario.
struct Chosen {
  const Evaluated* e = nullptr;
  std::string what;     // "layout 2", "the best at 48 cards"
  std::string suffix;   // of the scenario's name
  std::string variant;  // its name under variants: (all but the first)
};

// "a", "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& items) {
  if (items.size() < 2) return items.empty() ? "" : items.front();
  return fmt::format("{} and {}", fmt::join(items.begin(), items.end() - 1, ", "), items.back());
}

template <class T>
void refuse_repeats(const std::vector<T>& values, const char* option) {
  std::set<T> seen;
  for (const T& v : values)
    if (!seen.insert(v).second) throw InputError(option, 0, "", fmt::format("{} is named twice", v));
}

}  // namespace

void check_export_choice(const SearchSpec& spec, const ExportChoice& choice) {
  refuse_repeats(choice.cards, "--cards");
  refuse_repeats(choice.picks, "--pick");
  const auto& counts = spec.axes.cards;
  for (const std::int64_t cards : choice.cards)
    if (std::find(counts.begin(), counts.end(), cards) == counts.end())
      throw InputError("--cards", 0, "",
                       fmt::format("{} is not a card count searched ({})", cards, fmt::join(counts, ", ")));
  if (!choice.cards.empty()) return;
  for (const int pick : choice.picks)
    if (pick < 1 || pick > spec.top)
      throw InputError(
          "--pick", 0, "",
          fmt::format("{} is not one of the {} layouts listed (1 to {}; --top lists more)", pick, spec.top, spec.top));
}

namespace {

// The layouts `choice` names in the result; what only the result can refuse (nothing fits, fewer
// listed than --top, no layout at a card count) is refused here, the names before the search
// (check_export_choice).
std::vector<Chosen> choose(const SearchResult& r, const ExportChoice& choice) {
  std::vector<Chosen> out;
  if (!choice.cards.empty()) {
    for (const std::int64_t cards : choice.cards) {
      const auto p =
          std::find_if(r.per_cards.begin(), r.per_cards.end(), [&](const PerCards& x) { return x.cards == cards; });
      if (p == r.per_cards.end() || !p->best)
        throw InputError("--cards", 0, "",
                         fmt::format("no layout at {} cards{}", cards, p == r.per_cards.end() ? "" : ": " + p->why));
      out.push_back({&*p->best, fmt::format("the best at {} cards", cards), std::to_string(cards),
                     fmt::format("cards-{}", cards)});
    }
    return out;
  }
  if (r.top.empty()) throw InputError("--export", 0, "", "no layout fits: nothing written");
  for (const int pick : choice.picks) {
    if (pick < 1 || static_cast<std::size_t>(pick) > r.top.size())
      throw InputError("--pick", 0, "",
                       fmt::format("{} is not one of the {} layouts listed (1 to {}; --top lists more)", pick,
                                   r.top.size(), r.top.size()));
    out.push_back({&r.top[static_cast<std::size_t>(pick - 1)], fmt::format("layout {}", pick), std::to_string(pick),
                   fmt::format("layout-{}", pick)});
  }
  return out;
}

// The header's first line: which layouts of the search's listing (or per-card table) these are.
std::string which_line(const SearchSpec& spec, const SearchResult& r, const ExportChoice& choice) {
  if (!choice.cards.empty()) {
    std::vector<std::string> counts;
    for (const auto c : choice.cards) counts.push_back(std::to_string(c));
    return fmt::format("The best {} at {} cards (the per-card table)", counts.size() == 1 ? "layout" : "layouts",
                       and_list(counts));
  }
  std::vector<std::string> picks;
  for (const int p : choice.picks) picks.push_back(std::to_string(p));
  return fmt::format("{} {} of the {} listed (rank: {})", picks.size() == 1 ? "Layout" : "Layouts", and_list(picks),
                     r.top.size(), search_rank_name(spec.rank));
}

std::string step_and_memory(const Evaluated& e) {
  return fmt::format("{:.3f} s a step, {:.1f} GiB per GPU at the simulated peak", to_s(e.step),
                     static_cast<double>(e.memory.total()) / (1 << 30));
}

// A step searched around is exported beside the layouts chosen, unless it is one of them.
bool own_beside(const SearchResult& r, const std::vector<Chosen>& chosen) {
  return r.around && std::none_of(chosen.begin(), chosen.end(),
                                  [&](const Chosen& c) { return c.e->c.layout == r.around->c.layout; });
}

}  // namespace

bool exports_own_layout(const SearchResult& r, const ExportChoice& choice) { return own_beside(r, choose(r, choice)); }

std::string search_layout_scenario(const SearchScenario& sc, const std::vector<std::string>& sets,
                                   const SearchResult& r, const ExportChoice& choice, const std::string& out_path) {
  check_export_choice(sc.spec, choice);
  std::vector<Chosen> chosen = choose(r, choice);
  if (own_beside(r, chosen)) chosen.push_back({&*r.around, "the job step's own layout", "own", "own"});
  const Evaluated& base = *chosen.front().e;
  YAML::Node hardware = section_copy(sc, "hardware", out_path);
  hardware["gpus"] = base.c.cards;
  std::vector<std::string> suffixes;
  for (const Chosen& c : chosen) suffixes.push_back(c.suffix);
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value
      << fmt::format("{}-{}{}", sc.name, fmt::join(suffixes, "-"), choice.cards.empty() ? "" : "-cards");
  out << YAML::Key << "description" << YAML::Value << layout_label(base.c, sc.spec.model.shape.layers);
  out << YAML::Key << "job_step" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "model" << YAML::Value << YAML::Flow << section_copy(sc, "model", out_path);
  out << YAML::Key << "hardware" << YAML::Value << YAML::Flow << hardware;
  out << YAML::Key << "layout" << YAML::Value << YAML::Flow << YAML::Load(format_layout_yaml(base.c.layout));
  if (const YAML::Node wait = sc.source->root["search"]["input_wait"]; wait.IsDefined())
    out << YAML::Key << "input_wait" << YAML::Value << YAML::Clone(wait);
  if (chosen.size() > 1) {
    // Each other layout as the keys where it differs from the first: compare lays them over it.
    out << YAML::Key << "variants" << YAML::Value << YAML::Block << YAML::BeginMap;
    for (std::size_t i = 1; i < chosen.size(); ++i) {
      const Evaluated& e = *chosen[i].e;
      out << YAML::Key << chosen[i].variant << YAML::Value << YAML::Flow << YAML::BeginMap;
      if (e.c.cards != base.c.cards) {
        out << YAML::Key << "hardware" << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "gpus" << YAML::Value << e.c.cards << YAML::EndMap;
      }
      out << YAML::Key << "layout" << YAML::Value << YAML::Load(format_layout_yaml_over(e.c.layout, base.c.layout));
      out << YAML::EndMap << YAML::Comment(layout_label(e.c, sc.spec.model.shape.layers));
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  if (sc.spec.task.tokens > 0) emit_job(out, sc.spec, base.c.cards);
  out << YAML::EndMap;
  std::string command = "stepsim search " + sc.file;
  for (const auto& set : sets) command += fmt::format(" --set '{}'", set);
  const bool task = sc.spec.task.tokens > 0;
  if (chosen.size() == 1)
    return fmt::format(
        "# {} of\n#   {}\n"
        "# {}. `stepsim run` simulates it alone (with\n"
        "# --trace or --html){}.\n{}\n",
        which_line(sc.spec, r, choice), command, step_and_memory(base),
        task ? "; `stepsim job` runs the search's task with it, failures and saves drawn"
             : "; a `job:` section beside it would run whole training runs of it",
        out.c_str());
  std::string lines = fmt::format("# the base, {}: {}\n", chosen.front().what, step_and_memory(base));
  for (std::size_t i = 1; i < chosen.size(); ++i)
    lines += fmt::format("# {}: {}\n", chosen[i].variant, step_and_memory(*chosen[i].e));
  return fmt::format(
      "# {} of\n#   {}\n{}"
      "# `stepsim compare` simulates them side by side (--trace: every layout in one trace), `stepsim\n"
      "# run` the base alone{}.\n{}\n",
      which_line(sc.spec, r, choice), command, lines,
      task ? "; `stepsim job` runs the search's task with each, failures and saves drawn" : "", out.c_str());
}

}  // namespace stepsim::cli
