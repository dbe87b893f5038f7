"""What collects during a run, driven by the hook: live memory, MPI
calls, optimizer updates."""
