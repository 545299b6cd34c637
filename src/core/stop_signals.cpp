#include "src/core/stop_signals.hpp"

#include <csignal>

namespace intact {

namespace {

volatile std::sig_atomic_t g_received = 0;
struct sigaction g_previous_term;
struct sigaction g_previous_usr1;

extern "C" void record_stop_signal(int signal) {
    g_received = signal;
}

} // namespace

StopSignals::StopSignals() {
    g_received = 0;
    struct sigaction action = {};
    action.sa_handler = record_stop_signal;
    sigemptyset(&action.sa_mask);
    // Not one-shot: under Slurm a rank may get the same SIGTERM more than once (from slurmd and again
    // through srun or the batch script), and each must only ask for the stop. SA_RESTART: system calls
    // (MPI, file writes) carry on instead of failing with EINTR.
    action.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &action, &g_previous_term);
    sigaction(SIGUSR1, &action, &g_previous_usr1);
}

StopSignals::~StopSignals() {
    sigaction(SIGTERM, &g_previous_term, nullptr);
    sigaction(SIGUSR1, &g_previous_usr1, nullptr);
    // A request is caught while the object lives and ends with it: a later Simulation in the same process
    // (a test, a library user's second run) must not stop on it.
    g_received = 0;
}

int StopSignals::received() {
    return g_received;
}

const char* StopSignals::name(int signal) {
    switch (signal) {
    case SIGTERM:
        return "SIGTERM";
    case SIGUSR1:
        return "SIGUSR1";
    default:
        return "a signal";
    }
}

} // namespace intact
