"""A method of one's own (``ponder.studies.survey.methods``), end to end: the worked example of docs/development.md.

Halting at convergence (:mod:`ponder.studies.survey.methods.converged`) is trained on C-PVR at the smoke sizes beside
the papers'
UT+ACT, its claims judged by the ledger's rule and written into a ledger, touching no module of the harness."""

import torch

from ponder.ledger import rows as ledger
from ponder.ledger.verdicts import VERDICTS
from ponder.models.classifier import LayerStack
from ponder.runner import runs
from ponder.studies.survey.methods import converged


class Still(torch.nn.Module):
    """A core whose step moves the state by ``moves[t]`` (relative, on every token)."""

    def __init__(self, moves):
        super().__init__()
        self.moves, self.max_steps = moves, len(moves)

    def step(self, h, t):
        return h * (1 + self.moves[t])


def test_an_example_halts_at_the_first_step_its_state_moves_less_than_the_tolerance():
    h = torch.ones(2, 3, 4)
    out = converged.ConvergedDepth(0.05)(Still([0.5, 0.01, 0.5, 0.5]), h)
    assert out.steps.tolist() == [2.0, 2.0]  # step 2 moved 1 % and halted it: its state is the one after step 2
    torch.testing.assert_close(out.state, h * 1.5 * 1.01)
    assert converged.ConvergedDepth(0.05)(LayerStack(4, 2, 3), torch.randn(2, 3, 4)).steps.max() <= 3


def test_a_tolerance_that_would_never_halt_is_refused():
    try:
        converged.ConvergedDepth(0.0)
    except ValueError as error:
        assert "tolerance" in str(error)
    else:
        raise AssertionError("tolerance 0 was accepted")


def test_the_methods_runs_are_keyed_by_its_own_code():
    assert "ponder.studies.survey.methods.converged" in runs.import_closure(
        ("ponder.studies.survey.methods.converged",)
    )


def test_the_worked_example_trains_beside_ut_act_and_its_claims_are_judged_into_a_ledger(tmp_path, monkeypatch):
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("PONDER_FIGURES", str(tmp_path / "figures"))
    claims = converged.claims("smoke", seeds=(0, 1, 2))
    assert [c.target for c in claims] == ["mine-1", "mine-1"] and {c.kind for c in claims} == {"method claim"}
    assert all(c.verdict.verdict in VERDICTS and "(n=3)" in c.verdict.noise for c in claims)
    ledger.record(claims, "smoke")
    text = ledger.gather("smoke").read_text()
    assert "| mine-1 | halting at convergence uses fewer steps on the training hops than UT+ACT |" in text
    assert "method claims" in text  # counted apart in the tally by kind
