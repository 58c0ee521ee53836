#pragma once
// What yaml-cpp's loader lets through silently: a key given twice in one map (the first would
// win) and a second document after `---` (it would be ignored). Both are refused as InputError.
#include <string>

namespace stepsim::cli {

// Reads `text` as YAML events (aliases are not expanded, so a billion-laughs document costs
// nothing here) and throws InputError(file, line, key, ...) at the first duplicate key or second
// document. Keys are reported below `prefix` ("" for a file, the dotted key for a --set value).
// Call it after the text has loaded: syntax errors are the loader's to report.
void check_yaml_shape(const std::string& text, const std::string& file, const std::string& prefix = "");

}  // namespace stepsim::cli
