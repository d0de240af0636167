"""Models written once for every mode: the benchmark chains, TRG and CTMRG for the 2D
Ising model (with its exact solution, onsager), and the variational C4v iPEPS toolkit
(peps: CTMRG environments as gauge-fixed fixed points, spin models, energies; peps_cell:
rectangular unit cells of general tensors with the directional CTMRG; peps_cylinder:
an exact infinite-cylinder reference for single-site iPEPS, sharing no code with CTMRG)."""
