// A small command line parser: `--name value`, `--name=value` and flags, with
// the usage text generated from the same declarations so the two never drift.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tcgemm::cli {

class ArgParser {
 public:
  ArgParser(std::string command, std::string summary);

  void add_flag(const std::string& name, const std::string& help);
  // `metavar` names the value in the usage text ("FILE", "MxNxK").
  void add_option(const std::string& name, const std::string& metavar, const std::string& help,
                  bool repeatable = false);
  // Free text printed after the option list (suites, pass criteria, ...).
  void add_epilog(const std::string& text) { epilog_ += text; }

  // Parses the words after the subcommand. Returns false and sets `error` on
  // an unknown option, a missing value, a repeated single option or any
  // positional word: a typo must not silently run the default.
  bool parse(int argc, const char* const* argv, std::string& error);

  bool help_requested() const { return help_; }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  // The (last) value of an option, or `fallback` when it was not given.
  std::string get(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> get_all(const std::string& name) const;

  std::string usage() const;
  const std::string& command() const { return command_; }

 private:
  struct Spec {
    std::string name, metavar, help;
    bool takes_value = false;
    bool repeatable = false;
  };
  const Spec* find(const std::string& name) const;

  std::string command_, summary_, epilog_;
  std::vector<Spec> specs_;
  std::map<std::string, std::vector<std::string>> values_;
  bool help_ = false;
};

}  // namespace tcgemm::cli
