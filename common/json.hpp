// A small streaming JSON writer for the suite's own documents (check_cc --json, result context). Keys and
// values are escaped per RFC 8259; non-finite numbers are written as null.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace ks::json {

std::string escape(std::string_view s);

class Writer {
 public:
  explicit Writer(std::ostream& os, int indent = 2) : os_(os), indent_(indent) {}

  Writer& begin_object(std::string_view key = {});
  Writer& end_object();
  Writer& begin_array(std::string_view key = {});
  Writer& end_array();

  Writer& value(std::string_view key, std::string_view v);
  Writer& value(std::string_view key, const char* v) { return value(key, std::string_view(v)); }
  Writer& value(std::string_view key, double v);
  Writer& value(std::string_view key, std::int64_t v);
  Writer& value(std::string_view key, int v) { return value(key, static_cast<std::int64_t>(v)); }
  Writer& value(std::string_view key, std::uint64_t v);
  Writer& value(std::string_view key, bool v);

 private:
  void prefix(std::string_view key);
  std::ostream& os_;
  int indent_;
  std::vector<bool> first_;  // per open container: nothing written yet
};

}  // namespace ks::json
