#include "common/json.hpp"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace ks::json {

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

void Writer::prefix(std::string_view key) {
  if (!first_.empty()) {
    if (!first_.back()) os_ << ',';
    first_.back() = false;
    os_ << '\n' << std::string(static_cast<std::size_t>(indent_) * first_.size(), ' ');
  }
  if (!key.empty()) os_ << '"' << escape(key) << "\": ";
}

Writer& Writer::begin_object(std::string_view key) {
  prefix(key);
  os_ << '{';
  first_.push_back(true);
  return *this;
}

Writer& Writer::begin_array(std::string_view key) {
  prefix(key);
  os_ << '[';
  first_.push_back(true);
  return *this;
}

Writer& Writer::end_object() {
  if (first_.empty()) throw std::logic_error("json::Writer: end_object without begin");
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) os_ << '\n' << std::string(static_cast<std::size_t>(indent_) * first_.size(), ' ');
  os_ << '}';
  if (first_.empty()) os_ << '\n';
  return *this;
}

Writer& Writer::end_array() {
  if (first_.empty()) throw std::logic_error("json::Writer: end_array without begin");
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) os_ << '\n' << std::string(static_cast<std::size_t>(indent_) * first_.size(), ' ');
  os_ << ']';
  return *this;
}

Writer& Writer::value(std::string_view key, std::string_view v) {
  prefix(key);
  os_ << '"' << escape(v) << '"';
  return *this;
}

Writer& Writer::value(std::string_view key, double v) {
  prefix(key);
  if (std::isfinite(v)) {
    std::ostringstream tmp;
    tmp << std::setprecision(std::numeric_limits<double>::max_digits10) << v;
    os_ << tmp.str();
  } else {
    os_ << "null";
  }
  return *this;
}

Writer& Writer::value(std::string_view key, std::int64_t v) {
  prefix(key);
  os_ << v;
  return *this;
}

Writer& Writer::value(std::string_view key, std::uint64_t v) {
  prefix(key);
  os_ << v;
  return *this;
}

Writer& Writer::value(std::string_view key, bool v) {
  prefix(key);
  os_ << (v ? "true" : "false");
  return *this;
}

}  // namespace ks::json
