"""Round-off checks printed as bounds, so that regenerating a lesson gives the same bytes anywhere.

A difference that is zero up to rounding (2.2e-16 on one CPU, 4.4e-16 or -2.8e-17 on another)
only says "rounding error"; printed raw, it turns every regeneration on another machine into a
diff of the committed notebooks. Lessons print ``below(gap, 1e-12)`` instead: "below 1e-12", the
same on every machine. A value that is not below its bound is news, not round-off, so it is
printed as itself.
"""


def below(value: float, bound: float) -> str:
    """``"below 1e-12"`` when ``abs(value) < bound``, else the value and the bound it misses."""
    bound_text = f"{bound:.0e}".replace("e-0", "e-")
    if abs(value) < bound:
        return f"below {bound_text}"
    return f"{value:.1e} (not below {bound_text})"
