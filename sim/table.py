"""Plain-text tables for the CLI and the demo summary."""

__all__ = ["print_table"]


def print_table(rows, columns, missing=""):
    """Left-aligned columns with a dashed rule under the header; absent cells print ``missing``."""
    widths = [max(len(str(c)), *(len(str(r.get(c, missing))) for r in rows)) for c in columns]
    print("  ".join(str(c).ljust(w) for c, w in zip(columns, widths)).rstrip())
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(str(r.get(c, missing)).ljust(w) for c, w in zip(columns, widths)).rstrip())
