// The operands' distribution spec (`--operands`, `--dist`): its text form and its parser. A source of its own so
// that the parser's fuzz target (tests/fuzz/lists.cpp) builds without problem.cpp's Eigen reference products,
// which took 42 of the target's 47 s to compile under the sanitizers.
#include "gemm/host/problem.hpp"

#include <cmath>
#include <cctype>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ks::gemm {

std::string Operands::str() const {
  std::ostringstream os;
  if (kind == Kind::NaN) return "nan";
  if (kind == Kind::Exp) {
    os << "exp:" << phi;
  } else {
    os << "uniform";
  }
  if (pow2 > 0) os << ",pow2:" << pow2;
  return os.str();
}

namespace {

// The whole of `text` as a number, or why not.
double parse_number(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isfinite(v) || std::isspace(static_cast<unsigned char>(text[0])))
    throw std::invalid_argument(what + " '" + text + "' is not a number");
  return v;
}

}  // namespace

Operands parse_operands(const std::string& text) {
  const std::string usage = " (want uniform or exp:PHI, optionally followed by ,pow2:S)";
  Operands o;
  const std::size_t comma = text.find(',');
  const std::string head = text.substr(0, comma);
  if (head == "uniform") {
    o.kind = Operands::Kind::Uniform;
  } else if (head.rfind("exp:", 0) == 0) {
    o.kind = Operands::Kind::Exp;
    o.phi = parse_number(head.substr(4), "distribution exp: PHI");
    if (!(o.phi >= 0 && o.phi <= 8))
      throw std::invalid_argument("distribution exp: PHI " + head.substr(4) + " is outside [0, 8]");
  } else {
    throw std::invalid_argument("unknown distribution '" + head + "'" + usage);
  }
  if (comma != std::string::npos) {
    const std::string tail = text.substr(comma + 1);
    if (tail.rfind("pow2:", 0) != 0) throw std::invalid_argument("unknown distribution option '" + tail + "'" + usage);
    const double s = parse_number(tail.substr(5), "distribution pow2: S");
    if (!(s >= 0 && s <= Operands::kMaxPow2) || s != std::floor(s))
      throw std::invalid_argument("distribution pow2: S " + tail.substr(5) + " is not a whole number in [0, " +
                                  std::to_string(Operands::kMaxPow2) + "]");
    o.pow2 = static_cast<int>(s);
  }
  return o;
}

}  // namespace ks::gemm
