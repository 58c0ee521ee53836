#include "cli/reports/search_export.hpp"

#include <filesystem>
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

// A duration the job reader reads back exactly: in the largest unit that divides it.
std::string exact_duration(Time t) {
  if (t == 0) return "0s";
  for (const auto& [unit, ns] : {std::pair<const char*, Time>{"d", 86400 * kSecond},
                                 {"h", 3600 * kSecond},
                                 {"min", 60 * kSecond},
                                 {"s", kSecond},
                                 {"ms", kMillisecond},
                                 {"us", kMicrosecond}})
    if (t % ns == 0) return fmt::format("{}{}", t / ns, unit);
  return fmt::format("{}ns", t);
}

// The search's task as a `job:` section of the layout's whole runs: its tokens, deadline and
// reserved days, failures, and saves at the interval the search charged (the task's, else
// Young's optimum at the layout's cards), or free ones after every step where it charged none.
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
    out << YAML::Key << "every" << YAML::Value << exact_duration(every);
    out << YAML::Key << "storage" << YAML::Value << fmt::format("{}B/s", k.storage_bandwidth);
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

// The layout `choice` names in `r`, and how the header and the name say which it is.
struct Chosen {
  const Evaluated* e = nullptr;
  std::string which, suffix;
};

Chosen choose(const SearchSpec& spec, const SearchResult& r, const ExportChoice& choice) {
  if (choice.cards > 0) {
    std::vector<std::string> counts;
    for (const PerCards& p : r.per_cards) {
      if (p.cards == choice.cards) {
        if (!p.best) throw InputError("--cards", 0, "", fmt::format("no layout at {} cards: {}", p.cards, p.why));
        return {&*p.best, fmt::format("The best layout at {} cards (the per-card table)", p.cards),
                fmt::format("{}-cards", p.cards)};
      }
      counts.push_back(std::to_string(p.cards));
    }
    throw InputError("--cards", 0, "",
                     fmt::format("{} is not a card count searched ({})", choice.cards, fmt::join(counts, ", ")));
  }
  if (r.top.empty()) throw InputError("--export", 0, "", "no layout fits: nothing written");
  if (choice.pick < 1 || static_cast<std::size_t>(choice.pick) > r.top.size())
    throw InputError("--pick", 0, "",
                     fmt::format("{} is not one of the {} layouts listed (1 to {}; --top lists more)", choice.pick,
                                 r.top.size(), r.top.size()));
  return {&r.top[static_cast<std::size_t>(choice.pick - 1)],
          fmt::format("Layout {} of the {} listed (rank: {})", choice.pick, r.top.size(), search_rank_name(spec.rank)),
          std::to_string(choice.pick)};
}

}  // namespace

std::string search_layout_scenario(const SearchScenario& sc, const std::vector<std::string>& sets,
                                   const SearchResult& r, const ExportChoice& choice, const std::string& out_path) {
  const Chosen chosen = choose(sc.spec, r, choice);
  const Evaluated& e = *chosen.e;
  YAML::Node hardware = section_copy(sc, "hardware", out_path);
  hardware["gpus"] = e.c.cards;
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << fmt::format("{}-{}", sc.name, chosen.suffix);
  out << YAML::Key << "description" << YAML::Value << layout_label(e.c);
  out << YAML::Key << "job_step" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "model" << YAML::Value << YAML::Flow << section_copy(sc, "model", out_path);
  out << YAML::Key << "hardware" << YAML::Value << YAML::Flow << hardware;
  out << YAML::Key << "layout" << YAML::Value << YAML::Flow << YAML::Load(format_layout_yaml(e.c.layout));
  if (const YAML::Node wait = sc.source->root["search"]["input_wait"]; wait.IsDefined())
    out << YAML::Key << "input_wait" << YAML::Value << YAML::Clone(wait);
  out << YAML::EndMap;
  if (sc.spec.task.tokens > 0) emit_job(out, sc.spec, e.c.cards);
  out << YAML::EndMap;
  std::string command = "stepsim search " + sc.file;
  for (const auto& set : sets) command += fmt::format(" --set '{}'", set);
  return fmt::format(
      "# {} of\n#   {}\n"
      "# {:.3f} s a step, {:.1f} GiB per GPU at the simulated peak. `stepsim run` simulates it alone (with\n"
      "# --trace or --html){}.\n{}\n",
      chosen.which, command, to_s(e.step), static_cast<double>(e.memory.total()) / (1 << 30),
      sc.spec.task.tokens > 0 ? "; `stepsim job` runs the search's task with it, failures and saves drawn"
                              : "; a `job:` section beside it would run whole training runs of it",
      out.c_str());
}

}  // namespace stepsim::cli
