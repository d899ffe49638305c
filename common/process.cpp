#include "common/process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace ks {
namespace {

bool executable_file(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const std::string& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// Closes a descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

std::string find_executable(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return executable_file(name) ? name : "";
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + name;
    if (executable_file(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

ProgramOutput run_program(const std::vector<std::string>& argv, bool quiet_stderr) {
  if (argv.empty()) throw std::invalid_argument("run_program: no program");
  const std::string path = find_executable(argv[0]);
  if (path.empty()) throw std::runtime_error("cannot run " + argv[0] + ": not an executable file");
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  Fd read_end{pipe_fds[0]}, write_end{pipe_fds[1]};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.fd, 1);
  if (quiet_stderr) posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&actions, read_end.fd);
  posix_spawn_file_actions_addclose(&actions, write_end.fd);
  pid_t pid = 0;
  std::vector<char*> args = c_argv(argv);
  const int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot run " + path + ": " + std::strerror(rc));
  close(write_end.fd);
  write_end.fd = -1;
  ProgramOutput result;
  char buf[65536];
  for (;;) {
    const ssize_t got = read(read_end.fd, buf, sizeof buf);
    if (got > 0) {
      result.out.append(buf, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  return result;
}

void exec_program(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    errno = EINVAL;
    return;
  }
  const std::string path = find_executable(argv[0]);
  if (path.empty()) {
    errno = ENOENT;
    return;
  }
  std::vector<char*> args = c_argv(argv);
  execv(path.c_str(), args.data());
}

std::string self_executable() {
  char buf[4096];
  const ssize_t len = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (len <= 0) throw std::runtime_error("cannot find this program's own file (/proc/self/exe)");
  return std::string(buf, static_cast<std::size_t>(len));
}

std::string self_directory() {
  const std::string exe = self_executable();
  return exe.substr(0, exe.find_last_of('/'));
}

}  // namespace ks
