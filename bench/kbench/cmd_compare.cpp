// kbench compare: hands the files to bench/compare.py, found beside this program (the build tree, where the
// build copies the Python tools) or in <prefix>/share/cuda_kernel_suite (installed), under the Python that
// the build found with matplotlib (KS_PYTHON in the environment overrides it).
#include "bench/kbench/commands.hpp"
#include "bench/program.hpp"
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

// The interpreter, checked to be a Python 3 before the tool is handed to it: an exec'd program that is not one
// (KS_PYTHON=/bin/false) would exit without a word.
std::string python() {
  std::string py = "python3";
  const char* env = std::getenv("KS_PYTHON");
  if (env && *env) {
    py = env;
  } else if (const std::string built = KS_PYTHON; !built.empty() && !find_executable(built).empty()) {
    py = built;
  }
  const std::string named = env && *env ? "KS_PYTHON '" + py + "'" : "'" + py + "'";
  if (find_executable(py).empty()) throw std::invalid_argument(named + " is not an executable file or on PATH");
  ProgramOutput version;
  try {
    version = run_program({py, "-c", "import sys; print(sys.version_info[0])"}, true);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(named + " cannot be started: " + e.what());
  }
  if (version.exit_code != 0 || version.out != "3\n")
    throw std::invalid_argument(named + " is not a Python 3 interpreter (asked for its version, it exited " +
                                std::to_string(version.exit_code) + ")");
  return py;
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
