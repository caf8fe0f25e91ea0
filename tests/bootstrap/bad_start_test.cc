// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Starting jobs through the tcp bootstrap, good and bad, as separate processes of
// tca_bootstrap_probe with the environment each case gives them: tca's and torchrun's variables,
// a rank that never comes, another job's key, a rank number twice, sizes that disagree, a rank
// out of range, a port in use, an unreachable root, variables set in part, bootstraps this build
// lacks. Every bad start must fail with its error and a message that says what went wrong, within
// the timeout it was given, and must not disturb the ranks that started right.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tca/tca.h"

namespace {

using Environment = std::vector<std::pair<std::string, std::string>>;
using Clock = std::chrono::steady_clock;

// Variables a case starts without (the test itself may run under any launcher).
const char* const kCleared[] = {
    "TCA_RANK", "TCA_SIZE",   "TCA_ROOT",       "TCA_JOB_KEY", "TCA_BOOTSTRAP",
    "RANK",     "WORLD_SIZE", "MASTER_ADDR",    "MASTER_PORT", "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE", "PMI_RANK",   "PMIX_NAMESPACE", "PMIX_RANK",   "TCA_HOST_ID"};

struct Outcome {
  int status = -1;  // exit status; 128 + signal where killed
  std::string output;
  double seconds = 0;
};

class Process {
 public:
  explicit Process(const Environment& environment) : started_(Clock::now()) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      for (const char* name : kCleared) unsetenv(name);
      for (const auto& [name, value] : environment) setenv(name.c_str(), value.c_str(), 1);
      execl(TCA_BOOTSTRAP_PROBE, TCA_BOOTSTRAP_PROBE, static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    out_ = fds[0];
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() {
    if (pid_ > 0 && !done_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
  }

  // Whether it has ended (then reaped).
  bool ended() {
    if (!done_ && waitpid(pid_, &status_, WNOHANG) == pid_) done_ = true;
    return done_;
  }

  // Waits up to `seconds`; a process still running then is killed and reported as such.
  Outcome wait(double seconds) {
    Outcome outcome;
    while (!ended()) {
      if (std::chrono::duration<double>(Clock::now() - started_).count() > seconds) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status_, 0);
        done_ = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const int status = status_;
    outcome.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    char buffer[4096];
    ssize_t got = 0;
    while ((got = read(out_, buffer, sizeof buffer)) > 0) outcome.output.append(buffer, got);
    return outcome;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  bool done_ = false;
  int status_ = 0;
  Clock::time_point started_;
};

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

int failed_with(tcaResult result) { return 10 + static_cast<int>(result); }

class BadStart : public ::testing::Test {
 protected:
  // A rank's environment with tca's variables (timeout in ms).
  Environment rank_env(int rank, int size, const std::string& key = "job-a", int timeout = 3000) {
    return {{"TCA_RANK", std::to_string(rank)},
            {"TCA_SIZE", std::to_string(size)},
            {"TCA_ROOT", "127.0.0.1:" + std::to_string(port_)},
            {"TCA_JOB_KEY", key},
            {"TCA_TIMEOUT_MS", std::to_string(timeout)}};
  }
  const int port_ = free_port();
};

// Each takes the outcome once (a Process is waited for once).
#define EXPECT_OK_RANK(outcome, text)                                      \
  do {                                                                     \
    const Outcome seen_ = (outcome);                                       \
    EXPECT_EQ(seen_.status, 0) << seen_.output;                            \
    EXPECT_NE(seen_.output.find(text), std::string::npos) << seen_.output; \
  } while (0)

#define EXPECT_FAILED(outcome, code, text)                                 \
  do {                                                                     \
    const Outcome seen_ = (outcome);                                       \
    EXPECT_EQ(seen_.status, failed_with(code)) << seen_.output;            \
    EXPECT_NE(seen_.output.find(text), std::string::npos) << seen_.output; \
  } while (0)

TEST_F(BadStart, AJobOfFourStartsFromTcaVariables) {
  std::vector<std::unique_ptr<Process>> ranks;
  for (int rank = 0; rank < 4; ++rank)
    ranks.push_back(std::make_unique<Process>(rank_env(rank, 4)));
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_OK_RANK(ranks[rank]->wait(20),
                   "ok rank " + std::to_string(rank) + " of 4 bootstrap tcp");
}

TEST_F(BadStart, TorchrunsVariablesStartAJob) {
  std::vector<std::unique_ptr<Process>> ranks;
  for (int rank = 0; rank < 3; ++rank)
    ranks.push_back(
        std::make_unique<Process>(Environment{{"RANK", std::to_string(rank)},
                                              {"WORLD_SIZE", "3"},
                                              {"MASTER_ADDR", "127.0.0.1"},
                                              {"MASTER_PORT", std::to_string(port_ - 1)},
                                              {"TCA_TIMEOUT_MS", "3000"}}));
  for (int rank = 0; rank < 3; ++rank) EXPECT_OK_RANK(ranks[rank]->wait(20), "of 3 bootstrap tcp");
}

TEST_F(BadStart, NoVariablesMakeAJobOfOne) {
  Process alone(Environment{});
  EXPECT_OK_RANK(alone.wait(20), "ok rank 0 of 1 bootstrap single");
}

TEST_F(BadStart, ARankThatNeverComesIsNamedWithinTheTimeout) {
  Process rank0(rank_env(0, 4, "job-a", 1500));
  Process rank1(rank_env(1, 4, "job-a", 1500));
  Process rank3(rank_env(3, 4, "job-a", 1500));
  for (Process* process : {&rank0, &rank1, &rank3}) {
    const Outcome outcome = process->wait(10);
    EXPECT_FAILED(outcome, TCA_ERROR_TIMEOUT, "rank(s) 2 of 4 never joined");
    EXPECT_LT(outcome.seconds, 1.5 + 3.0);
  }
}

TEST_F(BadStart, AnotherJobsKeyIsRefusedAndTheJobGoesOn) {
  Process rank0(rank_env(0, 2));
  Process stray(rank_env(1, 2, "job-b"));
  EXPECT_FAILED(stray.wait(10), TCA_ERROR_INVALID_ARGUMENT, "does not match this job's key");
  Process rank1(rank_env(1, 2));
  EXPECT_OK_RANK(rank1.wait(20), "ok rank 1 of 2");
  EXPECT_OK_RANK(rank0.wait(20), "ok rank 0 of 2");
}

TEST_F(BadStart, ARankNumberTwiceIsRefusedOnce) {
  Process rank0(rank_env(0, 3));
  Process first(rank_env(1, 3));
  Process second(rank_env(1, 3));
  // Whichever came second is refused; then rank 2 completes the job for the other.
  const auto limit = Clock::now() + std::chrono::seconds(10);
  while (!first.ended() && !second.ended() && Clock::now() < limit)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  Process rank2(rank_env(2, 3));
  const Outcome a = first.wait(20);
  const Outcome b = second.wait(20);
  EXPECT_EQ((a.status == 0) + (b.status == 0), 1) << a.output << b.output;
  const Outcome& refused = a.status == 0 ? b : a;
  EXPECT_FAILED(refused, TCA_ERROR_INVALID_ARGUMENT, "rank 1 has already joined");
  EXPECT_OK_RANK(rank2.wait(20), "ok rank 2 of 3");
  EXPECT_OK_RANK(rank0.wait(20), "ok rank 0 of 3");
}

TEST_F(BadStart, SizesThatDisagreeAreRefused) {
  Process rank0(rank_env(0, 2, "job-a", 1500));
  Environment other = rank_env(1, 3, "job-a", 1500);
  Process rank1(other);
  EXPECT_FAILED(rank1.wait(10), TCA_ERROR_INVALID_ARGUMENT, "says the job has 3 ranks");
  const Outcome root = rank0.wait(10);
  EXPECT_FAILED(root, TCA_ERROR_TIMEOUT, "rank(s) 1 of 2 never joined");
  EXPECT_LT(root.seconds, 1.5 + 3.0);
}

TEST_F(BadStart, ARankOutOfRangeFailsAtOnce) {
  Process outside(rank_env(4, 4));
  const Outcome outcome = outside.wait(10);
  EXPECT_FAILED(outcome, TCA_ERROR_INVALID_RANK, "rank 4 is outside a job of 4");
  EXPECT_LT(outcome.seconds, 2.0);
}

TEST_F(BadStart, APortInUseFailsAtOnceNamingIt) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port_));
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  Process root(rank_env(0, 2));
  const Outcome outcome = root.wait(10);
  close(fd);
  EXPECT_FAILED(outcome, TCA_ERROR_TRANSPORT, "is in use");
  EXPECT_LT(outcome.seconds, 2.0);
}

TEST_F(BadStart, AnUnreachableRootTimesOut) {
  Process lonely(rank_env(1, 2, "job-a", 1000));
  const Outcome outcome = lonely.wait(10);
  EXPECT_FAILED(outcome, TCA_ERROR_TIMEOUT, "could not be reached");
  EXPECT_LT(outcome.seconds, 1.0 + 3.0);
}

TEST_F(BadStart, VariablesSetInPartAreNamed) {
  Process partial(Environment{{"TCA_RANK", "0"}});
  EXPECT_FAILED(partial.wait(10), TCA_ERROR_INVALID_ARGUMENT, "TCA_SIZE");
  Process torchrun(Environment{{"RANK", "0"}, {"WORLD_SIZE", "2"}});
  EXPECT_FAILED(torchrun.wait(10), TCA_ERROR_INVALID_ARGUMENT, "MASTER_ADDR MASTER_PORT");
}

TEST_F(BadStart, ABootstrapThisBuildLacksIsRefused) {
#ifndef TCA_TESTS_PMIX
  Process pmix(Environment{{"TCA_BOOTSTRAP", "pmix"}});
  EXPECT_FAILED(pmix.wait(10), TCA_ERROR_UNSUPPORTED, "without PMIx");
#endif
#ifndef TCA_TESTS_MPI
  Process mpi(Environment{{"TCA_BOOTSTRAP", "mpi"}});
  EXPECT_FAILED(mpi.wait(10), TCA_ERROR_UNSUPPORTED, "without MPI");
#endif
  Process bad(Environment{{"TCA_BOOTSTRAP", "carrier-pigeon"}});
  EXPECT_FAILED(bad.wait(10), TCA_ERROR_INVALID_ARGUMENT, "auto|mpi|pmix|tcp|single");
}

}  // namespace
