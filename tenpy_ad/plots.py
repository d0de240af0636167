"""The command line's figures, drawn with matplotlib (imported on first use; no pyplot, so
no global state and no display are involved).

* :func:`observables_figure` — TRG or CTMRG results over beta beside the exact solution:
  one panel per observable, and the errors on a log axis; the critical point is marked,
  and an exact value that diverges there (Onsager's c) rises off the top of an axis set by
  the data, labelled as infinite at beta_c (no point is drawn against a clipped infinity).
* :func:`blowup_figure` — the traced ``ad.grad`` time against chain depth on log axes, with
  a linear guide line, other engines' measured curves, and a published growth law marked
  as published.
"""
from __future__ import annotations

import math

import numpy as np

from tenpy_ad.models.onsager import BETA_C

#: errors below this are shown at it (double precision's resolution of a number ~1)
ROUNDOFF = 2.0 ** -52


def image_formats() -> set:
    """The file suffixes matplotlib can write (raises ImportError without matplotlib)."""
    from matplotlib.backend_bases import FigureCanvasBase
    return set(FigureCanvasBase.get_supported_filetypes())


def _figure(width: float, height: float):
    from matplotlib.figure import Figure
    return Figure(figsize=(width, height), layout="constrained")


def _finite(value) -> bool:
    return value is not None and math.isfinite(float(value))


def _mark_critical(ax, low: float, high: float) -> None:
    if low <= BETA_C <= high:
        ax.axvline(BETA_C, color="0.55", ls="--", lw=0.9)
        ax.annotate("β_c", (BETA_C, 1.0), xycoords=("data", "axes fraction"),
                    xytext=(3, -12), textcoords="offset points", color="0.4", fontsize=8)


def _beta_range(betas: list) -> tuple:
    low, high = min(betas), max(betas)
    pad = 0.05 * (high - low) if high > low else 0.02
    return max(low - pad, 1e-6), high + pad


def _diverges_in(exact, low: float, high: float) -> bool:
    """Whether ``exact`` is infinite at beta_c and beta_c is in ``[low, high]``."""
    return low <= BETA_C <= high and not math.isfinite(exact(BETA_C))


def _approach(fine: np.ndarray, low: float, high: float) -> np.ndarray:
    """``fine`` with betas closing in on beta_c geometrically from both sides (to 1e-7 of
    the range, beta_c itself left out), so that a divergence is drawn as it rises."""
    offsets = (high - low) * np.logspace(-1, -7, 60)
    near = np.concatenate([BETA_C - offsets, BETA_C + offsets])
    betas = np.concatenate([fine, near[(near > low) & (near < high)]])
    return np.sort(betas[betas != BETA_C])


def _observable_panel(ax, rows, panel, label, requested, low, high) -> str:
    """One observable over beta beside its exact curve; returns where its legend goes.
    An exact value infinite at beta_c (Onsager's c) is drawn rising towards it off the
    top of the axis, which the data (not the curve) sets, and labelled as infinite there:
    no point is compared with a clipped infinite value."""
    key, axis_label, exact, exact_name = panel
    diverges = _diverges_in(exact, low, high)
    fine = np.linspace(low, high, 300)
    fine = _approach(fine, low, high) if diverges else fine
    curve = [exact(b) for b in fine]
    ax.plot(fine, [c if math.isfinite(c) else np.nan for c in curve], "k-", lw=1,
            label=exact_name + (" (∞ at β_c)" if diverges else ""))
    points = [(r["beta"], r[key]) for r in rows if _finite(r.get(key))]
    if points:
        ax.plot(*zip(*points), "o", ms=4, color="C0", label=label)
    if requested is not None and _finite(requested.get(key)):
        ax.plot([requested["beta"]], [requested[key]], "*", ms=13, color="C3",
                label=f"β = {requested['beta']:.6g} (requested)")
    if diverges:
        away = [c for b, c in zip(fine, curve) if abs(b - BETA_C) > 0.15 * (high - low)]
        _mark_divergence(ax, [value for _, value in points] + away)
    ax.set_xlabel("β (inverse temperature)")
    ax.set_ylabel(axis_label)
    return "upper left" if diverges else "best"


def _mark_divergence(ax, values: list) -> None:
    """The y-range of the finite ``values`` (the data, the exact curve away from beta_c),
    with room above for the legend (upper left) and the arrow (right of beta_c) that says
    the exact value diverges there."""
    values = [v for v in values if math.isfinite(v)]
    if not values:
        return
    bottom, top = min(values), max(values)
    span = top - bottom if top > bottom else max(abs(top), 1.0)
    ax.set_ylim(bottom - 0.08 * span, top + 0.45 * span)
    ax.annotate("exact → ∞ at β_c\n(log divergence)", xy=(BETA_C, 1.0),
                xycoords=("data", "axes fraction"), xytext=(10, -34),
                textcoords="offset points", fontsize=8, color="0.25",
                arrowprops={"arrowstyle": "->", "color": "0.25", "lw": 0.9})


def _error_panel(ax, rows, errors) -> None:
    """``|ours - exact|`` per observable on a log axis.  The line breaks where a row has
    no value (a derivative solve that did not converge: NaN); a row whose exact value is
    infinite (c at beta_c) has no error, and the label says so."""
    smallest = math.inf
    for (key, label), marker in zip(errors, "osD^v"):
        points, missing, infinite = [], False, False
        for r in rows:
            ours, exact = r.get(key), r.get(key + "_exact")
            if _finite(ours) and _finite(exact):
                floor = ROUNDOFF * max(1.0, abs(exact))
                points.append((r["beta"], max(abs(ours - exact), floor)))
            elif _finite(exact) and key in r:
                points.append((r["beta"], math.nan))
                missing = True
            infinite = infinite or (_finite(ours) and exact is not None
                                    and not _finite(exact))
        errors_found = [error for _, error in points if math.isfinite(error)]
        if errors_found:
            notes = [note for note, present in (("gaps: no value", missing),
                                                ("none at β_c: exact ∞", infinite)) if present]
            ax.plot(*zip(*points), marker + "-", ms=4, lw=1,
                    label=label + (f" ({'; '.join(notes)})" if notes else ""))
            smallest = min(smallest, *errors_found)
    ax.set_yscale("log")
    if smallest < 1e3 * ROUNDOFF:
        ax.axhline(ROUNDOFF, color="0.7", ls=":", lw=0.9)
    ax.set_xlabel("β (inverse temperature)")
    ax.set_ylabel("|ours − exact| (at least roundoff)")


def observables_figure(path, rows: list, *, title: str, label: str, panels: list,
                       errors: list, requested: dict | None = None):
    """Write the figure of ``rows`` (dicts with ``beta``, the observables and their
    ``*_exact`` values) to ``path``.

    ``panels``: ``(key, axis label, exact(beta), name of the exact solution)``, one panel
    each; ``errors``: ``(key, label)`` drawn as ``|row[key] - row[key + "_exact"]|`` on a
    log axis in the last panel; ``requested``: the row of a single run, highlighted among
    the betas computed around it.  Returns the matplotlib Figure.
    """
    fig = _figure(4.6 * (len(panels) + 1), 4.2)
    axes = fig.subplots(1, len(panels) + 1)
    rows = sorted(rows, key=lambda row: row["beta"])
    low, high = _beta_range([r["beta"] for r in rows])
    places = [_observable_panel(ax, rows, panel, label, requested, low, high)
              for ax, panel in zip(axes, panels)]
    _error_panel(axes[-1], rows, errors)
    for ax, place in zip(axes, places + ["best"]):
        ax.set_xlim(low, high)
        _mark_critical(ax, low, high)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc=place)
    fig.suptitle(title)
    fig.savefig(path, dpi=120)
    return fig


def blowup_figure(path, kind: str, rows: list, peers: list = (),
                  published: tuple | None = None):
    """The transform time per depth (``rows`` with ``depth`` and ``grad_ms``) on log axes.

    ``peers``: ``(label, depths, ms)`` curves measured in the same run; ``published``:
    ``(depth, ms, growth factor per layer, source)`` of a growth law reported elsewhere
    (drawn dotted and labelled as published, not measured here).  Returns the Figure.
    """
    fig = _figure(7.5, 4.8)
    ax = fig.subplots()
    depths = [r["depth"] for r in rows]
    ms = [r["grad_ms"] for r in rows]
    ax.loglog(depths, ms, "o-", color="C0", label="tenpy_ad ad.grad (measured)")
    if len(depths) > 1:
        guide = [ms[-1] * d / depths[-1] for d in depths]
        ax.loglog(depths, guide, "--", color="0.5", lw=1, label="∝ n (linear guide)")
    for (peer_label, peer_depths, peer_ms), color in zip(peers, ("C1", "C2", "C4")):
        ax.loglog(peer_depths, peer_ms, "s-", color=color, ms=4, label=peer_label)
    if published is not None:
        n0, ms0, factor, source = published
        ns = np.arange(max(2, n0 - 10), n0 + 9)
        ax.loglog(ns, ms0 * float(factor) ** (ns - n0), ":", color="C3",
                  label=f"{source}: ×{factor:g} per layer (published, not measured here)")
        ax.loglog([n0], [ms0], "*", color="C3", ms=12,
                  label=f"{source} at n = {n0} (published)")
    low = min(ms + [m for _, _, peer_ms in peers for m in peer_ms])
    ax.set_ylim(low / 3.0, 1e6)
    ax.set_xlabel("depth n (layers)")
    ax.set_ylabel("grad transform (ms)")
    ax.set_title(f"Traced ad.grad cost on the '{kind}' chain")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.savefig(path, dpi=120)
    return fig


__all__ = ["observables_figure", "blowup_figure", "image_formats"]
