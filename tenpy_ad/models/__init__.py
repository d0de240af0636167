"""Models written once for every mode: the benchmark chains, and TRG and CTMRG for the 2D
Ising model (with its exact solution, onsager)."""
