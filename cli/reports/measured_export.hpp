#pragma once
// `stepsim check-against FILES --export OUT.yaml --rows 16,17`: rows of measured runs written as a
// job_step scenario (each row's model, cluster and layout, at the calibration check-against
// predicted it with), which `stepsim run` simulates to the same step, to the nanosecond, and which
// `--trace`, `--html` and `compare` then take further; several, the others as its variants.
#include <string>
#include <vector>

#include "cli/input/validation_csv.hpp"

namespace stepsim::cli {

// A row as check-against predicted it.
struct PredictedRow {
  const MeasuredRun* row = nullptr;
  Efficiency efficiency;  // the calibration of its accelerator
  double predicted = 0;   // its metric
  Time step = 0;          // the simulated step
  Bytes memory = 0, usable = 0;
};

// The rows `selectors` name among `rows` (read from `files`, in that order): "LINE" (with one
// file given) or "FILE:LINE", FILE the path as given, its name, or its name without ".csv".
// Throws InputError at --rows for a selector that names no row, a row named twice.
std::vector<std::size_t> select_rows(const std::vector<MeasuredRun>& rows, const std::vector<std::string>& files,
                                     const std::vector<std::string>& selectors);

// The scenario text: the first row the step, the others `variants:` (each the keys where it
// differs); `command` is the check-against command line, `calibration` a line per accelerator
// saying where its efficiencies come from. Throws InputError at --rows where a row cannot be laid
// over the first (a variant cannot take away the first's experts or latent attention).
std::string measured_rows_scenario(const std::vector<PredictedRow>& rows, const std::string& command,
                                   const std::vector<std::string>& calibration);

}  // namespace stepsim::cli
