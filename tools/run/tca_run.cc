// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-run: starts N local ranks of a program with the tcp bootstrap's environment (TCA_RANK,
// TCA_SIZE, TCA_ROOT, a fresh TCA_JOB_KEY, TCA_BOOTSTRAP=tcp), forwards SIGINT, SIGTERM and
// SIGHUP to them, and exits with the first failing rank's status after ending the others,
// saying which rank failed. For one machine without MPI or torchrun, and for tests.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  int ranks = 0;
  int hosts_per = 0;          // ranks per fake host (TCA_HOST_ID=block:K), 0: one host
  std::string root;           // host:port, "" picks a free port on 127.0.0.1
  std::string bind = "auto";  // core: rank r on the r-th allowed CPU; none; auto: core if it fits
  std::vector<char*> program;
};

volatile sig_atomic_t g_forward = 0;  // the signal to pass on to the ranks, 0 none

void usage(FILE* to) {
  std::fputs(
      "usage: tca-run -n N [--hosts-per K] [--root HOST:PORT] [--bind-to core|none|auto] [--]\n"
      "               PROGRAM [ARGS...]\n"
      "  starts N ranks of PROGRAM on this machine, found by each other through tca's tcp\n"
      "  bootstrap; --hosts-per K makes every K ranks a host of their own for tca\n"
      "  (TCA_HOST_ID=block:K), so paths between hosts run here too. --bind-to core pins rank r\n"
      "  to the r-th CPU this process may use (auto, the default: where the ranks fit).\n"
      "  Exits with the first failing rank's status and ends the others.\n",
      to);
}

bool parse_positive(const char* text, int* out) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || value < 1 || value > 1000000) return false;
  *out = static_cast<int>(value);
  return true;
}

// Returns 0 on success, else the exit status to leave with.
int parse(int argc, char** argv, Options* options) {
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; ++i) {
    const std::string flag = argv[i];
    if (flag == "--") {
      ++i;
      break;
    }
    if (flag == "-h" || flag == "--help") {
      usage(stdout);
      std::exit(0);
    }
    const bool takes_value =
        flag == "-n" || flag == "--hosts-per" || flag == "--root" || flag == "--bind-to";
    if (!takes_value || i + 1 >= argc) {
      std::fprintf(stderr, "tca-run: %s '%s'\n", takes_value ? "no value after" : "unknown option",
                   flag.c_str());
      usage(stderr);
      return 2;
    }
    const char* value = argv[++i];
    bool ok = true;
    if (flag == "-n") ok = parse_positive(value, &options->ranks);
    if (flag == "--hosts-per") ok = parse_positive(value, &options->hosts_per);
    if (flag == "--root") options->root = value;
    if (flag == "--bind-to") {
      options->bind = value;
      if (options->bind != "core" && options->bind != "none" && options->bind != "auto") {
        std::fprintf(stderr, "tca-run: --bind-to takes core, none or auto, not '%s'\n", value);
        return 2;
      }
    }
    if (!ok) {
      std::fprintf(stderr, "tca-run: %s needs a whole number in [1, 1000000], not '%s'\n",
                   flag.c_str(), value);
      return 2;
    }
  }
  if (options->ranks == 0 || i >= argc) {
    std::fprintf(stderr, "tca-run: %s\n", options->ranks == 0 ? "-n N is required" : "no program");
    usage(stderr);
    return 2;
  }
  options->program.assign(argv + i, argv + argc);
  options->program.push_back(nullptr);
  return 0;
}

// A port no one listens on now, on the loopback interface.
std::string free_root() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    std::fprintf(stderr, "tca-run: cannot find a free port: %s\n", std::strerror(errno));
    std::exit(1);
  }
  close(fd);
  return fmt::format("127.0.0.1:{}", ntohs(address.sin_port));
}

std::string fresh_key() {
  unsigned char bytes[16] = {};
  if (getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    std::fprintf(stderr, "tca-run: getrandom: %s\n", std::strerror(errno));
    std::exit(1);
  }
  std::string key;
  for (unsigned char byte : bytes) key += fmt::format("{:02x}", byte);
  return key;
}

// Pins this process to the rank-th CPU of its affinity mask (wrapping), as mpirun binds ranks to
// cores by default: ranks that poll must not share a core the scheduler picked.
void bind_to_core(const Options& options, int rank) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  const int count = CPU_COUNT(&allowed);
  if (options.bind == "none" || count == 0 || (options.bind == "auto" && options.ranks > count))
    return;
  int seen = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (seen++ == rank % count) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      sched_setaffinity(0, sizeof one, &one);
      return;
    }
  }
}

[[noreturn]] void become_rank(const Options& options, int rank, const std::string& root,
                              const std::string& key) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // no rank outlives tca-run
  bind_to_core(options, rank);
  setenv("TCA_RANK", std::to_string(rank).c_str(), 1);
  setenv("TCA_SIZE", std::to_string(options.ranks).c_str(), 1);
  setenv("TCA_ROOT", root.c_str(), 1);
  setenv("TCA_JOB_KEY", key.c_str(), 1);
  setenv("TCA_BOOTSTRAP", "tcp", 0);  // the caller's choice, where made, stands
  if (options.hosts_per > 0)
    setenv("TCA_HOST_ID", fmt::format("block:{}", options.hosts_per).c_str(), 1);
  execvp(options.program[0], options.program.data());
  std::fprintf(stderr, "tca-run: rank %d cannot start %s: %s\n", rank, options.program[0],
               std::strerror(errno));
  _exit(127);
}

void on_signal(int signal) { g_forward = signal; }

void catch_signals() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal, &action, nullptr);
}

int exit_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string describe(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  return fmt::format("exited with status {}", WEXITSTATUS(status));
}

// Waits for every rank; after the first failure the others get SIGTERM, and SIGKILL 3 s later.
int wait_for_ranks(const Options& options, const std::vector<pid_t>& pids, pid_t group) {
  using Clock = std::chrono::steady_clock;
  int running = options.ranks, result = 0, forwarded = 0;
  bool failed = false, killed = false;
  Clock::time_point ended;
  while (running > 0) {
    if (g_forward != 0) {
      forwarded = g_forward;
      g_forward = 0;
      kill(-group, forwarded);
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      --running;
      const int rank = static_cast<int>(std::find(pids.begin(), pids.end(), pid) - pids.begin());
      if (!failed && exit_status(status) != 0) {
        failed = true;
        result = exit_status(status);
        std::fprintf(stderr, "tca-run: rank %d (pid %d) %s; ending the other %d rank(s)\n", rank,
                     static_cast<int>(pid), describe(status).c_str(), running);
        kill(-group, SIGTERM);
        ended = Clock::now();
      }
      continue;
    }
    if (pid < 0 && errno == ECHILD) break;
    if (failed && !killed && Clock::now() - ended > std::chrono::seconds(3)) {
      kill(-group, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!failed && forwarded != 0) return 128 + forwarded;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (const int status = parse(argc, argv, &options)) return status;
  const std::string root = options.root.empty() ? free_root() : options.root;
  const std::string key = fresh_key();
  catch_signals();
  std::vector<pid_t> pids(options.ranks, 0);
  pid_t group = 0;
  for (int rank = 0; rank < options.ranks; ++rank) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::fprintf(stderr, "tca-run: fork: %s\n", std::strerror(errno));
      if (group > 0) kill(-group, SIGKILL);
      return 1;
    }
    if (pid == 0) {
      setpgid(0, group);
      become_rank(options, rank, root, key);
    }
    setpgid(pid, group);  // also here: no race with the child's own call
    if (group == 0) group = pid;
    pids[rank] = pid;
  }
  return wait_for_ranks(options, pids, group);
}
