#include "common/registry.hpp"

#include <cctype>

namespace ks {

LadderPlace ladder_place(std::string_view path, std::string_view family) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/' || path[i] == '\\') {
      if (i > start) parts.push_back(path.substr(start, i - start));
      start = i + 1;
    }
  }
  LadderPlace p;
  std::size_t fam = parts.size();
  for (std::size_t i = parts.size(); i-- > 0;)
    if (parts[i] == family) {
      fam = i;
      break;
    }
  if (fam + 1 >= parts.size()) {  // not under a folder named `family`: keep the path as given
    p.file = std::string(path);
    return p;
  }
  for (std::size_t i = fam; i < parts.size(); ++i) {
    if (i > fam) p.file += '/';
    p.file.append(parts[i]);
  }
  const std::string_view entry = parts[fam + 1];
  p.entry = std::string(family) + "/" + std::string(entry);
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  if (entry.size() > 3 && digit(entry[0]) && digit(entry[1]) && entry[2] == '_')
    p.step = (entry[0] - '0') * 10 + (entry[1] - '0');
  return p;
}

}  // namespace ks
