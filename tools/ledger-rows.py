"""Put a committed ledger's rows back into the run cache, for the targets whose notebooks have not run here.

    python tools/ledger-rows.py PROFILE [REF]      (REF: the commit whose ledger to read, default HEAD)

The `gpu` ledger is made a few notebooks at a time, on machines lent for minutes, each starting from a
fresh checkout whose ``results/gpu/claims/`` is empty: gathered there, the ledger would hold only the
rows of that call's notebooks and drop the rest. Before such a call (``tools/gpu-slice.sh`` runs this
first), every target that has rows in ``figures/<profile>/CLAIMS.md`` at REF and no file in
``results/<profile>/claims/`` gets its rows back as they were committed, with the code version the
ledger's header names: :func:`ponder.claims.gather` then marks them *older* unless that code is the
current one. A row already marked *older* in that ledger came from code before the header's, which the
ledger does not name; it keeps the mark (its code is written ``older than <header's code>``). Targets
with a file of their own are left alone: what a notebook recorded wins over what was committed.
"""
import re
import sys
from pathlib import PurePosixPath

import ponder  # noqa: F401  (pins the numerics before torch)
from ponder.claims import OLDER, SHOWN
from ponder.paths import ROOT, claims_dir, profile_folder, seed_tag
from ponder.profiles import check_profile
from ponder.runs import write_json
from ponder.verify import committed, ledger

HEADER = re.compile(r"^# Claims ledger \((?P<profile>\S+) profile, .*, code (?P<code>[^)]+)\)$", re.MULTILINE)
VERDICTS = {cell: verdict for verdict, cell in SHOWN.items()}  # a verdict's cell -> the verdict


def committed_rows(text: str) -> dict[str, list[dict]]:
    """The rows of a ledger's text per target id, as :func:`ponder.claims.claim` records them."""
    header = HEADER.search(text)
    if header is None:
        raise ValueError("not a claims ledger: no '# Claims ledger (... code ...)' header")
    code, profile = header["code"], header["profile"]
    found = {}
    for target, cells in ledger(text).items():
        found[target] = []
        for cell in cells:
            shown = cell["verdict"]
            older = shown.endswith(OLDER)
            found[target].append({
                "id": target, "claim": cell["claim"], "paper": cell["paper"], "ours": cell["ours"],
                "verdict": VERDICTS[shown.removesuffix(OLDER)], "noise": cell["evidence"], "profile": profile,
                "code": f"older than {code}" if older else code,
            })
    return found


def restore(profile: str, ref: str = "HEAD") -> list[str]:
    """Write the committed rows of every target of ``profile`` without a claims file; return their ids."""
    check_profile(profile)
    path = PurePosixPath("figures", seed_tag(), profile_folder(profile), "CLAIMS.md")  # where make figures writes it in the repository
    text = committed(ROOT, ref, str(path))
    if text is None:
        return []
    restored = []
    for target, rows in committed_rows(text.decode()).items():
        out = claims_dir(profile) / f"{target}.json"
        if not out.exists():
            write_json(out, rows)
            restored.append(target)
    return restored


if __name__ == "__main__":
    if not 2 <= len(sys.argv) <= 3:
        sys.exit(__doc__)
    ids = restore(*sys.argv[1:])
    print(f"restored the committed rows of {len(ids)} target(s): {', '.join(ids) or 'none'}")
