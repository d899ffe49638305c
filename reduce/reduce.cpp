#include "reduce/reduce.hpp"

#include <algorithm>
#include <stdexcept>

namespace ks::reduce {

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> t{DType::I32, DType::I64, DType::F32, DType::F64};
  return t;
}

std::string to_string(DType t) {
  switch (t) {
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::F32: return "float";
    case DType::F64: return "double";
  }
  return "?";
}

std::string to_string(Op op) { return op == Op::Sum ? "sum" : "sumsq"; }

DType parse_dtype(const std::string& s) {
  for (DType t : all_dtypes())
    if (to_string(t) == s) return t;
  throw std::invalid_argument("unknown type '" + s + "' (valid: int32, int64, float, double)");
}

Op parse_op(const std::string& s) {
  if (s == "sum") return Op::Sum;
  if (s == "sumsq") return Op::SumSquares;
  throw std::invalid_argument("unknown operation '" + s + "' (valid: sum, sumsq)");
}

std::size_t size_of(DType t) { return t == DType::I32 || t == DType::F32 ? 4 : 8; }
std::size_t result_size(DType t) { return t == DType::F32 ? 4 : 8; }

ReduceRegistry& registry() {
  static ReduceRegistry r("reduce");
  return r;
}

bool ReduceVariant::takes_integral(DType t) const {
  return integral && std::find(integral_types.begin(), integral_types.end(), t) != integral_types.end();
}

bool ReduceVariant::takes_block(int block) const {
  return block_sizes.empty() || std::find(block_sizes.begin(), block_sizes.end(), block) != block_sizes.end();
}

std::string ReduceVariant::block_sizes_text() const {
  if (block_sizes.empty()) return "its own";
  std::string s;
  for (std::size_t i = 0; i < block_sizes.size(); ++i)
    s += (i == 0 ? "" : i + 1 == block_sizes.size() ? " or " : ", ") + std::to_string(block_sizes[i]);
  return s;
}

namespace {
void check_block(const ReduceVariant& v, int block) {
  if (!v.takes_block(block))
    throw std::invalid_argument("reduction '" + v.info.name + "': block size " + std::to_string(block) +
                                " not supported (" + v.block_sizes_text() + ")");
}
}  // namespace

void run(const ReduceVariant& v, const ReduceCall& c, ExecContext& ctx) {
  const std::string who = "reduction '" + v.info.name + "': ";
  if (c.n == 0) throw std::invalid_argument(who + "n must be >= 1");
  if (!c.in || !c.out) throw std::invalid_argument(who + "null pointer");
  check_block(v, c.block_size);
  ctx.begin_launch();
  v.launch(c, ctx);
}

void run_integral(const ReduceVariant& v, const IntegralCall& c, ExecContext& ctx) {
  const std::string who = "integral '" + v.info.name + "': ";
  if (!v.takes_integral(c.dtype))
    throw std::invalid_argument(who + "this variant does not take the integral in " + to_string(c.dtype));
  if (c.n < 1) throw std::invalid_argument(who + "n must be >= 1");
  if (!c.out) throw std::invalid_argument(who + "null pointer");
  check_block(v, c.block_size);
  ctx.begin_launch();
  v.integral(c, ctx);
}

}  // namespace ks::reduce
