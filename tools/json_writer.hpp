// A minimal streaming JSON writer for `tcgemm bench --json`. It tracks where
// commas go so callers write keys and values in order and nothing else;
// non-finite numbers become null because JSON has no NaN.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tcgemm::cli {

class JsonWriter {
 public:
  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }

  // The key of the next member inside an object.
  JsonWriter& key(const std::string& name) {
    separate();
    quote(name);
    out_ += ": ";
    after_key_ = true;
    return *this;
  }

  JsonWriter& value(const std::string& s) { separate(); quote(s); return *this; }
  JsonWriter& value(const char* s) { return value(std::string(s)); }
  JsonWriter& value(bool b) { separate(); out_ += b ? "true" : "false"; return *this; }
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(int64_t v) { separate(); out_ += std::to_string(v); return *this; }
  JsonWriter& value(uint64_t v) { separate(); out_ += std::to_string(v); return *this; }
  JsonWriter& value(double v) {
    separate();
    if (!std::isfinite(v)) {
      out_ += "null";
    } else {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.9g", v);  // enough digits to round-trip a float
      out_ += buf;
    }
    return *this;
  }
  JsonWriter& null() { separate(); out_ += "null"; return *this; }

  template <typename T>
  JsonWriter& member(const std::string& name, const T& v) { key(name); return value(v); }
  JsonWriter& member_array(const std::string& name, const std::vector<double>& values) {
    key(name).begin_array();
    for (double v : values) value(v);
    return end_array();
  }

  const std::string& str() const { return out_; }

 private:
  JsonWriter& open(char c) {
    separate();
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) newline();
    out_ += c;
    return *this;
  }
  // Emits the comma and indentation owed before a new element.
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) out_ += ',';
    first_.back() = false;
    newline();
  }
  void newline() {
    out_ += '\n';
    out_.append(2 * first_.size(), ' ');
  }
  void quote(const std::string& s) {
    out_ += '"';
    for (const char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\t': out_ += "\\t"; break;
        case '\r': out_ += "\\r"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out_ += buf;
          } else {
            out_ += ch;
          }
      }
    }
    out_ += '"';
  }

  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace tcgemm::cli
