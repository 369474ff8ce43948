"""A small Markdown document for the app tests (AppTest and the browser test).

It carries injected markup in its text (a <script>, an <img onerror>, a Markdown link and
raw HTML) that must render as text, and it is shaped so that the small fixed-size chunkers
(sentence-5, fixed-512) break its table and split a pronoun from its antecedent while the
structure-aware ``recursive-1100+pp`` keeps them whole.
"""

from __future__ import annotations

INJECTED = (
    '<script>window.__pwned = 1; document.title = "PWNED";</script>'
    '<img src=x onerror="window.__pwned = 2; document.title = \'PWNED\'">'
)


def sample_markdown() -> str:
    intro = " ".join(
        f"The retention service stores record batch {i} for the audit team, and it encrypts every batch at rest."
        for i in range(1, 9)
    )
    rows = "\n".join(f"| R-{i:03d} | Customer invoices, series {i} | {i + 1} years | Finance archive {i} |"
                     for i in range(1, 31))
    later = " ".join(
        f"The Northwind Gateway forwards request group {i} to the billing cluster. It signs each request first."
        for i in range(1, 12)
    )
    return f"""# Northwind data handling policy

{INJECTED}

This policy explains how Northwind keeps, protects and deletes records. [click me](javascript:alert(1)) and
<b>bold?</b> **markdown?** must show as typed text.

## Retention

Why records are kept.

{intro}

## Retention schedule

The schedule below lists every record series and how long it is kept.

| Record | Contents | Period | Location |
|---|---|---|---|
{rows}

## Gateway

How requests travel.

{later}

## Deletion

The deletion job runs every night. It removes expired batches and writes a signed receipt for the auditors.
The auditors keep the receipts for six years, and they check a random sample every quarter.
"""
