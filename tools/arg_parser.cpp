#include "arg_parser.hpp"

#include <algorithm>
#include <utility>

namespace tcgemm::cli {

ArgParser::ArgParser(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

void ArgParser::add_flag(const std::string& name, const std::string& help) {
  specs_.push_back(Spec{name, "", help, false, false});
}

void ArgParser::add_option(const std::string& name, const std::string& metavar, const std::string& help,
                           bool repeatable) {
  specs_.push_back(Spec{name, metavar, help, true, repeatable});
}

const ArgParser::Spec* ArgParser::find(const std::string& name) const {
  for (const Spec& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

bool ArgParser::parse(int argc, const char* const* argv, std::string& error) {
  for (int i = 0; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "-h" || word == "--help") {
      help_ = true;
      continue;
    }
    if (word.rfind("--", 0) != 0 || word.size() == 2) {
      error = "unexpected argument '" + word + "'";
      return false;
    }
    // "--name=value" or "--name [value]".
    const size_t eq = word.find('=');
    const std::string name = word.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const Spec* spec = find(name);
    if (spec == nullptr) {
      error = "unknown option '--" + name + "'";
      return false;
    }
    // The word after an option is its value even when it starts with '-', so
    // "--json -" or a negative number cannot be mistaken for an option.
    std::string value;
    if (spec->takes_value) {
      if (eq != std::string::npos) {
        value = word.substr(eq + 1);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        error = "option '--" + name + "' needs a value (" + spec->metavar + ")";
        return false;
      }
    } else if (eq != std::string::npos) {
      error = "option '--" + name + "' takes no value";
      return false;
    }
    auto& slot = values_[name];
    if (!slot.empty() && !spec->repeatable) {
      error = "option '--" + name + "' given more than once";
      return false;
    }
    slot.push_back(value);
  }
  return true;
}

std::string ArgParser::get(const std::string& name, const std::string& fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() || it->second.empty() ? fallback : it->second.back();
}

std::vector<std::string> ArgParser::get_all(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::string ArgParser::usage() const {
  std::string out = "usage: tcgemm " + command_ + (specs_.empty() ? "" : " [options]") + "\n\n" + summary_ + "\n";
  if (!specs_.empty()) {
    out += "\noptions:\n";
    std::vector<std::string> heads;
    size_t width = 0;
    for (const Spec& s : specs_) {
      heads.push_back("--" + s.name + (s.takes_value ? " " + s.metavar : ""));
      width = std::max(width, heads.back().size());
    }
    heads.push_back("--help");
    width = std::max(width, heads.back().size());
    for (size_t i = 0; i < specs_.size(); ++i)
      out += "  " + heads[i] + std::string(width + 2 - heads[i].size(), ' ') + specs_[i].help +
             (specs_[i].repeatable ? " (repeatable)" : "") + "\n";
    out += "  --help" + std::string(width + 2 - 6, ' ') + "print this message\n";
  }
  if (!epilog_.empty()) out += "\n" + epilog_;
  return out;
}

}  // namespace tcgemm::cli
