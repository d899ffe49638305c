// Running external programs (cuobjdump, python3) from an argument vector, never through a shell: no quoting,
// no word splitting, no command injection, whatever the arguments hold.
#pragma once

#include <string>
#include <vector>

namespace ks {

struct ProgramOutput {
  int exit_code = -1;  // the program's exit status; 128 + N when killed by signal N
  std::string out;     // everything it wrote to standard output
};

// Runs argv[0] with arguments argv[1..] and waits for it. argv[0] without a '/' is looked up on PATH. Standard
// input is /dev/null; standard error is inherited, or discarded when `quiet_stderr`. Throws std::runtime_error
// when the program cannot be started.
ProgramOutput run_program(const std::vector<std::string>& argv, bool quiet_stderr = false);

// Replaces this process by argv[0] (looked up on PATH when it has no '/'); returns only on failure, with
// errno set.
void exec_program(const std::vector<std::string>& argv);

// The path of an executable file: `name` itself when it contains a '/', else the first match on PATH;
// "" when there is none.
std::string find_executable(const std::string& name);

// This program's own file (/proc/self/exe), and the folder it is in.
std::string self_executable();
std::string self_directory();

}  // namespace ks
