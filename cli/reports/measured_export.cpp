#include "cli/reports/measured_export.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "cli/input/input.hpp"
#include "cli/input/job_step_yaml.hpp"

namespace stepsim::cli {

namespace {

namespace fs = std::filesystem;

// "megatron_sc21" for validation/megatron_sc21.csv: a row's variant is that and its line.
std::string stem(const std::string& file) { return fs::path(file).stem().string(); }

// The given file a selector's FILE names: the path as given, its name, or its stem.
const std::string* file_named(const std::vector<std::string>& files, const std::string& name) {
  for (const auto& f : files)
    if (f == name || fs::path(f).filename().string() == name || stem(f) == name) return &f;
  return nullptr;
}

std::string variant_name(const MeasuredRun& r) { return fmt::format("{}-{}", stem(r.file), r.line); }

// "measured 140 TFLOP/s, predicted 154 (+10.0%), a step of 14.671 s".
std::string measured_and_predicted(const PredictedRow& p) {
  const MeasuredRun& r = *p.row;
  return fmt::format("measured {:.4g} {}, predicted {:.4g} ({:+.1f}%), a step of {:.3f} s{}", r.value,
                     metric_unit(r.metric), p.predicted, 100 * (p.predicted / r.value - 1), to_s(p.step),
                     r.fit ? " (a row the calibration is fitted on)" : "");
}

}  // namespace

std::vector<std::size_t> select_rows(const std::vector<MeasuredRun>& rows, const std::vector<std::string>& files,
                                     const std::vector<std::string>& selectors) {
  std::vector<std::size_t> out;
  for (const std::string& sel : selectors) {
    const auto colon = sel.rfind(':');
    const std::string name = colon == std::string::npos ? "" : sel.substr(0, colon);
    const std::string number = colon == std::string::npos ? sel : sel.substr(colon + 1);
    const std::string* file = nullptr;
    if (colon == std::string::npos) {
      if (files.size() > 1)
        throw InputError("--rows", 0, "",
                         fmt::format("{}: name its file, e.g. {}:{} (several files are given)", sel,
                                     fs::path(files.front()).filename().string(), sel));
      file = &files.front();
    } else if (!(file = file_named(files, name))) {
      throw InputError("--rows", 0, "",
                       fmt::format("{}: '{}' is none of the files given ({})", sel, name, fmt::join(files, ", ")));
    }
    // LINE, FIRST-LAST (the rows between, both rows of the file) or `all`.
    std::vector<std::size_t> of_file;  // the file's rows, in line order
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i].file == *file) of_file.push_back(i);
    const auto row_at = [&](const std::string& text) -> std::optional<std::size_t> {
      if (text.empty() || text.size() > 8 ||
          !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
      const int line = std::stoi(text);
      for (const std::size_t i : of_file)
        if (rows[i].line == line) return i;
      return std::nullopt;
    };
    const auto dash = number.find('-');
    const auto first = number == "all" ? std::optional(of_file.front()) : row_at(number.substr(0, dash));
    const auto last = number == "all"             ? std::optional(of_file.back())
                      : dash == std::string::npos ? first
                                                  : row_at(number.substr(dash + 1));
    if (!first || !last || rows[*last].line < rows[*first].line)
      throw InputError(
          "--rows", 0, "",
          fmt::format("{}: {} has no measured row{} '{}' (its rows are on lines {} to {}: name one, a range "
                      "FIRST-LAST or all)",
                      sel, *file, dash == std::string::npos ? " on line" : "s on lines", number,
                      rows[of_file.front()].line, rows[of_file.back()].line));
    for (const std::size_t i : of_file) {
      if (rows[i].line < rows[*first].line || rows[i].line > rows[*last].line) continue;
      if (std::find(out.begin(), out.end(), i) != out.end())
        throw InputError("--rows", 0, "", fmt::format("{}:{} is named twice", *file, rows[i].line));
      out.push_back(i);
    }
  }
  return out;
}

std::string measured_rows_scenario(const std::vector<PredictedRow>& rows, const std::string& command,
                                   const std::vector<std::string>& calibration) {
  const PredictedRow& base = rows.front();
  const JobStepSpec& b = base.row->spec;
  const std::int64_t base_gpus = b.layout.ranks();
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (const auto lost = model_keys_lost_over(rows[i].row->spec.model, b.model); !lost.empty())
      throw InputError("--rows", 0, "",
                       fmt::format("{}:{} has no {} where the first row, {}:{}, has: a variant cannot take keys away; "
                                   "name that row first, or export them apart",
                                   rows[i].row->file, rows[i].row->line, fmt::join(lost, ", "), base.row->file,
                                   base.row->line));
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < rows.size(); ++i)
    lines.push_back(fmt::format("# {}, {}:\n#   {}", i == 0 ? std::string("the base") : variant_name(*rows[i].row),
                                rows[i].row->label, measured_and_predicted(rows[i])));
  YAML::Emitter out;
  out << YAML::BeginMap;
  // The rows' names, up to three; past that the first and how many more (a whole table's).
  std::vector<std::string> names;
  for (const auto& p : rows) names.push_back(variant_name(*p.row));
  if (names.size() > 3) names = {names.front(), fmt::format("and-{}-more", rows.size() - 1)};
  out << YAML::Key << "name" << YAML::Value << fmt::format("check-{}", fmt::join(names, "-"));
  out << YAML::Key << "description" << YAML::Value << base.row->label;
  out << YAML::Key << "job_step" << YAML::Value << YAML::BeginMap;
  JobStepSpec spec = b;
  spec.cluster.accelerator.efficiency = base.efficiency;
  out << YAML::Key << "model" << YAML::Value << YAML::Flow << YAML::Load(format_model_yaml(spec.model));
  out << YAML::Key << "hardware" << YAML::Value << YAML::Flow
      << YAML::Load(format_cluster_yaml(spec.cluster, base_gpus));
  out << YAML::Key << "layout" << YAML::Value << YAML::Flow << YAML::Load(format_layout_yaml(spec.layout));
  if (base.memory > base.usable) {
    // check-against predicts the time of a run as measured, which fit in its GPUs' memory.
    out << YAML::Key << "allow_oom" << YAML::Value << true
        << YAML::Comment(fmt::format("needs {:.1f} of {:.1f} GiB by stepsim's count; the run fit",
                                     static_cast<double>(base.memory) / (1 << 30),
                                     static_cast<double>(base.usable) / (1 << 30)));
  }
  if (rows.size() > 1) {
    out << YAML::Key << "variants" << YAML::Value << YAML::Block << YAML::BeginMap;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      JobStepSpec v = rows[i].row->spec;
      v.cluster.accelerator.efficiency = rows[i].efficiency;
      out << YAML::Key << variant_name(*rows[i].row) << YAML::Value << YAML::Flow << YAML::BeginMap;
      const auto differing = [&out](const char* key, const std::string& map) {
        if (map != "{}") out << YAML::Key << key << YAML::Value << YAML::Load(map);
      };
      differing("model", format_model_yaml_over(v.model, spec.model));
      differing("hardware", format_cluster_yaml_over(v.cluster, v.layout.ranks(), spec.cluster, base_gpus));
      differing("layout", format_layout_yaml_over(v.layout, spec.layout));
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap << YAML::EndMap;
  return fmt::format(
      "# {} measured {} as a job_step scenario, from\n#   {}\n{}\n# at {}.\n"
      "# `stepsim run` simulates the base{} (--trace, --html){}.\n{}\n",
      rows.size() == 1 ? "A" : fmt::format("{}", rows.size()), rows.size() == 1 ? "run" : "runs", command,
      fmt::join(lines, "\n"), fmt::join(calibration, "; "), rows.size() == 1 ? "" : " alone",
      rows.size() == 1 ? "" : ", `stepsim compare` every row side by side", out.c_str());
}

}  // namespace stepsim::cli
