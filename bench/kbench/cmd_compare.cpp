// kbench compare: hands the files to bench/compare.py, found beside this program (the build tree, where the
// build copies the Python tools) or in <prefix>/share/cuda_kernel_suite (installed), under the Python that
// the build found with matplotlib (KS_PYTHON in the environment overrides it).
#include "bench/cli.hpp"
#include "bench/kbench/commands.hpp"
#include "common/build_info.hpp"
#include "common/process.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <sys/stat.h>

namespace ks::bench {
namespace {

std::string find_script(const std::string& name) {
  const std::string dir = self_directory();
  for (const std::string& candidate : {dir + "/" + name, dir + "/../share/cuda_kernel_suite/" + name}) {
    struct stat st{};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return candidate;
  }
  throw std::runtime_error("cannot find " + name + " beside " + dir + " or in " + dir + "/../share/cuda_kernel_suite");
}

std::string python() {
  if (const char* env = std::getenv("KS_PYTHON"); env && *env) return env;
  const std::string built = KS_PYTHON;
  return !built.empty() && !find_executable(built).empty() ? built : "python3";
}

}  // namespace

int compare_command(const std::vector<std::string>& files, const std::string& plots_dir) {
  std::vector<std::string> args{python(), find_script("compare.py")};
  args.insert(args.end(), files.begin(), files.end());
  if (!plots_dir.empty()) {
    args.push_back("--plots");
    args.push_back(plots_dir);
  }
  std::fflush(nullptr);
  exec_program(args);
  std::fprintf(stderr, "kbench: cannot run %s %s: %s\n", args[0].c_str(), args[1].c_str(), std::strerror(errno));
  return cli::kFailure;
}

}  // namespace ks::bench
