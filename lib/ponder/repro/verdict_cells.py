"""How a ledger's verdicts read in the documents' generated blocks (:mod:`ponder.repro.readme`): the count line, why an
inconclusive row is inconclusive, and the mark of a committed ledger judged by another rule than this code's."""

import re

from ..ledger.rows import SHOWN as SHOWN_VERDICT
from ..ledger.rows import by_this_rule
from .verify import LEDGER

OTHER_RULE = " (*another rule*)"  # after a verdict judged by a rule other than this code's (:func:`by_this_rule`)


def rule_note(ledger_text: str, base: str, profile: str) -> str:
    """For a ledger judged by another rule (:func:`by_this_rule`), the sentence a block ends with: what the mark
    :data:`OTHER_RULE` means and what judges those verdicts again; empty for a ledger judged by this code's rule."""
    if by_this_rule(ledger_text):
        return ""
    return (
        f"\nVerdicts marked *another rule* were judged by the rule stated in the header of [the `{profile}` ledger]"
        f"({base}{LEDGER}), not by the one this code applies (`ponder.ledger.verdicts.RULE`, the rule under *How "
        f"claims are judged*); `make figures PROFILE={profile}` judges them again.\n"
    )


def tally_line(ledger_text: str) -> str:
    """The ledger's line that counts its verdicts (``"11 holds, 5 does not hold, ..."``), followed by its count
    per kind of row (``"By kind: paper claims ..."``) where the ledger has one, and for a ledger judged by another
    rule than this code's (:func:`by_this_rule`) a word that says so."""
    lines = ledger_text.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"^\d+ holds, \d+ does not hold, \d+ inconclusive, \d+ describe\.$", line):
            by_kind = [k for k in lines[i + 1 : i + 3] if k.startswith("By kind: ")]
            other = (
                []
                if by_this_rule(ledger_text)
                else ["Judged by another rule than this code's (the ledger's header states it)."]
            )
            return " ".join([line, *by_kind, *other])
    raise ValueError("the ledger has no line counting its verdicts")


# why an inconclusive row is: the first phrase of its evidence that says so -> the reason in words
UNDECIDED = (
    ("reference not converged", "a compared model did not converge"),
    ("outside the paper's regime", "outside the paper's regime"),
    ("the rule needs", "too few seeds"),
    ("within the noise", "within the noise"),
)


def verdict_with_reason(row: dict) -> str:
    """A ledger row's verdict cell, and for an inconclusive row why: ``inconclusive (within the noise at 3
    seeds; 7 would decide it)``, ``inconclusive (a compared model did not converge)``, ..."""
    verdict = row["verdict"]
    if verdict != "inconclusive":
        return verdict
    evidence = row.get("evidence", "")
    reason = next((why for phrase, why in UNDECIDED if phrase in evidence), None)
    if reason == "within the noise":
        seeds = re.findall(r"\(n=(\d+)\)", evidence)
        needed = re.findall(r"(\d+|more than [\d,]+|no number of) seeds would decide it", evidence)
        reason += f" at {max(map(int, seeds))} seeds" if seeds else ""
        reason += f"; {', '.join(dict.fromkeys(needed))} would decide it" if needed else ""
    return f"inconclusive ({reason})" if reason else verdict


def marked(verdict: str, ledger_text: str) -> str:
    """A verdict cell of ``ledger_text``, followed by :data:`OTHER_RULE` where the ledger was judged by another rule
    than this code's (:func:`by_this_rule`; a row that only describes has no verdict to mark)."""
    return verdict if verdict == SHOWN_VERDICT[None] or by_this_rule(ledger_text) else verdict + OTHER_RULE
