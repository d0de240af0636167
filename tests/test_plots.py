"""Every figure of the command line renders to a file, with the parts that make it worth
looking at (exact curves, the critical point, an error panel on a log axis, a linear guide,
measured peers, a published law labelled as such).  The rows are made up here: the
figures' contents, not the models, are under test."""
import math

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from tenpy_ad import blowup, plots   # noqa: E402 - after the skip
from tenpy_ad.models import onsager  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"
TRG_PANELS = [("u", "energy per site u", onsager.energy, "Onsager"),
              ("c", "specific heat per site c", onsager.specific_heat, "Onsager")]
CTMRG_PANELS = [("u", "energy per site u", onsager.energy, "Onsager"),
                ("m", "magnetization |m|", onsager.magnetization, "Yang")]


def made_up_rows(betas, with_m=False):
    rows = []
    for i, beta in enumerate(betas):
        row = {"beta": beta, "lnz_exact": onsager.lnz(beta), "u_exact": onsager.energy(beta),
               "c_exact": onsager.specific_heat(beta)}
        row.update(lnz=row["lnz_exact"] + 1e-9 * i, u=row["u_exact"] - 1e-6,
                   c=2.5 if math.isinf(row["c_exact"]) else row["c_exact"] * 1.01)
        if with_m:
            row.update(m_exact=onsager.magnetization(beta), m=onsager.magnetization(beta))
        rows.append(row)
    return rows


def legend_texts(ax):
    return [text.get_text() for text in ax.get_legend().get_texts()]


def test_sweep_figure(tmp_path):
    path = tmp_path / "sweep.png"
    rows = made_up_rows(np.linspace(0.3, 0.6, 7).tolist() + [onsager.BETA_C])
    fig = plots.observables_figure(path, rows, title="TRG: χ = 16, 20 steps", label="TRG",
                                   panels=TRG_PANELS,
                                   errors=[("lnz", "lnZ/N"), ("u", "u"), ("c", "c")])
    assert path.read_bytes()[:8] == PNG
    *panels, errors = fig.axes
    assert len(panels) == 2 and "χ = 16" in fig.get_suptitle()
    assert errors.get_yscale() == "log"
    assert set(legend_texts(errors)) == {"lnZ/N", "u", "c (none at β_c: exact ∞)"}
    for ax in fig.axes:                                    # beta_c marked in every panel
        assert any(list(line.get_xdata()) == [onsager.BETA_C] * 2 for line in ax.lines)
    assert "Onsager" in legend_texts(panels[0])


def test_a_diverging_exact_value_is_not_drawn_as_agreement(tmp_path):
    """At beta_c Onsager's c is infinite: the exact curve rises off the top of an axis the
    data set (the TRG value 2.5 is not its end), its label says it is infinite there, and
    the error panel shows no error at beta_c, saying why."""
    rows = made_up_rows([0.39, 0.41, 0.43, onsager.BETA_C, 0.45, 0.47, 0.49])
    requested = rows[3]
    fig = plots.observables_figure(tmp_path / "c.png", rows, requested=requested,
                                   title="TRG", label="TRG", panels=TRG_PANELS,
                                   errors=[("u", "u"), ("c", "c")])
    heat, errors = fig.axes[1], fig.axes[2]
    exact_curve = heat.lines[0]
    low, top = heat.get_ylim()
    assert top > 2.5 + 0.3 * (2.5 - low)                   # room above the TRG value
    assert np.nanmax(exact_curve.get_ydata()) > top         # the curve leaves the axis
    assert "Onsager (∞ at β_c)" in legend_texts(heat)
    assert any("→ ∞ at β_c" in text.get_text() for text in heat.texts)
    assert "c (none at β_c: exact ∞)" in legend_texts(errors)
    error_betas = [line for line in errors.lines if line.get_label().startswith("c")][0]
    assert onsager.BETA_C not in list(error_betas.get_xdata())


def test_a_missing_value_breaks_the_error_line(tmp_path):
    rows = made_up_rows([0.3, 0.35, 0.4, 0.5])
    rows[2]["c"] = math.nan                                 # a solve that did not converge
    fig = plots.observables_figure(tmp_path / "gap.png", rows, title="CTMRG", label="CTMRG",
                                   panels=TRG_PANELS[:1], errors=[("c", "c")])
    (line,) = [line for line in fig.axes[-1].lines if line.get_label().startswith("c")]
    assert line.get_label() == "c (gaps: no value)"
    assert np.isnan(line.get_ydata()[2]) and np.isfinite(line.get_ydata()[3])


def test_single_run_figure_highlights_the_requested_beta(tmp_path):
    path = tmp_path / "single.pdf"
    rows = made_up_rows([0.55, 0.58, 0.6, 0.62, 0.65], with_m=True)
    fig = plots.observables_figure(path, rows, requested=rows[2], title="CTMRG: χ = 32",
                                   label="CTMRG", panels=CTMRG_PANELS,
                                   errors=[("lnz", "lnZ/N"), ("u", "u"), ("m", "|m|")])
    assert path.read_bytes()[:4] == b"%PDF"
    assert any("requested" in text for text in legend_texts(fig.axes[0]))
    assert "Yang" in legend_texts(fig.axes[1])
    low, high = fig.axes[0].get_xlim()
    assert low < 0.55 and high > 0.65 and not low <= onsager.BETA_C <= high


def test_blowup_figure_with_a_peer_and_the_published_law(tmp_path):
    path = tmp_path / "blowup.png"
    depths = [10, 25, 50, 100, 200]
    rows = [{"depth": n, "grad_ms": 0.02 * n} for n in depths]
    peers = [("JAX make_jaxpr(grad) (measured)", depths, [2.0 * n for n in depths])]
    published = (*blowup.TENFERRO["mul"], blowup.TENFERRO_SOURCE)
    fig = plots.blowup_figure(path, "mul", rows, peers, published)
    assert path.read_bytes()[:8] == PNG
    (ax,) = fig.axes
    assert ax.get_xscale() == ax.get_yscale() == "log"
    texts = legend_texts(ax)
    assert "∝ n (linear guide)" in texts and peers[0][0] in texts
    assert sum("published" in text and "M2 Max" in text for text in texts) == 2


def test_blowup_plot_of_a_chain_without_a_published_law(tmp_path):
    path = tmp_path / "ladder.svg"
    rows = [{"depth": n, "grad_ms": 0.01 * n} for n in (10, 25)]
    blowup.plot(path, "ladder", rows)
    assert b"<svg" in path.read_bytes()[:400]
