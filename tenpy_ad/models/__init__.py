"""Models written once for every mode: the benchmark chains and TRG for the 2D Ising model."""
