#pragma once
/// @file stop_signals.hpp
/// @brief SIGTERM and SIGUSR1 as requests to stop after the current time step (with a checkpoint).
///
/// Slurm sends SIGTERM at a job's time limit (and SIGKILL `KillWait` seconds later), and the signal
/// chosen with `sbatch --signal=[B:]USR1@<seconds>` that many seconds before it. While a StopSignals
/// object lives, either signal only sets a flag (repeats too: Slurm may deliver SIGTERM to a rank both
/// directly and through srun); the simulation polls it after each step, agrees on it over all ranks (any
/// rank that saw one counts), writes a checkpoint and returns. To end a run at once, send SIGINT or
/// SIGKILL. The previous dispositions come back when the object is destroyed. Host, process-wide.

namespace intact {

class StopSignals {
public:
    StopSignals();
    ~StopSignals();
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

    /// The signal that arrived since construction (SIGTERM or SIGUSR1), or 0. Local (not collective).
    static int received();
    /// "SIGTERM", "SIGUSR1", or "a signal".
    static const char* name(int signal);
};

} // namespace intact
